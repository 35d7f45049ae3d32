#include "engines/three_party/early_messages.hpp"

#include "wire/peer_messages.hpp"

namespace mpc::three_party_engine {

std::optional<BatchTag> batch_tag_of(const std::vector<std::uint8_t>& frame) {
  // version | type | u64 epoch | u32 sequence, little-endian (peer_messages.hpp)
  if (frame.size() < 14 || (frame[1] != static_cast<std::uint8_t>(wire::PeerMessageType::Layer) &&
                            frame[1] != static_cast<std::uint8_t>(wire::PeerMessageType::Abort)))
    return std::nullopt;
  BatchTag tag;
  for (int i = 9; i >= 2; --i) tag.epoch = (tag.epoch << 8) | frame[static_cast<std::size_t>(i)];
  for (int i = 13; i >= 10; --i) tag.sequence = (tag.sequence << 8) | frame[static_cast<std::size_t>(i)];
  return tag;
}

void EarlyMessages::keep(node::PeerEnvelope envelope) {
  if (!batch_tag_of(envelope.data)) return;
  bytes_ += envelope.data.size();
  messages_.push_back(std::move(envelope));
  while (messages_.size() > kMaxMessages || bytes_ > kMaxBytes) {
    bytes_ -= messages_.front().data.size();
    messages_.pop_front();
  }
}

std::vector<node::PeerEnvelope> EarlyMessages::take(const BatchTag& tag) {
  std::vector<node::PeerEnvelope> taken;
  std::deque<node::PeerEnvelope> kept;
  for (auto& envelope : messages_) {
    const auto own = batch_tag_of(envelope.data);
    if (!own || own->epoch != tag.epoch || own->sequence < tag.sequence) {
      bytes_ -= envelope.data.size();
      continue;
    }
    if (*own == tag) {
      bytes_ -= envelope.data.size();
      taken.push_back(std::move(envelope));
    } else {
      kept.push_back(std::move(envelope));
    }
  }
  messages_ = std::move(kept);
  return taken;
}

}  // namespace mpc::three_party_engine
