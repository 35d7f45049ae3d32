// Clients' requests over data links (transport/data_link.hpp): a client that knows a server's
// data_endpoint connects there with its own pinned key, and its requests and their answers
// travel as AES-256-GCM frames on a plain TCP socket that the shell's thread reads and writes
// itself. On CurveZMQ every request and answer passes through ZeroMQ's I/O thread in both
// processes, a hand-off and a wake-up each way; for a GCM tag, a few hundred bytes, those
// hand-offs cost more than the work.
//
// The data plane (engines/three_party/data_plane.hpp) accepts the connections and hands each
// keyed link here from its own thread; adopt() queues it and wakes the shell. A client's role
// comes from its key, as on CurveZMQ: admin keys are admins, compute keys compute, and no other
// key gets past the handshake. A link that fails (a frame that fails authentication, a client
// that closes, an answer not out in time) is closed; the client connects again.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "node/wakeup.hpp"
#include "transport/curve_keys.hpp"
#include "transport/data_link.hpp"
#include "transport/zmq_link.hpp"

namespace mpc::node {

class ClientLinks {
 public:
  // Links one client key may hold at once (a KDC opens two per worker process and server), so
  // no client crowds out the others. The listener refuses a key's link past it in the
  // handshake (reserve), and the client's requests go by CurveZMQ instead; closing a link
  // the client already uses would lose the request on it.
  static constexpr std::size_t kMaxLinksPerKey = 256;

  // A request frame over `max_request_bytes` closes its link (the same limit as on CurveZMQ).
  ClientLinks(const std::vector<transport::PublicKey>& compute_clients,
              const std::vector<transport::PublicKey>& enrol_clients,
              const std::vector<transport::PublicKey>& admin_clients, std::uint32_t max_request_bytes,
              const Logger& log, std::size_t max_links_per_key = kMaxLinksPerKey);
  ClientLinks(const ClientLinks&) = delete;
  ClientLinks& operator=(const ClientLinks&) = delete;

  // The keys a data listener should admit for clients.
  std::vector<transport::PublicKey> keys() const;

  // From any thread, for the listener's handshakes (transport::DataListener::admit_while): a
  // place for one more link of the key, false when its links and the places held for
  // handshakes under way reach its limit; and a place given back by a failed handshake.
  bool reserve(const transport::PublicKey& key);
  void release(const transport::PublicKey& key);
  // From any thread: a keyed link from a client, for the shell's thread to serve; it takes over
  // a place reserved for its key, if any. A key past its limit all the same (links adopted
  // without a place) has its oldest link closed.
  void adopt(std::unique_ptr<transport::DataLink> link);

  // Shell's thread. What to poll: the wake-up and every link's socket.
  std::vector<int> descriptors();
  // Every whole request that has arrived on the links whose sockets are among `readable` (what
  // the poll of descriptors() found ready) or that hold bytes read already, at most `limit`,
  // each handed to `handle` as a ReceivedMessage whose routing id names its link. Reading only
  // those spares a system call per idle link on every turn of the shell's loop.
  void receive(std::span<const int> readable, std::size_t limit,
               const std::function<void(transport::ReceivedMessage&)>& handle);
  // Whether some link holds bytes read off its socket that receive() has not handed out (the
  // limit stopped it): the shell must not wait on the sockets then, which would not wake it.
  bool buffered() const;
  // Whether a routing id names a client's data link; ZeroMQ never makes one like it.
  static bool is_link_id(const std::string& routing_id);
  // Sends an answer on the link the routing id names: false when that link is gone (closed
  // now if the answer is not out by `deadline`).
  bool send(const std::string& routing_id, std::span<const std::uint8_t> data,
            std::chrono::steady_clock::time_point deadline);
  std::size_t size() const { return links_.size(); }

 private:
  struct Link {
    std::unique_ptr<transport::DataLink> link;
    std::string role;
  };
  void take_adopted();
  void close(std::uint64_t serial, const std::string& why);
  void forget(const transport::PublicKey& key);  // one link of the key fewer

  const Logger& log_;
  std::uint32_t max_request_bytes_;
  std::size_t max_links_per_key_;
  std::map<transport::PublicKey, std::string> roles_;
  Wakeup wakeup_;
  std::mutex mutex_;  // adopted_, held_, reserved_
  std::vector<std::unique_ptr<transport::DataLink>> adopted_;
  std::map<transport::PublicKey, std::size_t> held_;      // links adopted and not yet closed, by key
  std::map<transport::PublicKey, std::size_t> reserved_;  // places held for handshakes under way
  std::atomic<bool> adopted_waiting_{false};
  std::uint64_t next_serial_ = 1;
  std::map<std::uint64_t, Link> links_;  // by serial: oldest first
  std::vector<std::uint8_t> frame_;
};

}  // namespace mpc::node
