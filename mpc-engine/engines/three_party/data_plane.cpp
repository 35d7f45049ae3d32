#include "engines/three_party/data_plane.hpp"

#include <unistd.h>

#include <algorithm>
#include <vector>

#include "common/error.hpp"
#include "common/thread_name.hpp"
#include "node/client_links.hpp"
#include "node/peer_links.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::three_party_engine {
namespace {

using Clock = std::chrono::steady_clock;

// How often a blocked accept or read looks whether the engine is stopping.
constexpr std::chrono::milliseconds kStopCheck{100};
// A lane whose data link cannot be had (the next server restarting, an older release without
// data links, a data port the network blocks) sends over CurveZMQ meanwhile and tries the data
// link again this often; each try waits at most kConnectBudget.
constexpr std::chrono::milliseconds kRetryInterval{1000};
constexpr std::chrono::milliseconds kConnectBudget{200};

const settings::PeerSettings& next_peer(const settings::ServerSettings& settings) {
  const int next = rss3::next_party(settings.party);
  for (const auto& peer : settings.peers)
    if (peer.party == next) return peer;
  throw Error(Component::Server, "no peer configured as the next party");
}

std::string unreachable(int party) { return "party " + std::to_string(party + 1) + " is unreachable"; }

// A worker's own CurveZMQ connection to the next party.
class ZmqLane final : public NextPartyLink {
 public:
  ZmqLane(transport::Context& context, const settings::PeerSettings& peer, const transport::CurveKeyPair& own)
      : party_(peer.party), connection_(context, peer.endpoint, peer.public_key, own, node::peer_link_options()) {}

  bool send(std::span<const std::uint8_t> header, std::span<const std::uint8_t> payload,
            Clock::time_point deadline) override {
    frame_.assign(header.begin(), header.end());
    frame_.insert(frame_.end(), payload.begin(), payload.end());
    return connection_.send_until(frame_, deadline);
  }
  std::string why_not() const override { return unreachable(party_); }

 private:
  int party_;
  transport::Connection connection_;
  std::vector<std::uint8_t> frame_;
};

// The shell's CurveZMQ connection to the next party (its thread alone may use it).
class ShellZmqLane final : public NextPartyLink {
 public:
  ShellZmqLane(node::EngineHost& host, int party) : host_(host), party_(party) {}

  bool send(std::span<const std::uint8_t> header, std::span<const std::uint8_t> payload,
            Clock::time_point) override {
    frame_.assign(header.begin(), header.end());
    frame_.insert(frame_.end(), payload.begin(), payload.end());
    return host_.peers().send_to(party_, frame_);
  }
  std::string why_not() const override { return unreachable(party_); }

 private:
  node::EngineHost& host_;
  int party_;
  std::vector<std::uint8_t> frame_;
};

class DataLane final : public NextPartyLink {
 public:
  DataLane(node::EngineHost& host, const settings::PeerSettings& peer, const transport::CurveKeyPair& own,
           std::uint32_t lane, std::unique_ptr<NextPartyLink> fallback, const Logger& log)
      : host_(host),
        party_(peer.party),
        endpoint_(peer.data_endpoint),
        peer_key_(peer.public_key),
        own_(own),
        lane_(lane),
        fallback_(std::move(fallback)),
        log_(log) {}

  bool send(std::span<const std::uint8_t> header, std::span<const std::uint8_t> payload,
            Clock::time_point deadline) override {
    if (link_ && link_->reader_gone()) link_.reset();
    if (!link_ && Clock::now() >= next_try_) connect(deadline);
    if (!link_) {
      why_ = fallback_->why_not();
      return fallback_->send(header, payload, deadline);
    }
    try {
      link_->send({header, payload}, deadline);
      return true;
    } catch (const PeerError& error) {
      // Frames already on a link that broke may never be read: this batch's messages cannot be
      // trusted to arrive, so it fails, and the next frame finds a new link.
      why_ = unreachable(party_) + " over its data link (lane " + std::to_string(lane_) + "): " + error.what();
      link_.reset();
      host_.link_broke(party_);
      return false;
    }
  }
  std::string why_not() const override { return why_; }

 private:
  void connect(Clock::time_point deadline) {
    const auto now = Clock::now();
    transport::DataLinkOptions options;
    options.handshake_timeout = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now),
                                           std::chrono::milliseconds(1), kConnectBudget);
    try {
      link_ = transport::DataLink::connect(endpoint_, own_, peer_key_, lane_, options);
      if (on_fallback_) log_.info("data link back", {{"to", party_ + 1}, {"lane", static_cast<std::uint64_t>(lane_)}});
      on_fallback_ = false;
    } catch (const PeerError& error) {
      next_try_ = now + kRetryInterval;
      if (!on_fallback_)
        log_.warn("data link unavailable: layer messages go by CurveZMQ until it is back",
                  {{"to", party_ + 1}, {"lane", static_cast<std::uint64_t>(lane_)}, {"error", error.what()}});
      on_fallback_ = true;
    }
  }

  node::EngineHost& host_;
  int party_;
  std::string endpoint_;
  transport::PublicKey peer_key_;
  const transport::CurveKeyPair& own_;
  std::uint32_t lane_;
  std::unique_ptr<NextPartyLink> fallback_;
  const Logger& log_;
  std::unique_ptr<transport::DataLink> link_;
  Clock::time_point next_try_{};
  bool on_fallback_ = false;
  std::string why_;
};

}  // namespace

std::unique_ptr<NextPartyLink> make_worker_lane(node::EngineHost& host, transport::Context& context,
                                                const settings::ServerSettings& settings,
                                                const transport::CurveKeyPair& own, std::uint32_t lane,
                                                const Logger& log) {
  const settings::PeerSettings& peer = next_peer(settings);
  auto zmq = std::make_unique<ZmqLane>(context, peer, own);
  if (peer.data_endpoint.empty()) return zmq;
  return std::make_unique<DataLane>(host, peer, own, lane, std::move(zmq), log);
}

std::unique_ptr<NextPartyLink> make_shell_lane(node::EngineHost& host, const settings::ServerSettings& settings,
                                               const transport::CurveKeyPair& own, const Logger& log) {
  const settings::PeerSettings& peer = next_peer(settings);
  auto zmq = std::make_unique<ShellZmqLane>(host, peer.party);
  if (peer.data_endpoint.empty()) return zmq;
  return std::make_unique<DataLane>(host, peer, own, kShellLane, std::move(zmq), log);
}

void StallWatch::check(const transport::DataLink& link, std::chrono::steady_clock::time_point now) {
  if (link.bytes_read() != bytes_seen_ || !link.mid_frame()) {
    bytes_seen_ = link.bytes_read();
    last_progress_ = now;
  } else if (now - last_progress_ > limit_) {
    throw PeerError(Component::Transport,
                    "data link frame stalled half-way for " + std::to_string(limit_.count()) + " ms");
  }
}

std::unique_ptr<transport::DataLink> DataPlane::shell_lane(std::unique_ptr<transport::DataLink> current) {
  std::lock_guard lock(mutex_);
  if (new_shell_lane_) return std::move(new_shell_lane_);
  return current;
}

DataPlane::DataPlane(const settings::ServerSettings& settings, const transport::CurveKeyPair& own,
                     BatchFrames& frames, node::ClientLinks* clients, const Logger& log)
    : log_(log),
      frames_(frames),
      clients_(clients),
      previous_party_(rss3::previous_party(settings.party)),
      peer_timeout_(settings.limits.peer_timeout),
      listener_(settings.data_endpoint, own) {
  for (const auto& peer : settings.peers)
    if (peer.party == previous_party_) {
      previous_key_ = peer.public_key;
      listener_.allow(peer.public_key);
    }
  if (clients_ != nullptr) {
    for (const auto& key : clients_->keys()) listener_.allow(key);
    listener_.admit_while(
        [this](const transport::PublicKey& key) { return key == previous_key_ || clients_->reserve(key); },
        [this](const transport::PublicKey& key) {
          if (key != previous_key_) clients_->release(key);
        });
  }
  acceptor_ = std::thread([this] { accept_connections(); });
}

DataPlane::~DataPlane() {
  stopping_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  std::list<std::unique_ptr<Connection>> connections;
  {
    std::lock_guard lock(mutex_);
    connections.swap(connections_);
  }
  // A connection still in its handshake ends by the handshake's timeout.
  for (auto& connection : connections)
    if (connection->thread.joinable()) connection->thread.join();
}

void DataPlane::accept_connections() {
  name_this_thread("data accept");
  while (!stopping_) {
    std::optional<int> socket;
    try {
      socket = listener_.accept_connection(Clock::now() + kStopCheck);
    } catch (const Error& error) {
      log_.error("data link accept failed", {{"error", error.what()}});
      std::this_thread::sleep_for(kStopCheck);
    }
    reap_finished();
    if (!socket) continue;
    std::lock_guard lock(mutex_);
    std::size_t handshaking = 0;
    for (const auto& connection : connections_) handshaking += !connection->lane && !connection->done;
    if (handshaking >= kMaxHandshakes || connections_.size() >= kMaxLanes + kMaxHandshakes) {
      ::close(*socket);
      refused_busy_.fetch_add(1, std::memory_order_relaxed);
      log_.warn("data link refused", {{"error", "too many connections in their handshake"}});
      continue;
    }
    auto& connection = *connections_.emplace_back(std::make_unique<Connection>());
    connection.thread = std::thread([this, &connection, fd = *socket] { serve(connection, fd); });
  }
}

void DataPlane::reap_finished() {
  std::lock_guard lock(mutex_);
  for (auto it = connections_.begin(); it != connections_.end();) {
    if ((*it)->done) {
      (*it)->thread.join();
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

void DataPlane::serve(Connection& connection, int socket) {
  name_this_thread("data lane in");
  std::unique_ptr<transport::DataLink> link;
  try {
    link = listener_.handshake(socket);
  } catch (const transport::LinkLimitReached& refusal) {
    refused_at_limit_.fetch_add(1, std::memory_order_relaxed);
    // A KDC with more workers than its key's share retries each refused link with a back-off:
    // one line a minute says so.
    std::lock_guard lock(limit_log_mutex_);
    ++links_over_limit_;
    const auto now = Clock::now();
    if (!last_limit_log_ || now - *last_limit_log_ >= std::chrono::minutes(1)) {
      last_limit_log_ = now;
      log_.info("client data links refused: the key holds as many as it may, its requests go by CurveZMQ",
                {{"error", refusal.what()}, {"refused_since_start", links_over_limit_}});
    }
    connection.done = true;
    return;
  } catch (const Error& error) {
    refused_handshake_.fetch_add(1, std::memory_order_relaxed);
    log_.warn("data link refused", {{"error", error.what()}});
    connection.done = true;
    return;
  }
  if (clients_ != nullptr && link->peer() != previous_key_) {  // admitted: so a client's
    clients_->adopt(std::move(link));
    connection.done = true;
    return;
  }
  if (link->channel() >= kMaxLanes) {
    log_.warn("data link refused", {{"from", previous_party_ + 1},
                                    {"error", "lane " + std::to_string(link->channel()) + " is over the limit"}});
    connection.done = true;
    return;
  }
  if (link->channel() == kShellLane) {
    std::lock_guard lock(mutex_);
    new_shell_lane_ = std::move(link);
    connection.done = true;
    return;
  }
  {
    // The sender connects a lane again only once its last link broke: the old one goes.
    std::lock_guard lock(mutex_);
    for (auto& other : connections_)
      if (other.get() != &connection && other->lane && other->channel == link->channel()) other->stop = true;
    connection.channel = link->channel();
    connection.lane = true;
  }
  log_.info("data link up", {{"from", previous_party_ + 1}, {"lane", static_cast<std::uint64_t>(link->channel())}});
  std::vector<std::uint8_t> frame;
  StallWatch stalls(peer_timeout_);
  try {
    while (!connection.stop && !stopping_) {
      if (link->receive(frame, Clock::now() + kStopCheck)) {
        frames_.route(node::PeerEnvelope{previous_party_, std::move(frame)});
        frame = frames_.buffers().take();
      }
      stalls.check(*link, Clock::now());
    }
  } catch (const PeerError& error) {
    // A peer that restarted closes its lanes; a frame that failed authentication is logged
    // the same way, with the reason.
    log_.info("data link closed", {{"from", previous_party_ + 1},
                                   {"lane", static_cast<std::uint64_t>(link->channel())},
                                   {"error", error.what()}});
  }
  connection.done = true;
}

}  // namespace mpc::three_party_engine
