// One server's way in for a client: its CurveZMQ connection, and with a data_endpoint in the
// cluster settings, a data link (transport/data_link.hpp) for requests whose answers are
// small. The data link is read and written by the calling thread itself: a GCM tag's round
// trip then wakes no ZeroMQ I/O thread in the client (nor, node/client_links.hpp, in the
// server), which is most of what such a call costs.
//
// The link is made on first use and again after it fails; while it cannot be had (the server
// down, a release without client links, a port the network blocks), requests go over
// CurveZMQ and the link is tried again after a pause.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/log.hpp"
#include "settings/cluster_settings.hpp"
#include "transport/curve_keys.hpp"
#include "transport/data_link.hpp"
#include "transport/zmq_link.hpp"

namespace mpc::client {

class ServerChannel {
 public:
  using Clock = std::chrono::steady_clock;
  // How long after a data link could not be had (or broke) it is tried again: the pause
  // doubles while connecting keeps failing.
  static constexpr std::chrono::milliseconds kLinkRetryPause{1000};
  static constexpr std::chrono::milliseconds kLinkRetryPauseMax{30000};

  ServerChannel(transport::Context& context, const settings::ServerEndpoint& server,
                const transport::CurveKeyPair& own, const transport::LinkOptions& options);

  // Before a request's copies go out: makes the data link if there is none, the pause allows
  // and CurveZMQ reaches the server. Making it may take a handshake's round trips, so every
  // server's link is made before any copy is sent: a copy held up behind another server's
  // handshake would reach its server after the others had given up waiting for it.
  void prepare(bool small_answer, Clock::time_point deadline);
  enum class Carrier { CurveZmq, DataLink };
  // Sends one request: on the data link when `small_answer` and one is up, else on CurveZMQ.
  // Which of them took it, or nullopt when neither takes it now.
  std::optional<Carrier> send(std::span<const std::uint8_t> frame, bool small_answer, Clock::time_point deadline);
  // Grows whenever a request sent may have been lost with its carrier: a CurveZMQ session lost,
  // or a data link that broke (transport::Connection::sessions_lost).
  std::uint64_t sessions_lost();
  // Whether the request this channel sent last may have been lost with its carrier since it
  // went out: its own carrier's losses, not the other's. For a request on the data link that is
  // the link breaking, which a read finds without a call into ZeroMQ: a tag's round trip then
  // makes none.
  bool last_request_lost();
  // What to wait on for answers: the CurveZMQ socket, and the data link's socket (-1: none).
  void* socket() const noexcept { return connection_->native(); }
  int descriptor() const noexcept { return link_ ? link_->descriptor() : -1; }
  // The next answer already here on `carrier` (the one the wait found readable), without
  // waiting.
  std::optional<std::vector<std::uint8_t>> receive(Carrier carrier);

 private:
  // Drops the data link if the server closed it (or it carries late answers only, which go).
  void check_link();

  const settings::ServerEndpoint& server_;
  const transport::CurveKeyPair& own_;
  std::unique_ptr<transport::Connection> connection_;
  std::unique_ptr<transport::DataLink> link_;
  Clock::time_point link_retry_after_{};
  int failed_connects_ = 0;
  std::optional<Clock::time_point> last_warned_;
  std::uint64_t links_lost_ = 0;
  // Losses of one carrier: CurveZMQ sessions, or data links broken.
  std::uint64_t losses(Carrier carrier);
  // The last request's carrier, and that carrier's count of losses before it went out.
  Carrier last_carrier_ = Carrier::CurveZmq;
  std::uint64_t losses_before_ = 0;
};

}  // namespace mpc::client
