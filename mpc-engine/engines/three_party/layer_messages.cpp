#include "engines/three_party/layer_messages.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <variant>

#include "common/error.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::three_party_engine {

namespace {

// The pending message of `layer` from `previous`, or end(); drops what can never be taken.
std::deque<node::PeerEnvelope>::iterator find_layer(std::deque<node::PeerEnvelope>& pending, int previous, std::uint32_t layer,
                                              std::span<const std::uint8_t>& payload) {
  for (auto it = pending.begin(); it != pending.end();) {
    wire::PeerMessage message;
    try {
      message = wire::decode_peer_message(it->data);
    } catch (const FormatError&) {
      it = pending.erase(it);
      continue;
    }
    if (const auto* abort = std::get_if<wire::AbortNotice>(&message)) {
      const std::string detail =
          "party " + std::to_string(it->from_party + 1) + " aborted the batch: " + abort->detail;
      pending.clear();
      // A refusal for failed verification stays one at every server, so the client hears the
      // same reason from all three.
      if (abort->reason == static_cast<std::uint16_t>(wire::Status::VerificationFailed))
        throw VerificationError(Component::Server, detail, "abort_notice", it->from_party);
      if (abort->reason == static_cast<std::uint16_t>(wire::Status::Regrouping))
        throw RetryableError(Component::Server, detail);
      throw PeerError(Component::Server, detail);
    }
    const auto* received = std::get_if<wire::DecodedLayer>(&message);
    if (received == nullptr || it->from_party != previous || received->header.layer < layer) {
      it = pending.erase(it);  // not a layer message of the previous party, or a layer already past
      continue;
    }
    if (received->header.layer > layer) {
      ++it;  // a neighbour one layer ahead: kept for the next call
      continue;
    }
    payload = received->payload;
    return it;
  }
  return pending.end();
}

}  // namespace

bool take_stream_chunk(std::deque<node::PeerEnvelope>& pending, int previous, std::uint32_t index,
                       std::vector<std::uint8_t>& frame, std::size_t& from) {
  std::span<const std::uint8_t> payload;
  const auto it = find_layer(pending, previous, index, payload);
  if (it == pending.end()) return false;
  from = payload.empty() ? it->data.size() : static_cast<std::size_t>(payload.data() - it->data.data());
  frame = std::move(it->data);  // the payload stays where it is
  pending.erase(it);
  return true;
}

bool take_layer_envelope(std::deque<node::PeerEnvelope>& pending, int previous, std::uint32_t layer,
                         std::size_t bytes, node::PeerEnvelope& taken, std::span<const std::uint8_t>& payload) {
  std::span<const std::uint8_t> found;
  const auto it = find_layer(pending, previous, layer, found);
  if (it == pending.end()) return false;
  if (found.size() != bytes)
    throw PeerError(Component::Server, "layer message of " + std::to_string(found.size()) + " bytes from party " +
                                           std::to_string(previous + 1) + ", expected " + std::to_string(bytes));
  taken = std::move(*it);  // the bytes stay where they are: found still points at them
  pending.erase(it);
  payload = found;
  return true;
}

bool take_layer_message(std::deque<node::PeerEnvelope>& pending, int previous, std::uint32_t layer,
                        std::span<std::uint8_t> incoming) {
  node::PeerEnvelope taken;
  std::span<const std::uint8_t> payload;
  if (!take_layer_envelope(pending, previous, layer, incoming.size(), taken, payload)) return false;
  if (!incoming.empty()) std::memcpy(incoming.data(), payload.data(), incoming.size());
  return true;
}

}  // namespace mpc::three_party_engine
