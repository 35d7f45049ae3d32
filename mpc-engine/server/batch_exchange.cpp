#include "server/batch_exchange.hpp"

#include <cstring>
#include <variant>

#include "common/error.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::server {

namespace {

struct Tag {
  std::uint64_t epoch;
  std::uint32_t sequence;
};

// The (epoch, sequence) of a layer or abort frame without a full decode; empty otherwise.
std::optional<Tag> tag_of(const std::vector<std::uint8_t>& frame) {
  if (frame.size() < 14 || (frame[1] != static_cast<std::uint8_t>(wire::PeerMessageType::Layer) &&
                            frame[1] != static_cast<std::uint8_t>(wire::PeerMessageType::Abort)))
    return std::nullopt;
  std::uint64_t epoch = 0;
  for (int i = 9; i >= 2; --i) epoch = (epoch << 8) | frame[static_cast<std::size_t>(i)];
  std::uint32_t sequence = 0;
  for (int i = 13; i >= 10; --i) sequence = (sequence << 8) | frame[static_cast<std::size_t>(i)];
  return Tag{epoch, sequence};
}

}  // namespace

void EarlyMessages::keep(PeerEnvelope envelope) {
  if (!tag_of(envelope.data)) return;
  if (messages_.size() == kMaxMessages) messages_.pop_front();
  messages_.push_back(std::move(envelope));
}

void EarlyMessages::purge_before(std::uint64_t epoch, std::uint32_t sequence) {
  std::erase_if(messages_, [&](const PeerEnvelope& envelope) {
    const auto tag = tag_of(envelope.data);
    return !tag || tag->epoch != epoch || tag->sequence < sequence;
  });
}

template <typename Select>
std::optional<PeerEnvelope> EarlyMessages::take(std::uint64_t epoch, std::uint32_t sequence, Select&& select) {
  purge_before(epoch, sequence);
  for (auto it = messages_.begin(); it != messages_.end(); ++it) {
    if (select(*it)) {
      PeerEnvelope found = std::move(*it);
      messages_.erase(it);
      return found;
    }
  }
  return std::nullopt;
}

BatchExchange::BatchExchange(PeerLinks& links, int party, std::uint64_t epoch, std::uint32_t sequence,
                             std::chrono::milliseconds timeout, std::deque<wire::BatchHeader>& early_batches,
                             EarlyMessages& early_messages, const Logger& log)
    : links_(links), party_(party), epoch_(epoch), sequence_(sequence), timeout_(timeout),
      early_batches_(early_batches), early_messages_(early_messages), log_(log) {}

bool BatchExchange::consume(PeerEnvelope& envelope, std::uint32_t layer, std::span<std::uint8_t> incoming,
                            bool from_stash) {
  const int previous = rss3::previous_party(party_);
  wire::PeerMessage message;
  try {
    message = wire::decode_peer_message(envelope.data);
  } catch (const FormatError& error) {
    log_.warn("malformed peer message", {{"from", envelope.from_party + 1}, {"error", error.what()}});
    return false;
  }
  if (auto* batch = std::get_if<wire::BatchHeader>(&message)) {
    if (envelope.from_party == 0) early_batches_.push_back(std::move(*batch));
    return false;
  }
  if (auto* abort = std::get_if<wire::AbortNotice>(&message)) {
    if (abort->epoch == epoch_ && abort->sequence == sequence_)
      throw PeerError(Component::Server, "party " + std::to_string(envelope.from_party + 1) +
                                             " aborted the batch: " + abort->detail);
    if (!from_stash && abort->epoch == epoch_ && abort->sequence > sequence_) early_messages_.keep(std::move(envelope));
    return false;
  }
  const auto& received = std::get<wire::DecodedLayer>(message);
  const auto& header = received.header;
  const bool this_batch = header.epoch == epoch_ && header.sequence == sequence_;
  if (envelope.from_party != previous || (this_batch && header.layer != layer)) {
    if (!from_stash && this_batch && header.layer > layer) early_messages_.keep(std::move(envelope));
    return false;
  }
  if (!this_batch) {
    // A later batch (kept for then) or an earlier, aborted one (never used).
    if (!from_stash && (header.epoch != epoch_ || header.sequence > sequence_)) early_messages_.keep(std::move(envelope));
    return false;
  }
  if (received.payload.size() != incoming.size())
    throw PeerError(Component::Server, "layer message of " + std::to_string(received.payload.size()) +
                                           " bytes from party " + std::to_string(previous + 1) + ", expected " +
                                           std::to_string(incoming.size()));
  if (!incoming.empty()) std::memcpy(incoming.data(), received.payload.data(), incoming.size());
  return true;
}

void BatchExchange::exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing,
                             std::span<std::uint8_t> incoming) {
  const int next = rss3::next_party(party_);
  const int previous = rss3::previous_party(party_);
  frame_.resize(wire::kLayerHeaderBytes + outgoing.size());
  wire::write_layer_header({epoch_, sequence_, layer}, frame_);
  if (!outgoing.empty()) std::memcpy(frame_.data() + wire::kLayerHeaderBytes, outgoing.data(), outgoing.size());
  if (!links_.send_to(next, frame_))
    throw PeerError(Component::Server, "party " + std::to_string(next + 1) + " is unreachable");

  // A message that arrived before this batch started here.
  auto stashed = early_messages_.take(epoch_, sequence_, [&](const PeerEnvelope& envelope) {
    if (envelope.from_party == previous && envelope.data.size() >= wire::kLayerHeaderBytes &&
        envelope.data[1] == static_cast<std::uint8_t>(wire::PeerMessageType::Layer)) {
      std::uint32_t stashed_layer = 0;
      for (int i = 17; i >= 14; --i) stashed_layer = (stashed_layer << 8) | envelope.data[static_cast<std::size_t>(i)];
      return stashed_layer == layer;
    }
    return envelope.data.size() >= 2 && envelope.data[1] == static_cast<std::uint8_t>(wire::PeerMessageType::Abort);
  });
  if (stashed && consume(*stashed, layer, incoming, true)) return;

  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      throw PeerError(Component::Server, "no layer " + std::to_string(layer) + " message from party " +
                                             std::to_string(previous + 1) + " within " +
                                             std::to_string(timeout_.count()) + " ms");
    auto envelope = links_.receive(left);
    if (!envelope || envelope->from_party < 0) continue;
    if (consume(*envelope, layer, incoming, false)) return;
  }
}

}  // namespace mpc::server
