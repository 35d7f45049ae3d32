#include "client/server_channel.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace mpc::client {
namespace {

// A data link's handshake may take this long at most (two round trips and three X25519 on
// each side; a server far away): past it, the requests go over CurveZMQ until the next try.
constexpr std::chrono::milliseconds kLinkHandshakeLimit{200};
// Clients' links carry no lanes; the number only has to be the same on every connect.
constexpr std::uint32_t kClientChannel = 0;

}  // namespace

ServerChannel::ServerChannel(transport::Context& context, const settings::ServerEndpoint& server,
                             const transport::CurveKeyPair& own, const transport::LinkOptions& options)
    : server_(server),
      own_(own),
      connection_(std::make_unique<transport::Connection>(context, server.endpoint, server.public_key, own, options)) {}

void ServerChannel::check_link() {
  if (!link_) return;
  // Anything to read before a request is sent is a late answer to an earlier one, or the
  // server closing the link (it restarted: the read fails): a closed link is replaced before
  // it loses a request.
  try {
    std::vector<std::uint8_t> stale;
    while (link_->receive(stale, Clock::now())) {
    }
  } catch (const PeerError&) {
    link_.reset();
  }
}

void ServerChannel::prepare(bool small_answer, Clock::time_point deadline) {
  if (!small_answer || server_.data_endpoint.empty()) return;
  check_link();
  if (link_) return;
  const auto now = Clock::now();
  if (now < link_retry_after_ || now >= deadline) return;
  // A server CurveZMQ cannot reach now is not worth a connect that may wait out its handshake
  // limit (a host down answers no SYN): the link waits for the session.
  if (!connection_->session_up()) return;
  transport::DataLinkOptions options;
  options.handshake_timeout = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now),
                                         std::chrono::milliseconds(1), kLinkHandshakeLimit);
  try {
    link_ = transport::DataLink::connect(server_.data_endpoint, own_, server_.public_key, kClientChannel, options);
    failed_connects_ = 0;
  } catch (const Error& error) {
    link_retry_after_ = Clock::now() + std::min(kLinkRetryPause * (1 << std::min(failed_connects_, 5)),
                                                kLinkRetryPauseMax);
    ++failed_connects_;
    if (!last_warned_ || Clock::now() - *last_warned_ >= std::chrono::minutes(1)) {
      last_warned_ = Clock::now();
      Logger("client").warn("data link unavailable: requests go by CurveZMQ until it is back",
                            {{"endpoint", server_.data_endpoint}, {"error", error.what()}});
    }
  }
}

std::optional<ServerChannel::Carrier> ServerChannel::send(std::span<const std::uint8_t> frame, bool small_answer,
                                                            Clock::time_point deadline) {
  if (small_answer && link_) {
    const std::uint64_t before = losses(Carrier::DataLink);
    try {
      link_->send({frame}, deadline);
      last_carrier_ = Carrier::DataLink;
      losses_before_ = before;
      return Carrier::DataLink;
    } catch (const PeerError&) {
      link_.reset();  // nothing of the request went out whole: CurveZMQ carries it instead
      link_retry_after_ = Clock::now() + kLinkRetryPause;
    }
  }
  const std::uint64_t before = losses(Carrier::CurveZmq);
  if (!connection_->send(frame)) return std::nullopt;
  last_carrier_ = Carrier::CurveZmq;
  losses_before_ = before;
  return Carrier::CurveZmq;
}

std::uint64_t ServerChannel::sessions_lost() { return connection_->sessions_lost() + links_lost_; }

std::uint64_t ServerChannel::losses(Carrier carrier) {
  return carrier == Carrier::DataLink ? links_lost_ : connection_->sessions_lost();
}

bool ServerChannel::last_request_lost() { return losses(last_carrier_) != losses_before_; }

std::optional<std::vector<std::uint8_t>> ServerChannel::receive(Carrier carrier) {
  if (carrier == Carrier::CurveZmq) return connection_->receive(std::chrono::milliseconds(0));
  if (!link_) return std::nullopt;
  try {
    std::vector<std::uint8_t> frame;
    if (link_->receive(frame, Clock::now())) return frame;
  } catch (const PeerError&) {
    // The server went away (or a frame failed authentication) with requests on the link.
    link_.reset();
    ++links_lost_;
  }
  return std::nullopt;
}

}  // namespace mpc::client
