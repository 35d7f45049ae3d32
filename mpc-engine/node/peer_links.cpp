#include "node/peer_links.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/fault_injection.hpp"
#include "wire/peer_messages.hpp"

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
                     const transport::CurveKeyPair& own, const Logger& log)
    : own_party_(settings.party),
      log_(log),
      versioned_(settings.protocol == settings::Protocol::Rss3),
      wire_version_(wire::kPeerProtocolVersion),
      connect_grace_(connect_grace(settings.limits.peer_timeout)) {
#if defined(MPC_FAULT_INJECTION)
  // A server of an older release: it writes version N where this one writes its own, reads
  // only frames of version N, and, as releases did before versions were compared, hears any
  // frame from a peer and goes on sending to it.
  if (const auto version = fault::armed("peer-protocol")) {
    wire_version_ = static_cast<std::uint8_t>(*version);
    versioned_ = false;
  }
#endif
  for (const auto& peer : settings.peers) context.allow("peers", peer.public_key, peer_role(peer.party));
  listener_ = std::make_unique<transport::Listener>(context, settings.peer_endpoint, own, "peers", peer_link_options());
  for (const auto& peer : settings.peers)
    connections_[static_cast<std::size_t>(peer.party)] =
        std::make_unique<transport::Connection>(context, peer.endpoint, peer.public_key, own, peer_link_options());
}

namespace {

#if defined(MPC_FAULT_INJECTION)
// The frame as the test server's older release writes it (the constructor).
std::vector<std::uint8_t> as_written(std::span<const std::uint8_t> frame, std::uint8_t version) {
  std::vector<std::uint8_t> out(frame.begin(), frame.end());
  if (!out.empty()) out[0] = version;
  return out;
}
#endif

}  // namespace

bool PeerLinks::send_to(int party, std::span<const std::uint8_t> frame) {
  if (party < 0 || party > 2 || party == own_party_) throw Error(Component::Server, "send to invalid party");
  if (left_out(party)) return false;
#if defined(MPC_FAULT_INJECTION)
  std::vector<std::uint8_t> written;
  if (wire_version_ != wire::kPeerProtocolVersion) {
    written = as_written(frame, wire_version_);
    frame = written;
  }
#endif
  // Waiting out the grace for a server killed a moment ago would hold the shell's loop, and
  // with it the switch to two-party service, at each send: the liveness check ends the wait.
  std::function<bool()> alive;
  if (alive_) alive = [this, party] { return alive_(party); };
  const auto deadline = std::chrono::steady_clock::now() + connect_grace_;
  if (connections_[static_cast<std::size_t>(party)]->send_until(frame, deadline, alive)) return true;
  // Each of these held the shell's loop for the whole grace: an operator sees why a switch to
  // two-party service or a job came late.
  if (std::chrono::steady_clock::now() >= deadline)
    log_.warn("peer send waited out the connect grace",
              {{"party", party + 1}, {"grace_ms", static_cast<std::uint64_t>(connect_grace_.count())}});
  return false;
}

bool PeerLinks::try_send_to(int party, std::span<const std::uint8_t> frame) {
  if (party < 0 || party > 2 || party == own_party_ || !connections_[static_cast<std::size_t>(party)])
    throw Error(Component::Server, "send to invalid party");
  if (left_out(party)) return false;
#if defined(MPC_FAULT_INJECTION)
  if (wire_version_ != wire::kPeerProtocolVersion)
    return connections_[static_cast<std::size_t>(party)]->send(as_written(frame, wire_version_));
#endif
  return connections_[static_cast<std::size_t>(party)]->send(frame);
}

bool PeerLinks::speaks_own_protocol(int party, std::vector<std::uint8_t>& frame) {
#if defined(MPC_FAULT_INJECTION)
  // The older release reads its own version as this code's, and no other.
  if (wire_version_ != wire::kPeerProtocolVersion && !frame.empty())
    frame[0] = frame[0] == wire_version_ ? wire::kPeerProtocolVersion : 0;
#endif
  if (!versioned_) return true;
  const std::uint8_t version = frame.empty() ? 0 : frame[0];
  std::uint8_t& other = other_protocol_[static_cast<std::size_t>(party)];
  if (version == wire::kPeerProtocolVersion) {
    if (other != 0)
      log_.info("peer speaks this server's peer protocol again",
                {{"party", party + 1}, {"protocol", std::uint64_t{wire::kPeerProtocolVersion}}});
    other = 0;
    return true;
  }
  // An empty frame or version 0 is malformed, not another release: the decoders drop it.
  if (version == 0) return true;
  if (other != version)
    log_.warn("peer speaks another peer protocol: left out until both run the same release",
              {{"party", party + 1},
               {"its_protocol", std::uint64_t{version}},
               {"this_protocol", std::uint64_t{wire::kPeerProtocolVersion}}});
  other = version;
  return false;
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
  if (!speaks_own_protocol(envelope.from_party, envelope.data)) return PeerEnvelope{};
  return envelope;
}

}  // namespace mpc::node
