// mpc-engine/transport/zmq_link.cpp: CurveZMQ links (RFC 26) with a ZAP handler (RFC 27) that admits pinned client keys.
//
// libzmq 4.3 facts this file depends on:
// - A CURVE server whose context has no handler bound at inproc://zeromq.zap.01 admits
//   every client (the "Stonehouse" legacy behaviour) unless ZMQ_ZAP_ENFORCE_DOMAIN is set.
//   The Context binds its handler before it returns, so it exists before any Listener,
//   and every Listener also sets ZMQ_ZAP_ENFORCE_DOMAIN (option 93: declared only in the
//   draft API header, but implemented by the stable 4.3 library).
// - The CURVE public key of a client is not exposed as message metadata; the ZAP reply's
//   User-Id is. The handler therefore answers "<role>:<z85 key>" and receive() reads it back.
// - ZMQ_IMMEDIATE on the DEALER attaches its pipe only after the CURVE handshake (and
//   thus the ZAP check) has completed, so send() with ZMQ_DONTWAIT fails with EAGAIN
//   while no authenticated connection is up.
// - A connecting socket whose handshake ends in a protocol error (ZAP status 300/400/500
//   comes back as a CURVE ERROR command; also an incoming frame over ZMQ_MAXMSGSIZE)
//   terminates its session and never reconnects (session_base_t::engine_error). Plain
//   connection errors (server down, server dropped us) reconnect as configured. The
//   Connection watches its socket's monitor events and redoes the connect itself.
// - ZMQ_MAXMSGSIZE is checked against the encrypted CURVE MESSAGE command, which is
//   33 bytes longer than the payload; the Listener and Connection add that overhead.
#include "transport/zmq_link.hpp"

#include <poll.h>
#include <zmq.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>
#include <thread>

#include <sodium.h>

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "common/log.hpp"

#ifndef ZMQ_ZAP_ENFORCE_DOMAIN
#define ZMQ_ZAP_ENFORCE_DOMAIN 93
#endif

namespace mpc::transport {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
constexpr std::size_t kMaxZapFrames = 16;
constexpr std::size_t kMaxNameBytes = 254;  // libzmq limits ZMQ_ZAP_DOMAIN to 254 bytes
// "\x07MESSAGE" + 8-byte nonce + flags byte + 16-byte Poly1305 tag (RFC 26).
constexpr std::int64_t kCurveMessageOverhead = 8 + 8 + 1 + 16;
constexpr int kListenBacklog = 1024;
constexpr std::int64_t kMinMessageLimit = 1024;
constexpr std::chrono::milliseconds kFirstRestartDelay{1000};
constexpr std::chrono::milliseconds kMaxRestartDelay{8000};

[[noreturn]] void fail_zmq(const std::string& what) {
  const int error = zmq_errno();
  throw Error(Component::Transport, what + ": " + zmq_strerror(error));
}

void set_int(void* socket, int option, int value, const char* name) {
  if (zmq_setsockopt(socket, option, &value, sizeof value) != 0) fail_zmq(std::string("cannot set ") + name);
}

void set_int64(void* socket, int option, std::int64_t value, const char* name) {
  if (zmq_setsockopt(socket, option, &value, sizeof value) != 0) fail_zmq(std::string("cannot set ") + name);
}

void set_bytes(void* socket, int option, const void* data, std::size_t size, const char* name) {
  if (zmq_setsockopt(socket, option, data, size) != 0) fail_zmq(std::string("cannot set ") + name);
}

int clamp_ms(std::chrono::milliseconds value) {
  return static_cast<int>(std::clamp<std::int64_t>(value.count(), 0, INT_MAX));
}

void check_name(const std::string& text, const char* what, bool allow_colon) {
  if (text.empty() || text.size() > kMaxNameBytes)
    throw Error(Component::Transport, std::string(what) + " must be 1.." + std::to_string(kMaxNameBytes) + " bytes");
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x21 || byte > 0x7e || (!allow_colon && c == ':'))
      throw Error(Component::Transport, std::string(what) + " \"" + json_escape(text) +
                                            "\" must be printable ASCII without spaces" +
                                            (allow_colon ? "" : " or ':'"));
  }
}

// Options common to both ends.
void apply_link_options(void* socket, const LinkOptions& options) {
  set_int(socket, ZMQ_LINGER, 0, "ZMQ_LINGER");
  set_int(socket, ZMQ_SNDHWM, options.send_high_water_mark, "ZMQ_SNDHWM");
  set_int(socket, ZMQ_RCVHWM, options.receive_high_water_mark, "ZMQ_RCVHWM");
  // The limit also applies to handshake commands (WELCOME is 168 bytes, INITIATE about 300):
  // a smaller one would make every handshake fail.
  if (options.max_message_bytes >= 0 && options.max_message_bytes < kMinMessageLimit)
    throw Error(Component::Transport, "max_message_bytes must be negative (no limit) or at least " +
                                          std::to_string(kMinMessageLimit));
  const std::int64_t wire_limit =
      options.max_message_bytes < 0 ? -1 : options.max_message_bytes + kCurveMessageOverhead;
  set_int64(socket, ZMQ_MAXMSGSIZE, wire_limit, "ZMQ_MAXMSGSIZE");
  set_int(socket, ZMQ_HANDSHAKE_IVL, clamp_ms(options.handshake_timeout), "ZMQ_HANDSHAKE_IVL");
}

// Owns a zmq_msg_t for the duration of one scope.
class Frame {
 public:
  Frame() { zmq_msg_init(&msg_); }
  ~Frame() { zmq_msg_close(&msg_); }
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  zmq_msg_t* get() { return &msg_; }
  const std::uint8_t* data() { return static_cast<const std::uint8_t*>(zmq_msg_data(&msg_)); }
  std::size_t size() { return zmq_msg_size(&msg_); }
  bool more() { return zmq_msg_more(&msg_) != 0; }
  std::string text() {
    return size() == 0 ? std::string() : std::string(reinterpret_cast<const char*>(data()), size());
  }

 private:
  zmq_msg_t msg_;
};

enum class RecvResult { Ok, Again, Terminated };

RecvResult receive_frame(void* socket, Frame& frame, int flags) {
  while (true) {
    if (zmq_msg_recv(frame.get(), socket, flags) >= 0) return RecvResult::Ok;
    const int error = zmq_errno();
    if (error == EINTR) continue;
    if (error == EAGAIN) return RecvResult::Again;
    if (error == ETERM) return RecvResult::Terminated;
    throw Error(Component::Transport, std::string("receive failed: ") + zmq_strerror(error));
  }
}

// Reads and discards the remaining frames of a multipart message.
void drain(void* socket, Frame& last) {
  bool more = last.more();
  while (more) {
    Frame next;
    if (receive_frame(socket, next, ZMQ_DONTWAIT) != RecvResult::Ok) return;
    more = next.more();
  }
}

// Polls one socket for input; false on timeout. Retries after signals with the time left.
bool poll_readable(void* socket, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    zmq_pollitem_t item{socket, 0, ZMQ_POLLIN, 0};
    const int rc = zmq_poll(&item, 1, std::max<long>(0, static_cast<long>(std::min<std::int64_t>(left.count(), INT_MAX))));
    if (rc > 0) return (item.revents & ZMQ_POLLIN) != 0;
    if (rc == 0) return false;
    if (zmq_errno() == EINTR) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      continue;
    }
    fail_zmq("poll failed");
  }
}

std::chrono::steady_clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  return std::chrono::steady_clock::now() + std::max(timeout, std::chrono::milliseconds(0));
}

bool send_frame(void* socket, std::span<const std::uint8_t> data, int flags, bool host_unreachable_is_false) {
  static const std::uint8_t kEmpty = 0;
  const void* bytes = data.empty() ? &kEmpty : data.data();
  while (true) {
    if (zmq_send(socket, bytes, data.size(), flags | ZMQ_DONTWAIT) >= 0) return true;
    const int error = zmq_errno();
    if (error == EINTR) continue;
    if (error == EAGAIN) return false;
    if (host_unreachable_is_false && error == EHOSTUNREACH) return false;
    throw Error(Component::Transport, std::string("send failed: ") + zmq_strerror(error));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// ZAP handler

struct Context::Authenticator {
  std::mutex mutex;
  std::map<std::string, std::map<PublicKey, std::string>> allowed;  // domain -> key -> role
  void* socket = nullptr;                                          // REP, owned by `thread` once started
  std::thread thread;
  Logger log{"transport"};
  std::map<std::string, std::chrono::steady_clock::time_point> last_rejection_logged;
  std::map<std::string, std::uint64_t> refused;  // by domain, under mutex

  std::optional<std::string> role_of(const std::string& domain, const PublicKey& key) {
    std::lock_guard lock(mutex);
    auto in_domain = allowed.find(domain);
    if (in_domain == allowed.end()) return std::nullopt;
    auto entry = in_domain->second.find(key);
    if (entry == in_domain->second.end()) return std::nullopt;
    return entry->second;
  }

  // At most one log line per rejected (domain, key) per minute: a rejected client retries
  // every second or so.
  void log_rejection(const std::string& domain, const std::string& address, const std::string& mechanism,
                     const std::string& key) {
    const auto now = std::chrono::steady_clock::now();
    const std::string tag = domain + "|" + mechanism + "|" + key;
    auto it = last_rejection_logged.find(tag);
    if (it != last_rejection_logged.end() && now - it->second < std::chrono::minutes(1)) return;
    if (last_rejection_logged.size() > 1024) last_rejection_logged.clear();
    last_rejection_logged[tag] = now;
    log.warn("connection rejected",
             {{"domain", domain}, {"address", address}, {"mechanism", mechanism}, {"client_key", key}});
  }

  // One RFC 27 request in, one reply out. Returns false when the context is shutting down.
  bool serve_one() {
    std::vector<std::string> frames;
    while (true) {
      Frame frame;
      const RecvResult result = receive_frame(socket, frame, 0);
      if (result == RecvResult::Terminated) return false;
      if (result != RecvResult::Ok) continue;
      if (frames.size() < kMaxZapFrames) frames.push_back(frame.text());
      if (!frame.more()) break;
    }
    // Request: version, request id, domain, address, routing id, mechanism, credentials...
    std::string status = "400";
    std::string status_text = "not allowed";
    std::string user_id;
    const std::string request_id = frames.size() > 1 ? frames[1] : std::string();
    if (frames.size() < 6 || frames[0] != "1.0") {
      status = "500";
      status_text = "malformed ZAP request";
    } else {
      const std::string& domain = frames[2];
      const std::string& mechanism = frames[5];
      std::string key_text = "-";
      if (mechanism == "CURVE" && frames.size() == 7 && frames[6].size() == 32) {
        PublicKey key{};
        std::memcpy(key.data(), frames[6].data(), 32);
        key_text = z85_encode(key);
        if (auto role = role_of(domain, key)) {
          status = "200";
          status_text = "OK";
          user_id = *role + ":" + key_text;
        }
      }
      if (status != "200") {
        {
          std::lock_guard lock(mutex);
          if (refused.size() < 16 || refused.count(domain) != 0) ++refused[domain];
        }
        log_rejection(domain, frames[3], mechanism, key_text);
      }
    }
    const std::array<const std::string*, 6> reply{nullptr, &request_id, &status, &status_text, &user_id, nullptr};
    static const std::string kVersion = "1.0";
    static const std::string kNoMetadata;
    for (std::size_t i = 0; i < reply.size(); ++i) {
      const std::string& part = i == 0 ? kVersion : (i == 5 ? kNoMetadata : *reply[i]);
      const int flags = i + 1 < reply.size() ? ZMQ_SNDMORE : 0;
      while (zmq_send(socket, part.data(), part.size(), flags) < 0) {
        const int error = zmq_errno();
        if (error == EINTR) continue;
        if (error == ETERM) return false;
        // A REP socket only fails here if libzmq is broken; log and stop answering
        // (unanswered handshakes then time out: fail closed).
        log.error("zap reply failed", {{"error", zmq_strerror(error)}});
        return false;
      }
    }
    return true;
  }

  void run() {
    try {
      while (serve_one()) {
      }
    } catch (const std::exception& error) {
      log.error("zap handler stopped", {{"error", error.what()}});
    }
    zmq_close(socket);
    socket = nullptr;
  }
};

Context::Context() {
  context_ = zmq_ctx_new();
  if (context_ == nullptr) fail_zmq("cannot create ZeroMQ context");
  try {
    // Sockets that are still open when the context terminates must not block it.
    if (zmq_ctx_set(context_, ZMQ_BLOCKY, 0) != 0) fail_zmq("cannot set ZMQ_BLOCKY");
    authenticator_ = std::make_unique<Authenticator>();
    void* socket = zmq_socket(context_, ZMQ_REP);
    if (socket == nullptr) fail_zmq("cannot create ZAP handler socket");
    authenticator_->socket = socket;
    set_int(socket, ZMQ_LINGER, 0, "ZMQ_LINGER");
    // Bound here, on the constructing thread: the handler exists before any Listener does.
    if (zmq_bind(socket, kZapEndpoint) != 0) fail_zmq("cannot bind ZAP handler");
    authenticator_->thread = std::thread([auth = authenticator_.get()] { auth->run(); });
  } catch (...) {
    if (authenticator_ && authenticator_->socket != nullptr) zmq_close(authenticator_->socket);
    authenticator_.reset();
    zmq_ctx_term(context_);
    throw;
  }
}

Context::~Context() {
  // Shutdown makes the handler's blocking receive return ETERM; it then closes its socket.
  zmq_ctx_shutdown(context_);
  if (authenticator_->thread.joinable()) authenticator_->thread.join();
  while (zmq_ctx_term(context_) != 0 && zmq_errno() == EINTR) {
  }
}

std::uint64_t Context::refused_handshakes(const std::string& domain) const {
  std::lock_guard lock(authenticator_->mutex);
  const auto it = authenticator_->refused.find(domain);
  return it == authenticator_->refused.end() ? 0 : it->second;
}

void Context::allow(const std::string& domain, const PublicKey& key, const std::string& role) {
  check_name(domain, "ZAP domain", true);
  check_name(role, "role", false);
  std::lock_guard lock(authenticator_->mutex);
  authenticator_->allowed[domain][key] = role;  // a later call for the same key replaces its role
}

// ---------------------------------------------------------------------------------------
// Listener

Listener::Listener(Context& context, const std::string& endpoint, const CurveKeyPair& own, const std::string& domain,
                   const LinkOptions& options) {
  check_name(domain, "ZAP domain", true);
  if (own.secret_key.size() != 32) throw Error(Component::Transport, "secret key is not 32 bytes");
  socket_ = zmq_socket(context.native(), ZMQ_ROUTER);
  if (socket_ == nullptr) fail_zmq("cannot create listener socket");
  try {
    apply_link_options(socket_, options);
    set_int(socket_, ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY");
    // As a data link listener's queue (data_link.cpp): a storm's KDC workers connect hundreds
    // at once, beyond ZeroMQ's default of 100.
    set_int(socket_, ZMQ_BACKLOG, kListenBacklog, "ZMQ_BACKLOG");
    set_int(socket_, ZMQ_CURVE_SERVER, 1, "ZMQ_CURVE_SERVER");
    set_bytes(socket_, ZMQ_CURVE_SECRETKEY, own.secret_key.data(), 32, "ZMQ_CURVE_SECRETKEY");
    set_bytes(socket_, ZMQ_ZAP_DOMAIN, domain.data(), domain.size(), "ZMQ_ZAP_DOMAIN");
    // Fails closed, EINVAL included: a library that does not know the option would admit any
    // client whenever no ZAP handler answers (a handler that stopped, another context's
    // socket), and the listener must never depend on that.
    const int enforce = 1;
    if (zmq_setsockopt(socket_, ZMQ_ZAP_ENFORCE_DOMAIN, &enforce, sizeof enforce) != 0)
      fail_zmq("cannot set ZMQ_ZAP_ENFORCE_DOMAIN");
    const auto give_up = std::chrono::steady_clock::now() + options.bind_patience;
    while (zmq_bind(socket_, endpoint.c_str()) != 0) {
      if (zmq_errno() != EADDRINUSE || std::chrono::steady_clock::now() >= give_up) fail_zmq("cannot bind " + endpoint);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  } catch (...) {
    zmq_close(socket_);
    socket_ = nullptr;
    throw;
  }
}

Listener::~Listener() {
  if (socket_ != nullptr) zmq_close(socket_);
}

std::optional<ReceivedMessage> Listener::receive(std::chrono::milliseconds timeout) {
  const auto deadline = deadline_after(timeout);
  // With no time to wait, the receive itself tells whether a message is there: a poll before
  // it would cost a system call more for every message, and one more when none is there.
  const bool wait = timeout.count() > 0;
  while (!wait || poll_readable(socket_, deadline)) {
    Frame routing;
    const RecvResult result = receive_frame(socket_, routing, ZMQ_DONTWAIT);
    if (result == RecvResult::Terminated) throw Error(Component::Transport, "context terminated");
    if (result == RecvResult::Again) {
      if (!wait) return std::nullopt;
      continue;
    }
    if (!routing.more()) continue;  // no payload frame: drop
    Frame payload;
    if (receive_frame(socket_, payload, ZMQ_DONTWAIT) != RecvResult::Ok) continue;
    if (payload.more()) {  // [routing id][payload][extra...]: drop the whole message
      drain(socket_, payload);
      continue;
    }
    const char* user_id = zmq_msg_gets(payload.get(), "User-Id");
    if (user_id == nullptr) continue;
    const std::string_view admitted(user_id);
    // Roles never contain ':' but Z85 text may: split at the first one.
    const std::size_t colon = admitted.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    ReceivedMessage message;
    try {
      message.sender = z85_decode_public(admitted.substr(colon + 1));
    } catch (const FormatError&) {
      continue;
    }
    message.role = std::string(admitted.substr(0, colon));
    message.routing_id = routing.text();
    message.data.assign(payload.data(), payload.data() + payload.size());
    return message;
  }
  return std::nullopt;
}

bool Listener::send(const std::string& routing_id, std::span<const std::uint8_t> data) {
  if (routing_id.empty()) return false;
  const std::span<const std::uint8_t> id(reinterpret_cast<const std::uint8_t*>(routing_id.data()), routing_id.size());
  if (!send_frame(socket_, id, ZMQ_SNDMORE, true)) return false;
  // After the routing id was accepted the ROUTER has picked the pipe; the payload
  // frame cannot fail with EAGAIN or EHOSTUNREACH any more.
  return send_frame(socket_, data, 0, true);
}

std::string Listener::bound_endpoint() const {
  char buffer[1024];
  std::size_t size = sizeof buffer;
  if (zmq_getsockopt(socket_, ZMQ_LAST_ENDPOINT, buffer, &size) != 0) fail_zmq("cannot read ZMQ_LAST_ENDPOINT");
  if (size > 0 && buffer[size - 1] == '\0') --size;
  return std::string(buffer, size);
}

// ---------------------------------------------------------------------------------------
// Connection

struct Connection::Recovery {
  std::string endpoint;
  std::string own_key;    // z85, for log lines
  void* monitor = nullptr;  // PAIR receiving this socket's monitor events
  std::optional<std::chrono::steady_clock::time_point> dead_since;  // session gone, libzmq not retrying
  std::chrono::milliseconds delay = kFirstRestartDelay;
  std::optional<std::chrono::steady_clock::time_point> last_logged;
  std::uint64_t sessions_lost = 0;
  bool session_up = false;
  Logger log{"transport"};
};

Connection::Connection(Context& context, const std::string& endpoint, const PublicKey& server_key,
                       const CurveKeyPair& own, const LinkOptions& options) {
  if (own.secret_key.size() != 32) throw Error(Component::Transport, "secret key is not 32 bytes");
  if (sodium_init() < 0) throw Error(Component::Transport, "libsodium initialisation failed");
  recovery_ = std::make_unique<Recovery>();
  recovery_->endpoint = endpoint;
  recovery_->own_key = z85_encode(own.public_key);
  socket_ = zmq_socket(context.native(), ZMQ_DEALER);
  if (socket_ == nullptr) fail_zmq("cannot create connection socket");
  try {
    apply_link_options(socket_, options);
    set_int(socket_, ZMQ_IMMEDIATE, 1, "ZMQ_IMMEDIATE");
    set_int(socket_, ZMQ_RECONNECT_IVL, 100, "ZMQ_RECONNECT_IVL");
    set_int(socket_, ZMQ_RECONNECT_IVL_MAX, static_cast<int>(options.reconnect_interval_max.count()),
            "ZMQ_RECONNECT_IVL_MAX");
    set_bytes(socket_, ZMQ_CURVE_SERVERKEY, server_key.data(), server_key.size(), "ZMQ_CURVE_SERVERKEY");
    set_bytes(socket_, ZMQ_CURVE_PUBLICKEY, own.public_key.data(), own.public_key.size(), "ZMQ_CURVE_PUBLICKEY");
    set_bytes(socket_, ZMQ_CURVE_SECRETKEY, own.secret_key.data(), 32, "ZMQ_CURVE_SECRETKEY");
    // Monitor before connecting, so no event of the first attempt is missed.
    std::array<std::uint8_t, 16> nonce{};
    randombytes_buf(nonce.data(), nonce.size());
    const std::string monitor_endpoint = "inproc://mpc-transport-monitor-" + to_hex(nonce);
    constexpr int kEvents = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_CONNECT_DELAYED | ZMQ_EVENT_CONNECT_RETRIED |
                            ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                            ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                            ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
    if (zmq_socket_monitor(socket_, monitor_endpoint.c_str(), kEvents) != 0) fail_zmq("cannot monitor connection");
    recovery_->monitor = zmq_socket(context.native(), ZMQ_PAIR);
    if (recovery_->monitor == nullptr) fail_zmq("cannot create monitor socket");
    set_int(recovery_->monitor, ZMQ_LINGER, 0, "ZMQ_LINGER");
    if (zmq_connect(recovery_->monitor, monitor_endpoint.c_str()) != 0) fail_zmq("cannot connect monitor socket");
    if (zmq_connect(socket_, endpoint.c_str()) != 0) fail_zmq("cannot connect to " + endpoint);
  } catch (...) {
    if (recovery_->monitor != nullptr) zmq_close(recovery_->monitor);
    zmq_close(socket_);
    socket_ = nullptr;
    throw;
  }
}

Connection::~Connection() {
  if (recovery_ && recovery_->monitor != nullptr) zmq_close(recovery_->monitor);
  if (socket_ != nullptr) zmq_close(socket_);
}

std::uint64_t Connection::sessions_lost() {
  maintain();
  return recovery_->sessions_lost;
}

bool Connection::session_up() {
  maintain();
  return recovery_->session_up;
}

void Connection::maintain() {
  Recovery& state = *recovery_;
  const auto now = std::chrono::steady_clock::now();
  while (true) {
    Frame head;
    if (receive_frame(state.monitor, head, ZMQ_DONTWAIT) != RecvResult::Ok) break;
    Frame address;
    if (head.more()) receive_frame(state.monitor, address, ZMQ_DONTWAIT);
    if (head.size() < 6) continue;
    ByteReader reader(std::span<const std::uint8_t>(head.data(), head.size()), Component::Transport);
    const std::uint16_t event = reader.u16();
    const std::uint32_t value = reader.u32();
    switch (event) {
      case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        if (!state.last_logged || now - *state.last_logged >= std::chrono::minutes(1)) {
          state.last_logged = now;
          state.log.warn(event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ? "server refused our key" : "handshake failed",
                         {{"endpoint", state.endpoint},
                          {"client_key", state.own_key},
                          {"code", static_cast<std::uint64_t>(value)}});
        }
        [[fallthrough]];
      case ZMQ_EVENT_DISCONNECTED:
        ++state.sessions_lost;
        state.session_up = false;
        if (!state.dead_since) state.dead_since = now;
        break;
      case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
        state.delay = kFirstRestartDelay;
        state.session_up = true;
        [[fallthrough]];
      case ZMQ_EVENT_CONNECTED:
      case ZMQ_EVENT_CONNECT_DELAYED:
      case ZMQ_EVENT_CONNECT_RETRIED:
        state.dead_since.reset();
        break;
      default: break;
    }
  }
  // A disconnect that libzmq follows with a retry clears `dead_since` within microseconds;
  // one still standing after the delay is a session libzmq has given up on.
  if (state.dead_since && now - *state.dead_since >= state.delay) {
    zmq_disconnect(socket_, state.endpoint.c_str());  // forget the dead session; ENOENT is fine
    if (zmq_connect(socket_, state.endpoint.c_str()) != 0) fail_zmq("cannot reconnect to " + state.endpoint);
    state.dead_since.reset();
    state.delay = std::min(state.delay * 2, kMaxRestartDelay);
  }
}

bool Connection::send(std::span<const std::uint8_t> data) {
  maintain();
  return send_frame(socket_, data, 0, false);
}

bool Connection::send_until(std::span<const std::uint8_t> data, std::chrono::steady_clock::time_point deadline,
                            const std::function<bool()>& worth_waiting) {
  while (!send(data)) {
    if (std::chrono::steady_clock::now() >= deadline || (worth_waiting && !worth_waiting())) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

std::optional<std::vector<std::uint8_t>> Connection::receive(std::chrono::milliseconds timeout) {
  maintain();
  const auto deadline = deadline_after(timeout);
  const bool wait = timeout.count() > 0;  // as in Listener::receive
  while (!wait || poll_readable(socket_, deadline)) {
    Frame frame;
    const RecvResult result = receive_frame(socket_, frame, ZMQ_DONTWAIT);
    if (result == RecvResult::Terminated) throw Error(Component::Transport, "context terminated");
    if (result == RecvResult::Again) {
      if (!wait) return std::nullopt;
      continue;
    }
    if (frame.more()) {  // replies are single frames: drop anything else
      drain(socket_, frame);
      continue;
    }
    return std::vector<std::uint8_t>(frame.data(), frame.data() + frame.size());
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------

std::vector<std::size_t> wait_readable(std::span<void* const> sockets, std::chrono::milliseconds timeout) {
  return wait_readable(sockets, {}, timeout);
}

namespace {

// Whether a message can be received from `socket` now. Asking makes ZeroMQ take the commands
// its I/O thread left for the socket, which also clears the socket's ZMQ_FD signal.
bool zmq_has_input(void* socket) {
  std::uint32_t events = 0;
  std::size_t size = sizeof events;
  if (zmq_getsockopt(socket, ZMQ_EVENTS, &events, &size) != 0) fail_zmq("cannot read a socket's events");
  return (events & ZMQ_POLLIN) != 0;
}

int zmq_descriptor(void* socket) {
  int descriptor = -1;
  std::size_t size = sizeof descriptor;
  if (zmq_getsockopt(socket, ZMQ_FD, &descriptor, &size) != 0) fail_zmq("cannot read a socket's descriptor");
  return descriptor;
}

}  // namespace

// One poll(2) per wait. zmq_poll() makes two (a first pass with no timeout, then the wait)
// and asks every socket for its events after each: on a server's loop, which turns once or
// twice per request, they would be most of its system calls. A ZeroMQ socket's ZMQ_FD
// only signals that its events may have changed, so each socket is asked once before the wait
// (a message may be queued with no signal pending) and again only if its signal came.
std::vector<std::size_t> wait_readable(std::span<void* const> sockets, std::span<const int> descriptors,
                                       std::chrono::milliseconds timeout) {
  const std::size_t count = sockets.size() + descriptors.size();
  std::vector<pollfd> entries(count);
  std::vector<std::size_t> readable;
  for (std::size_t i = 0; i < sockets.size(); ++i) {
    if (sockets[i] == nullptr) throw Error(Component::Transport, "wait_readable on a null socket");
    entries[i] = pollfd{zmq_descriptor(sockets[i]), POLLIN, 0};
  }
  for (std::size_t j = 0; j < descriptors.size(); ++j) {
    if (descriptors[j] < 0) throw Error(Component::Transport, "wait_readable on an invalid descriptor");
    entries[sockets.size() + j] = pollfd{descriptors[j], POLLIN, 0};
  }
  for (std::size_t i = 0; i < sockets.size(); ++i)
    if (zmq_has_input(sockets[i])) readable.push_back(i);
  const auto deadline = deadline_after(timeout);
  for (;;) {
    const auto left = readable.empty() ? std::max(deadline - std::chrono::steady_clock::now(),
                                                  std::chrono::steady_clock::duration::zero())
                                       : std::chrono::steady_clock::duration::zero();
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    const timespec wait{static_cast<time_t>(nanos / 1'000'000'000), static_cast<long>(nanos % 1'000'000'000)};
    const int ready = ::ppoll(entries.data(), entries.size(), &wait, nullptr);
    if (ready < 0 && errno != EINTR)
      throw Error(Component::Transport, std::string("poll failed: ") + std::strerror(errno));
    if (ready > 0) {
      // A descriptor that hung up or failed is reported too: reading it tells the caller why.
      for (std::size_t j = sockets.size(); j < count; ++j)
        if (entries[j].revents != 0) readable.push_back(j);
      for (std::size_t i = 0; i < sockets.size(); ++i)
        if (entries[i].revents != 0 && std::find(readable.begin(), readable.end(), i) == readable.end() &&
            zmq_has_input(sockets[i]))
          readable.push_back(i);
    }
    if (!readable.empty() || std::chrono::steady_clock::now() >= deadline) break;
  }
  std::sort(readable.begin(), readable.end());
  return readable;
}

}  // namespace mpc::transport
