#include "node/peer_links.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace mpc::node {

std::chrono::milliseconds connect_grace(std::chrono::milliseconds peer_timeout) {
  return std::min(std::chrono::milliseconds(500), peer_timeout / 2);
}

std::string peer_role(int party) { return "peer" + std::to_string(party + 1); }

transport::LinkOptions peer_link_options() {
  transport::LinkOptions options;
  options.send_high_water_mark = 64;
  options.receive_high_water_mark = 64;
  options.max_message_bytes = 256LL << 20;
  // A batch worker's link to a restarted peer may sit idle in its reconnect back-off; short
  // retries let its first send after the restart find it connected within connect_grace.
  options.reconnect_interval_max = std::chrono::milliseconds(250);
  return options;
}

PeerLinks::PeerLinks(transport::Context& context, const settings::ServerSettings& settings,
                     const transport::CurveKeyPair& own)
    : own_party_(settings.party),
      connect_grace_(connect_grace(settings.limits.peer_timeout)) {
  for (const auto& peer : settings.peers) context.allow("peers", peer.public_key, peer_role(peer.party));
  listener_ = std::make_unique<transport::Listener>(context, settings.peer_endpoint, own, "peers", peer_link_options());
  for (const auto& peer : settings.peers)
    connections_[static_cast<std::size_t>(peer.party)] =
        std::make_unique<transport::Connection>(context, peer.endpoint, peer.public_key, own, peer_link_options());
}

bool PeerLinks::send_to(int party, std::span<const std::uint8_t> frame) {
  if (party < 0 || party > 2 || party == own_party_) throw Error(Component::Server, "send to invalid party");
  return connections_[static_cast<std::size_t>(party)]->send_until(frame, std::chrono::steady_clock::now() +
                                                                                 connect_grace_);
}

bool PeerLinks::try_send_to(int party, std::span<const std::uint8_t> frame) {
  if (party < 0 || party > 2 || party == own_party_ || !connections_[static_cast<std::size_t>(party)])
    throw Error(Component::Server, "send to invalid party");
  return connections_[static_cast<std::size_t>(party)]->send(frame);
}

std::uint64_t PeerLinks::sessions_lost(int party) {
  if (party < 0 || party > 2 || !connections_[static_cast<std::size_t>(party)]) return 0;
  return connections_[static_cast<std::size_t>(party)]->sessions_lost();
}

std::optional<PeerEnvelope> PeerLinks::receive(std::chrono::milliseconds timeout) {
  auto message = listener_->receive(timeout);
  if (!message) return std::nullopt;
  PeerEnvelope envelope;
  for (int party = 0; party < 3; ++party)
    if (party != own_party_ && message->role == peer_role(party)) envelope.from_party = party;
  if (envelope.from_party < 0) return PeerEnvelope{};  // admitted key with an unexpected role: drop
  envelope.data = std::move(message->data);
  return envelope;
}

}  // namespace mpc::node
