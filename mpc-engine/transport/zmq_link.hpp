// ZeroMQ with CurveZMQ for every link: encryption and mutual authentication by pinned
// public keys. The protocol layers never include zmq.h; they use these classes.
//
// A Context owns the ZeroMQ context and a ZAP handler (RFC 27) that admits a CURVE
// client only if its public key is on the allow-list of the listener's domain; the
// admitted key and its role come with every received message.
#pragma once

#include <chrono>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "transport/curve_keys.hpp"

namespace mpc::transport {

// Destroy every Listener and Connection of a Context before the Context itself.
class Context {
 public:
  Context();
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Admits `key` on listeners of `domain` with the given role name (e.g. "kdc", "admin", "peer2").
  // May be called before or after listeners exist. Domain and role are printable ASCII
  // without spaces (the role also without ':'); a later call for the same key and domain
  // replaces the role.
  void allow(const std::string& domain, const PublicKey& key, const std::string& role);
  // CurveZMQ handshakes the ZAP handler refused on listeners of `domain` since the start: a key
  // not admitted there, or another mechanism.
  std::uint64_t refused_handshakes(const std::string& domain) const;
  void* native() const noexcept { return context_; }

  struct Authenticator;

 private:
  void* context_ = nullptr;
  std::unique_ptr<Authenticator> authenticator_;
};

struct ReceivedMessage {
  std::string routing_id;        // opaque, for replying
  PublicKey sender{};            // authenticated CurveZMQ public key of the sender
  std::string role;              // role the ZAP handler admitted it with
  std::vector<std::uint8_t> data;
};

struct LinkOptions {
  int send_high_water_mark = 1000;
  int receive_high_water_mark = 1000;
  // Larger payload frames drop the connection. Negative: no limit; otherwise at least 1024
  // (the limit applies to CURVE handshake commands too).
  std::int64_t max_message_bytes = 512LL << 20;
  std::chrono::milliseconds handshake_timeout{2000};
  // A connection whose server is down retries after 100 ms, backing off to this interval.
  std::chrono::milliseconds reconnect_interval_max{1000};
  // A listener whose port is in use tries again for this long before it fails: a server
  // started again at once may find the port still held a moment by the instance before it.
  std::chrono::milliseconds bind_patience{3000};
};

// Bound CURVE-server ROUTER socket: many clients (or peers) in, replies out by routing id.
class Listener {
 public:
  Listener(Context& context, const std::string& endpoint, const CurveKeyPair& own, const std::string& domain,
           const LinkOptions& options = {});
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Empty optional when nothing arrived within `timeout` (zero: do not wait).
  std::optional<ReceivedMessage> receive(std::chrono::milliseconds timeout);
  // False if the recipient is gone (the reply is dropped); throws only on local failure.
  bool send(const std::string& routing_id, std::span<const std::uint8_t> data);
  void* native() const noexcept { return socket_; }
  std::string bound_endpoint() const;  // the endpoint actually bound (useful with port 0 / "*")

 private:
  void* socket_ = nullptr;
};

// Connected CURVE-client DEALER socket to one listener, with the server's key pinned.
// Sends fail fast (return false) while no authenticated connection is up, instead of
// queueing messages for a peer that may come back much later.
class Connection {
 public:
  Connection(Context& context, const std::string& endpoint, const PublicKey& server_key, const CurveKeyPair& own,
             const LinkOptions& options = {});
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool send(std::span<const std::uint8_t> data);  // false: no connection now, or queue full
  // Like send(), but retries until `deadline` while the connection is still coming up
  // (a server that has just started or restarted is still handshaking), and while
  // `worth_waiting`, when given, says the server may still come.
  bool send_until(std::span<const std::uint8_t> data, std::chrono::steady_clock::time_point deadline,
                  const std::function<bool()>& worth_waiting = {});
  std::optional<std::vector<std::uint8_t>> receive(std::chrono::milliseconds timeout);
  // Sessions lost so far (the server went away, or dropped or refused us). libzmq does not
  // carry a message across a lost session: one sent just before the loss is gone, so a
  // caller waiting for its answer learns from a change here that none will come.
  std::uint64_t sessions_lost();
  // Whether an authenticated session with the server is up now (its handshake succeeded and
  // it has not been lost since), as the socket's events so far tell.
  bool session_up();
  void* native() const noexcept { return socket_; }

 private:
  // libzmq 4.3 never reconnects after a protocol error (e.g. the server's ZAP handler
  // refused our key, or an oversized reply); send() and receive() restart the connection
  // after a back-off (1 s, doubling up to 8 s) so a later allow() or fix takes effect.
  struct Recovery;
  void maintain();
  void* socket_ = nullptr;
  std::unique_ptr<Recovery> recovery_;
};

// Waits until one of the sockets (Listener::native / Connection::native) is readable.
// Returns the indices of the readable ones (empty on timeout).
std::vector<std::size_t> wait_readable(std::span<void* const> sockets, std::chrono::milliseconds timeout);
// The same, also waiting for plain file descriptors (e.g. an eventfd another thread
// signals); indices of readable descriptors follow the sockets' (sockets.size() + j).
std::vector<std::size_t> wait_readable(std::span<void* const> sockets, std::span<const int> descriptors,
                                       std::chrono::milliseconds timeout);

}  // namespace mpc::transport
