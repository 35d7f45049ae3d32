// The server's links to the other two servers: one CURVE listener that the
// others connect to, and one outgoing connection to each of them. Senders are
// identified by the key they authenticated with, never by anything they say.
//
// In a three-server cluster every peer frame starts with wire::kPeerProtocolVersion. A peer
// whose frames carry another version (a server of another release, during a rolling
// upgrade) is left out as if it were down: its frames are dropped here unread, so the shell
// never hears it, and nothing is sent to it, so that it stops hearing this server too. The
// two servers of one release then serve in two-party service (membership.hpp). The first
// frame of this server's version from that peer ends it.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/log.hpp"
#include "settings/server_settings.hpp"
#include "transport/zmq_link.hpp"

namespace mpc::node {

struct PeerEnvelope {
  int from_party = -1;
  std::vector<std::uint8_t> data;
};

class PeerLinks {
 public:
  PeerLinks(transport::Context& context, const settings::ServerSettings& settings, const transport::CurveKeyPair& own,
            const Logger& log);
  // False when no authenticated connection to that party came up within the connect
  // grace (a peer that has just started or restarted is still handshaking), or when the
  // party speaks another peer protocol. The grace is waited out only while the liveness
  // check (below) says the party is alive: for one that went away a send fails at once.
  bool send_to(int party, std::span<const std::uint8_t> frame);
  // Whether a party whose connection is down is worth waiting for (the shell asks its
  // membership: heard since its session was last lost). Without one, every party is. Sends
  // run on the shell's thread, so the check does too.
  void check_liveness_with(std::function<bool(int party)> alive) { alive_ = std::move(alive); }
  // Without waiting: false when the connection is not up or its queue is full, or when the
  // party speaks another peer protocol.
  bool try_send_to(int party, std::span<const std::uint8_t> frame);
  // A frame of a party left out (another peer protocol) comes back with from_party -1.
  std::optional<PeerEnvelope> receive(std::chrono::milliseconds timeout);
  // The peer protocol version of a party's last frame when it is not this server's; 0 otherwise.
  std::uint8_t other_protocol(int party) const { return other_protocol_[static_cast<std::size_t>(party)]; }
  void* listener_socket() const { return listener_->native(); }
  // Sessions to that party lost so far (it went away or restarted): a change is the fastest
  // sign that a peer is down (transport::Connection::sessions_lost).
  std::uint64_t sessions_lost(int party);

 private:
  bool left_out(int party) const { return other_protocol_[static_cast<std::size_t>(party)] != 0; }
  // Whether the frame from `party` speaks this server's peer protocol; notes a change.
  bool speaks_own_protocol(int party, std::vector<std::uint8_t>& frame);

  int own_party_;
  const Logger& log_;
  bool versioned_;  // a three-server cluster: every frame carries the peer protocol version
  std::uint8_t wire_version_;  // kPeerProtocolVersion, except in the test server (peer_links.cpp)
  std::array<std::uint8_t, 3> other_protocol_{};
  std::chrono::milliseconds connect_grace_;
  std::function<bool(int)> alive_;
  std::unique_ptr<transport::Listener> listener_;
  std::array<std::unique_ptr<transport::Connection>, 3> connections_;
};

std::string peer_role(int party);  // "peer1".."peer3" for 0-based party 0..2

// How long a send waits for a connection that is still coming up (a peer that has just
// started or restarted is still handshaking) before the peer counts as unreachable.
std::chrono::milliseconds connect_grace(std::chrono::milliseconds peer_timeout);

// Link options for server-to-server connections: a batch's layer messages are a few MB
// and the queue must hold a few of them.
transport::LinkOptions peer_link_options();

}  // namespace mpc::node
