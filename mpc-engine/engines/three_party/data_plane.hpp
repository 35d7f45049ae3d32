// The three-party engine's peer data plane: how a batch worker's layer messages reach the
// next server of the ring, and how the previous server's reach this one.
//
// A worker sends over a NextPartyLink of its own: a data link (transport/data_link.hpp,
// AES-256-GCM over TCP, keyed by a handshake on the pinned keys) when the next server has a
// data_endpoint, otherwise its own CurveZMQ connection. Each worker's link is a lane: no
// thread or socket carries every batch's messages, so the data plane grows with `workers`.
//
// A lane whose data link cannot be had (the next server restarting or on an older release, a
// data port the network blocks) sends over CurveZMQ meanwhile, which every server also takes
// layer messages from, and tries its data link again each second.
//
// Lane 0 is the shell's: batches small enough to run on the shell's thread (latency-bound:
// every server runs them there, header by header) send on it, and the shell's thread reads the
// previous server's lane 0 itself, so a layer's round trip wakes no other thread. Workers'
// lanes are numbered from 1.
//
// Incoming, DataPlane listens on this server's data_endpoint for the previous server's lanes
// and for clients (node/client_links.hpp: a client's link is handed to the shell), and reads
// each worker's lane on a thread of its own, which opens the frames and hands them to
// BatchFrames (one wake-up of the worker, no hop through the shell's thread). A lane that
// fails (a frame that fails authentication, a peer that restarted) is closed; the sender
// connects again with a new handshake, and a new link on a lane replaces the old one.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>

#include "common/log.hpp"
#include "engines/three_party/batch_frames.hpp"
#include "node/engine.hpp"
#include "settings/server_settings.hpp"
#include "transport/curve_keys.hpp"
#include "transport/data_link.hpp"
#include "transport/zmq_link.hpp"

namespace mpc::three_party_engine {

inline constexpr std::uint32_t kShellLane = 0;

// A sender writes a frame in one go: a frame that stops half-way for a whole peer timeout will
// not be finished (a peer stuck, or its length altered on the way). Tells that apart from a
// frame still arriving.
class StallWatch {
 public:
  explicit StallWatch(std::chrono::milliseconds limit) : limit_(limit) {}
  // Throws PeerError when `link` has sat in the middle of a frame without a new byte for
  // longer than the limit.
  void check(const transport::DataLink& link, std::chrono::steady_clock::time_point now);

 private:
  std::chrono::milliseconds limit_;
  std::uint64_t bytes_seen_ = 0;
  std::chrono::steady_clock::time_point last_progress_ = std::chrono::steady_clock::now();
};

class NextPartyLink {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~NextPartyLink() = default;
  // Sends one frame, a layer header and its payload (taken where they lie: a data link seals
  // them straight from the evaluator's buffer); false (with why_not()) when it is not out by
  // `deadline`.
  virtual bool send(std::span<const std::uint8_t> header, std::span<const std::uint8_t> payload,
                    Clock::time_point deadline) = 0;
  virtual std::string why_not() const = 0;
};

// A worker's lane `lane` to the next party of the ring: a data link when that peer has a
// data_endpoint, sending over the worker's own CurveZMQ connection while the data link cannot
// be had (a warning says so); else that CurveZMQ connection alone. A data link that breaks
// under a send is reported to host.link_broke (the host must outlive the lane). Throws
// Error(Server) if no peer is configured as the next party.
std::unique_ptr<NextPartyLink> make_worker_lane(node::EngineHost& host, transport::Context& context,
                                                const settings::ServerSettings& settings,
                                                const transport::CurveKeyPair& own, std::uint32_t lane,
                                                const Logger& log);
// The shell's lane (kShellLane) likewise, its CurveZMQ side the shell's own link to the next
// party (host.peers(); the host must outlive it); only the shell's thread may use it.
std::unique_ptr<NextPartyLink> make_shell_lane(node::EngineHost& host, const settings::ServerSettings& settings,
                                               const transport::CurveKeyPair& own, const Logger& log);

class DataPlane {
 public:
  // Lanes beyond this are refused: each costs a thread here.
  static constexpr std::uint32_t kMaxLanes = 1024;
  // Connections still in their handshake beyond this are closed at once, so strangers that
  // connect and stay silent cannot pile up threads.
  static constexpr std::size_t kMaxHandshakes = 64;

  // Listens on settings.data_endpoint (throws Error(Transport) if it cannot) for the
  // previous party's lanes, whose frames go to `frames`, and, with `clients`, for the links of
  // the clients it knows, which go there once keyed. Both must outlive this.
  DataPlane(const settings::ServerSettings& settings, const transport::CurveKeyPair& own, BatchFrames& frames,
            node::ClientLinks* clients, const Logger& log);
  ~DataPlane();  // closes every lane and joins its thread
  DataPlane(const DataPlane&) = delete;
  DataPlane& operator=(const DataPlane&) = delete;

  std::string bound_endpoint() const { return listener_.bound_endpoint(); }

  // Connections refused since the start: a client key's links at their limit, handshakes that
  // failed, connections closed because too many handshakes were under way.
  struct Refusals {
    std::uint64_t at_limit = 0, handshake = 0, busy = 0;
  };
  Refusals refusals() const {
    return {refused_at_limit_.load(std::memory_order_relaxed), refused_handshake_.load(std::memory_order_relaxed),
            refused_busy_.load(std::memory_order_relaxed)};
  }

  // The previous party's shell lane for the shell's thread to read: `current`, or the link
  // that replaced it (the previous party connected again). Null until one is up.
  std::unique_ptr<transport::DataLink> shell_lane(std::unique_ptr<transport::DataLink> current);

 private:
  // One accepted connection: its handshake, then (a lane) its frames, on a thread of its own.
  struct Connection {
    std::atomic<bool> lane{false};  // the handshake is done
    std::atomic<bool> stop{false};
    std::atomic<bool> done{false};
    std::uint32_t channel = 0;      // once a lane
    std::thread thread;
  };
  void accept_connections();
  void serve(Connection& connection, int socket);
  void reap_finished();

  const Logger& log_;
  BatchFrames& frames_;
  node::ClientLinks* clients_;
  int previous_party_;
  transport::PublicKey previous_key_{};
  std::chrono::milliseconds peer_timeout_;
  transport::DataListener listener_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> refused_at_limit_{0}, refused_handshake_{0}, refused_busy_{0};
  std::mutex limit_log_mutex_;  // the two below: client links refused for their key's limit
  std::uint64_t links_over_limit_ = 0;
  std::optional<std::chrono::steady_clock::time_point> last_limit_log_;
  std::mutex mutex_;  // connections_ and each one's channel
  std::list<std::unique_ptr<Connection>> connections_;
  std::unique_ptr<transport::DataLink> new_shell_lane_;  // under mutex_
  std::thread acceptor_;
};

}  // namespace mpc::three_party_engine
