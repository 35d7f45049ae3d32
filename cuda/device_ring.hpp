// cuda/device_ring.hpp: the host side of a DeviceRing (cuda_evaluator.hpp): mailboxes in
// which the evaluators of one device hand each other, per layer, where a message lies in
// device memory and the GPU event after which it is complete, and receipts saying after
// which event the reader is done with it. No GPU calls here: events travel as opaque
// handles, the evaluator records and waits on them. Every wait is bounded by the ring's
// timeout and ends with PeerError on abort.
//
// Handshake per layer L of generation g (a party's g-th evaluation on the ring):
//   party i:      post(i, g, L, message, ready)          after enqueuing the kernels that write it
//   party i + 1:  take(i + 1, g, L) -> message, ready    waits on `ready` on its stream, reads it
//   party i + 1:  acknowledge(i + 1, g, L, consumed)     after enqueuing the kernels that read it
//   party i:      receipt(i, g, L) -> consumed           waits on `consumed` before reusing the buffer
// A party ends an evaluation only after the receipts of all its layers: then every wait on
// its events has been issued, and the next generation may record them again.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "cuda/cuda_evaluator.hpp"

namespace mpc::cuda {

struct DeviceRing::State {
  struct Message {
    std::uint64_t generation = 0;  // 0: nothing posted yet
    const std::uint8_t* data = nullptr;
    void* ready = nullptr;
  };
  struct Receipt {
    std::uint64_t generation = 0;
    void* consumed = nullptr;
  };

  State(int parties, std::chrono::milliseconds timeout);

  // The generation of party's next evaluation (1, 2, ...).
  std::uint64_t begin(int party);
  void post(int party, std::uint64_t generation, std::uint32_t layer, const std::uint8_t* data, void* ready);
  Message take(int party, std::uint64_t generation, std::uint32_t layer);
  void acknowledge(int party, std::uint64_t generation, std::uint32_t layer, void* consumed);
  Receipt receipt(int party, std::uint64_t generation, std::uint32_t layer);
  void abort() noexcept;
  bool aborted() const noexcept;

  const int parties;
  const std::chrono::milliseconds timeout;

 private:
  template <class Ready>
  void wait_for(std::unique_lock<std::mutex>& lock, Ready ready, const char* what);

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool aborted_ = false;
  std::vector<std::uint64_t> generations_;
  std::vector<std::vector<Message>> outbox_;   // [party][layer], posted by party
  std::vector<std::vector<Receipt>> receipts_;  // [party][layer], posted by party's successor
};

}  // namespace mpc::cuda
