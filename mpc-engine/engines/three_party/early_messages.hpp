// Layer and abort messages that arrive before their batch has started on this
// server: a neighbour may already be a layer into a batch whose header this server
// has not read yet. Kept (bounded) until the batch starts, then handed to it.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "node/peer_links.hpp"

namespace mpc::three_party_engine {

struct BatchTag {
  std::uint64_t epoch = 0;
  std::uint32_t sequence = 0;
  bool operator==(const BatchTag&) const = default;
};

// The batch a layer or abort frame belongs to, read without a full decode; empty for
// anything else (the full decode happens where the message is used).
std::optional<BatchTag> batch_tag_of(const std::vector<std::uint8_t>& frame);

class EarlyMessages {
 public:
  // A garbled Kerberos batch streams megabytes of tables in frames of up to 1 MiB, and
  // they may all arrive before the batch starts here; the oldest go first past either bound.
  static constexpr std::size_t kMaxMessages = 8192;
  static constexpr std::size_t kMaxBytes = std::size_t{256} << 20;
  void keep(node::PeerEnvelope envelope);
  // Removes and returns the messages of `tag`; drops those of earlier batches of the same
  // epoch and of other epochs (a restarted leader never continues an old epoch).
  std::vector<node::PeerEnvelope> take(const BatchTag& tag);

 private:
  std::deque<node::PeerEnvelope> messages_;
  std::size_t bytes_ = 0;
};

}  // namespace mpc::three_party_engine
