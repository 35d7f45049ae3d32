#include "transport/data_link.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.hpp"
#include "common/file_descriptor.hpp"
#include "transport/link_handshake.hpp"

namespace mpc::transport {
namespace {

using Clock = std::chrono::steady_clock;

// Room for a request or an answer with its header. A larger frame's first bytes cost a copy
// out of the inbox, so it stays small beside the 1 MiB frames of a garbled table stream.
constexpr std::size_t kInboxBytes = 16 * 1024;

// Connections a listener queues before it accepts them. A KDC's worker processes each link to
// every server, so a storm that wakes them connects hundreds at once while the servers' cores
// are busy; a connect past a full queue loses its SYN and waits out a second's retransmission,
// longer than a client gives a server before calling it unreachable. The kernel caps it at
// net.core.somaxconn.
constexpr int kListenBacklog = 1024;

struct TcpAddress {
  std::string host;
  std::string port;
};

TcpAddress parse_tcp_endpoint(const std::string& endpoint) {
  constexpr std::string_view kScheme = "tcp://";
  const auto colon = endpoint.rfind(':');
  if (endpoint.rfind(kScheme, 0) != 0 || colon == std::string::npos || colon < kScheme.size() ||
      colon + 1 == endpoint.size())
    throw Error(Component::Transport, "data link endpoint '" + endpoint + "' is not tcp://host:port");
  TcpAddress address{endpoint.substr(kScheme.size(), colon - kScheme.size()), endpoint.substr(colon + 1)};
  if (address.host.size() >= 2 && address.host.front() == '[' && address.host.back() == ']')
    address.host = address.host.substr(1, address.host.size() - 2);
  if (address.host == "*") address.host = "0.0.0.0";
  if (address.port == "*") address.port = "0";
  return address;
}

[[noreturn]] void fail_system(const std::string& what) {
  throw PeerError(Component::Transport, what + ": " + std::strerror(errno));
}

void make_nonblocking(int socket) {
  const int flags = ::fcntl(socket, F_GETFL);
  if (flags < 0 || ::fcntl(socket, F_SETFL, flags | O_NONBLOCK) != 0) fail_system("cannot make a socket non-blocking");
}

void set_no_delay(int socket) {
  const int one = 1;
  ::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Waits until `socket` is ready for `events`; false when `deadline` passes first.
bool wait_for(int socket, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) return false;
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    timespec timeout{static_cast<time_t>(nanos / 1'000'000'000), static_cast<long>(nanos % 1'000'000'000)};
    pollfd entry{socket, events, 0};
    const int ready = ::ppoll(&entry, 1, &timeout, nullptr);
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) fail_system("poll failed");
  }
}

// Bytes read (> 0), or 0 when none are there now; throws when the peer closed.
std::size_t read_some(int socket, std::uint8_t* into, std::size_t size) {
  for (;;) {
    const ssize_t got = ::recv(socket, into, size, MSG_DONTWAIT);
    if (got > 0) return static_cast<std::size_t>(got);
    if (got == 0) throw PeerError(Component::Transport, "data link closed by the peer");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    fail_system("data link read failed");
  }
}

// False when `deadline` passed before all was sent.
bool write_all(int socket, const std::uint8_t* data, std::size_t size, Clock::time_point deadline) {
  while (size != 0) {
    const ssize_t sent = ::send(socket, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent > 0) {
      data += sent;
      size -= static_cast<std::size_t>(sent);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_for(socket, POLLOUT, deadline)) return false;
    } else if (errno != EINTR) {
      fail_system("data link write failed");
    }
  }
  return true;
}

bool read_exact(int socket, std::uint8_t* into, std::size_t size, Clock::time_point deadline) {
  while (size != 0) {
    const std::size_t got = read_some(socket, into, size);
    into += got;
    size -= got;
    if (got == 0 && !wait_for(socket, POLLIN, deadline)) return false;
  }
  return true;
}

int connect_tcp(const TcpAddress& address, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(address.host.c_str(), address.port.c_str(), &hints, &found); rc != 0)
    throw PeerError(Component::Transport, "cannot resolve " + address.host + ": " + ::gai_strerror(rc));
  std::string why = "no address";
  for (const addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    FileDescriptor socket(::socket(entry->ai_family, entry->ai_socktype | SOCK_CLOEXEC, entry->ai_protocol));
    if (socket.get() < 0) continue;
    make_nonblocking(socket.get());
    if (::connect(socket.get(), entry->ai_addr, entry->ai_addrlen) != 0 && errno != EINPROGRESS) {
      why = std::strerror(errno);
      continue;
    }
    if (!wait_for(socket.get(), POLLOUT, deadline)) {
      why = "timed out";
      break;
    }
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(socket.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
      why = std::strerror(error);
      continue;
    }
    set_no_delay(socket.get());
    ::freeaddrinfo(found);
    return socket.release();
  }
  ::freeaddrinfo(found);
  throw PeerError(Component::Transport, "cannot connect to " + address.host + ":" + address.port + ": " + why);
}

}  // namespace

// ---- DataLink ----------------------------------------------------------------------------

DataLink::DataLink(int socket, const PublicKey& peer, std::uint32_t channel, const SecretBytes& send_key,
                   const SecretBytes& receive_key, const DataLinkOptions& options)
    : socket_(socket),
      peer_(peer),
      channel_(channel),
      max_frame_bytes_(options.max_frame_bytes),
      sealer_(send_key.span(), options.rekey_after_frames),
      opener_(receive_key.span(), options.rekey_after_frames) {}

DataLink::~DataLink() {
  if (socket_ >= 0) ::close(socket_);
  wipe(body_.data(), body_.size());
}

std::unique_ptr<DataLink> DataLink::connect(const std::string& endpoint, const CurveKeyPair& own,
                                            const PublicKey& listener_key, std::uint32_t channel,
                                            const DataLinkOptions& options) {
  const auto deadline = Clock::now() + options.handshake_timeout;
  FileDescriptor socket(connect_tcp(parse_tcp_endpoint(endpoint), deadline));
  const CurveKeyPair ephemeral = generate_curve_key_pair();
  const auto hello = encode_hello({ephemeral.public_key, own.public_key, channel});
  std::array<std::uint8_t, kReplyBytes> reply{};
  if (!write_all(socket.get(), hello.data(), hello.size(), deadline) ||
      !read_exact(socket.get(), reply.data(), reply.size(), deadline))
    throw PeerError(Component::Transport, "no data link handshake from " + endpoint + " in time");
  const auto peer_ephemeral = decode_reply(reply);
  if (!peer_ephemeral) throw PeerError(Component::Transport, endpoint + " is not a data link listener");
  const LinkKeys keys = derive_link_keys(true, own, ephemeral, listener_key, *peer_ephemeral, hello, reply);
  std::unique_ptr<DataLink> link(new DataLink(socket.release(), listener_key, channel, keys.initiator_to_responder,
                                              keys.responder_to_initiator, options));
  // Key confirmation: our empty frame, then the listener's, which only its key could seal.
  link->send({}, deadline);
  std::vector<std::uint8_t> confirmation;
  if (!link->receive(confirmation, deadline))
    throw PeerError(Component::Transport, endpoint + " did not confirm the data link's keys in time");
  if (!confirmation.empty()) link->fail("the data link listener's confirmation was not empty");
  return link;
}

void DataLink::fail(const std::string& why) {
  if (socket_ >= 0) ::close(socket_);
  socket_ = -1;
  inbox_begin_ = inbox_end_ = 0;
  wipe(body_.data(), body_.size());
  throw PeerError(Component::Transport, why);
}

void DataLink::send(std::initializer_list<std::span<const std::uint8_t>> parts, Clock::time_point deadline) {
  if (socket_ < 0) throw PeerError(Component::Transport, "data link is closed");
  std::size_t total = 0;
  for (const auto& part : parts) total += part.size();
  // The buffer keeps its largest size: growing it again for every larger layer would
  // zero-fill the difference each time, only to overwrite it.
  const std::size_t frame_bytes = kFrameHeaderBytes + total + kFrameTagBytes;
  if (outgoing_.size() < frame_bytes) outgoing_.resize(frame_bytes);
  sealer_.seal(parts, outgoing_.data(), outgoing_.data() + kFrameHeaderBytes,
               outgoing_.data() + kFrameHeaderBytes + total);
  bool sent = false;
  try {
    sent = write_all(socket_, outgoing_.data(), frame_bytes, deadline);
  } catch (const PeerError& error) {
    fail(error.what());
  }
  // Half a frame cannot be taken back: the stream is no longer framed.
  if (!sent) fail("data link frame not sent in time");
}

bool DataLink::reader_gone() {
  if (socket_ < 0) return true;
  pollfd entry{socket_, POLLIN | POLLRDHUP, 0};
  if (::poll(&entry, 1, 0) == 0) return false;
  ::close(socket_);
  socket_ = -1;
  return true;
}

std::size_t DataLink::take(std::uint8_t* into, std::size_t size) {
  if (inbox_begin_ == inbox_end_) {
    // A body at least the inbox's size goes straight into place. Anything smaller is read with
    // room to spare, so a small frame's header and body come in one system call, not two.
    if (size >= kInboxBytes) {
      const std::size_t got = read_some(socket_, into, size);
      bytes_read_ += got;
      return got;
    }
    if (inbox_.empty()) inbox_.resize(kInboxBytes);
    inbox_begin_ = 0;
    inbox_end_ = read_some(socket_, inbox_.data(), inbox_.size());
    bytes_read_ += inbox_end_;
  }
  const std::size_t count = std::min(size, inbox_end_ - inbox_begin_);
  std::memcpy(into, inbox_.data() + inbox_begin_, count);
  inbox_begin_ += count;
  return count;
}

bool DataLink::read_available() {
  while (header_read_ < kFrameHeaderBytes) {
    const std::size_t got = take(header_ + header_read_, kFrameHeaderBytes - header_read_);
    if (got == 0) return false;
    header_read_ += got;
    if (header_read_ == kFrameHeaderBytes) {
      const std::uint32_t length = frame_length(header_);
      if (length > max_frame_bytes_)
        fail("data link frame of " + std::to_string(length) + " bytes is over the limit of " +
             std::to_string(max_frame_bytes_));
      body_.resize(length + kFrameTagBytes);
      body_read_ = 0;
    }
  }
  while (body_read_ < body_.size()) {
    const std::size_t got = take(body_.data() + body_read_, body_.size() - body_read_);
    if (got == 0) return false;
    body_read_ += got;
  }
  return true;
}

bool DataLink::receive(std::vector<std::uint8_t>& frame, Clock::time_point deadline) {
  if (socket_ < 0) throw PeerError(Component::Transport, "data link is closed");
  for (;;) {
    bool whole = false;
    try {
      whole = read_available();
    } catch (const PeerError& error) {
      if (socket_ >= 0) fail(error.what());
      throw;
    }
    if (whole) break;
    if (!wait_for(socket_, POLLIN, deadline)) return false;
  }
  const std::size_t length = body_.size() - kFrameTagBytes;
  if (!opener_.open(header_, std::span(body_).first(length), body_.data() + length))
    fail("data link frame " + std::to_string(opener_.frames()) + " failed authentication");
  body_.resize(length);
  frame.swap(body_);
  header_read_ = 0;
  body_read_ = 0;
  return true;
}

// ---- DataListener ------------------------------------------------------------------------

DataListener::DataListener(const std::string& endpoint, const CurveKeyPair& own, const DataLinkOptions& options)
    : own_(own), options_(options) {
  const TcpAddress address = parse_tcp_endpoint(endpoint);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(address.host.c_str(), address.port.c_str(), &hints, &found); rc != 0)
    throw Error(Component::Transport, "cannot resolve data link endpoint " + endpoint + ": " + ::gai_strerror(rc));
  std::string why = "no address";
  for (const addrinfo* entry = found; entry != nullptr && socket_ < 0; entry = entry->ai_next) {
    FileDescriptor socket(::socket(entry->ai_family, entry->ai_socktype | SOCK_CLOEXEC, entry->ai_protocol));
    if (socket.get() < 0) continue;
    const int one = 1;
    ::setsockopt(socket.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(socket.get(), entry->ai_addr, entry->ai_addrlen) != 0 || ::listen(socket.get(), kListenBacklog) != 0) {
      why = std::strerror(errno);
      continue;
    }
    make_nonblocking(socket.get());
    socket_ = socket.release();
  }
  ::freeaddrinfo(found);
  if (socket_ < 0) throw Error(Component::Transport, "cannot listen on data link endpoint " + endpoint + ": " + why);
}

DataListener::~DataListener() {
  if (socket_ >= 0) ::close(socket_);
}

void DataListener::allow(const PublicKey& key) { allowed_.insert(key); }

std::string DataListener::bound_endpoint() const {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getsockname(socket_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "";
  char host[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
    return "tcp://[" + std::string(host) + "]:" + std::to_string(ntohs(v6->sin6_port));
  }
  const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
  ::inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
  return "tcp://" + std::string(host) + ":" + std::to_string(ntohs(v4->sin_port));
}

std::unique_ptr<DataLink> DataListener::accept(Clock::time_point deadline) {
  while (const auto socket = accept_connection(deadline)) {
    try {
      return handshake(*socket);
    } catch (const Error& error) {
      ++refused_;
      last_refusal_ = error.what();
    }
  }
  return nullptr;
}

std::optional<int> DataListener::accept_connection(Clock::time_point deadline) {
  for (;;) {
    const int socket = ::accept4(socket_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (socket >= 0) {
      set_no_delay(socket);
      return socket;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) fail_system("data link accept failed");
    if (!wait_for(socket_, POLLIN, deadline)) return std::nullopt;
  }
}

std::unique_ptr<DataLink> DataListener::handshake(int raw_socket) const {
  FileDescriptor socket(raw_socket);
  const auto deadline = Clock::now() + options_.handshake_timeout;
  std::array<std::uint8_t, kHelloBytes> hello{};
  if (!read_exact(socket.get(), hello.data(), hello.size(), deadline))
    throw PeerError(Component::Transport, "no data link hello in time");
  const auto decoded = decode_hello(hello);
  if (!decoded) throw PeerError(Component::Transport, "not a data link hello");
  if (!allowed_.contains(decoded->sender))
    throw PeerError(Component::Transport, "data link from key " + z85_encode(decoded->sender) + " refused: not pinned");
  if (reserve_ && !reserve_(decoded->sender))
    throw LinkLimitReached(Component::Transport, "data link from key " + z85_encode(decoded->sender) +
                                                     " refused: the key holds as many as it may");
  try {
    const CurveKeyPair ephemeral = generate_curve_key_pair();
    const auto reply = encode_reply(ephemeral.public_key);
    if (!write_all(socket.get(), reply.data(), reply.size(), deadline))
      throw PeerError(Component::Transport, "data link reply not sent in time");
    const LinkKeys keys =
        derive_link_keys(false, own_, ephemeral, decoded->sender, decoded->ephemeral, hello, reply);
    std::unique_ptr<DataLink> link(new DataLink(socket.release(), decoded->sender, decoded->channel,
                                                keys.responder_to_initiator, keys.initiator_to_responder, options_));
    std::vector<std::uint8_t> confirmation;
    if (!link->receive(confirmation, deadline))
      throw PeerError(Component::Transport, "data link peer did not confirm its keys in time");
    if (!confirmation.empty()) link->fail("the data link peer's confirmation was not empty");
    link->send({}, deadline);
    return link;
  } catch (...) {
    if (release_) release_(decoded->sender);
    throw;
  }
}

}  // namespace mpc::transport
