// An in-process LayerExchange ring for three parties running in three threads: party i's
// messages go to party i+1's mailbox. Used by unit tests, benchmarks and the server's
// start-up self-test (evaluate_three_parties). Never blocks longer than its timeout:
// a missing, out-of-order or wrong-sized message, or an abort(), raises PeerError.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "protocol/rss3/layer_exchange.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::rss3 {

class MemoryRing {
 public:
  explicit MemoryRing(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  ~MemoryRing();
  MemoryRing(const MemoryRing&) = delete;
  MemoryRing& operator=(const MemoryRing&) = delete;

  // The exchange endpoint of party 0, 1 or 2 (owned by the ring).
  LayerExchange& endpoint(int party);

  // Wakes every waiting party with PeerError, and makes every later exchange fail.
  void abort() noexcept;
  bool aborted() const noexcept;

 private:
  struct Message {
    std::uint32_t layer;
    std::vector<std::uint8_t> bytes;
  };
  class Endpoint;
  friend class Endpoint;

  void post(int to, std::uint32_t layer, std::span<const std::uint8_t> bytes);
  // The next message for `party`, which must be of `layer` and `bytes` long.
  Message take(int party, std::uint32_t layer, std::size_t bytes);

  std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  bool aborted_ = false;
  std::array<std::deque<Message>, kParties> mailboxes_;  // mailbox i: messages from party i-1
  std::array<std::unique_ptr<Endpoint>, kParties> endpoints_;
};

}  // namespace mpc::rss3
