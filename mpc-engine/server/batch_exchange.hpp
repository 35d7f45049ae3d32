// LayerExchange for one batch over the server's peer links: tags every layer
// message with (epoch, sequence, layer), drops stale ones, keeps batch headers
// that arrive early for later, and turns silence or an abort into PeerError.
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <vector>

#include "common/log.hpp"
#include "protocol/rss3/layer_exchange.hpp"
#include "server/peer_links.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::server {

// Layer and abort messages that arrive before their batch has started here: a
// neighbour may be a layer ahead, and the leader's header and its first layer
// message can arrive together. Bounded; messages of batches already past are purged.
class EarlyMessages {
 public:
  static constexpr std::size_t kMaxMessages = 256;
  void keep(PeerEnvelope envelope);
  // Removes and returns the first kept message that `select` accepts; drops everything
  // of the same epoch with a lower sequence, or of another epoch.
  template <typename Select>
  std::optional<PeerEnvelope> take(std::uint64_t epoch, std::uint32_t sequence, Select&& select);
  void purge_before(std::uint64_t epoch, std::uint32_t sequence);

 private:
  std::deque<PeerEnvelope> messages_;
};

class BatchExchange final : public rss3::LayerExchange {
 public:
  BatchExchange(PeerLinks& links, int party, std::uint64_t epoch, std::uint32_t sequence,
                std::chrono::milliseconds timeout, std::deque<wire::BatchHeader>& early_batches,
                EarlyMessages& early_messages, const Logger& log);
  void exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing, std::span<std::uint8_t> incoming) override;

 private:
  PeerLinks& links_;
  int party_;
  std::uint64_t epoch_;
  std::uint32_t sequence_;
  std::chrono::milliseconds timeout_;
  // Returns true when `envelope` is this layer's message (copied into `incoming`);
  // keeps messages of later layers or batches; throws on an abort of this batch.
  bool consume(PeerEnvelope& envelope, std::uint32_t layer, std::span<std::uint8_t> incoming, bool from_stash);

  std::deque<wire::BatchHeader>& early_batches_;
  EarlyMessages& early_messages_;
  const Logger& log_;
  std::vector<std::uint8_t> frame_;
};

}  // namespace mpc::server
