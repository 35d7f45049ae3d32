// The server's links to the other two servers: one CURVE listener that the
// others connect to, and one outgoing connection to each of them. Senders are
// identified by the key they authenticated with, never by anything they say.
#pragma once

#include <array>
#include <chrono>
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
  PeerLinks(transport::Context& context, const settings::ServerSettings& settings, const transport::CurveKeyPair& own);
  // False when no authenticated connection to that party came up within the connect
  // grace (a peer that has just started or restarted is still handshaking).
  bool send_to(int party, std::span<const std::uint8_t> frame);
  // Without waiting: false when the connection is not up or its queue is full.
  bool try_send_to(int party, std::span<const std::uint8_t> frame);
  std::optional<PeerEnvelope> receive(std::chrono::milliseconds timeout);
  void* listener_socket() const { return listener_->native(); }
  // Sessions to that party lost so far (it went away or restarted): a change is the fastest
  // sign that a peer is down (transport::Connection::sessions_lost).
  std::uint64_t sessions_lost(int party);

 private:
  int own_party_;
  std::chrono::milliseconds connect_grace_;
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
