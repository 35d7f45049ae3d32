#include "node/metrics_endpoint.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.hpp"

namespace mpc::node {

namespace {

void send_all(int fd, const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the scraper went away, or its window stayed shut past the send timeout
    sent += static_cast<std::size_t>(n);
  }
}

std::string response(const char* status, const std::string& content_type, const std::string& body) {
  return std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

std::string numeric_host(const sockaddr_storage& address, socklen_t length, std::string& port) {
  char host[NI_MAXHOST], service[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof host, service, sizeof service,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "?";
  port = service;
  return address.ss_family == AF_INET6 ? "[" + std::string(host) + "]" : std::string(host);
}

}  // namespace

MetricsEndpoint::MetricsEndpoint(const std::string& listen, const Logger& log) : log_(log) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) throw Error(Component::Server, "metrics_listen " + listen + " is not HOST:PORT");
  std::string host = listen.substr(0, colon);
  const std::string port = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0)
    throw Error(Component::Server, "metrics_listen " + listen + ": " + ::gai_strerror(rc));
  std::string why = "no address";
  for (addrinfo* at = found; at != nullptr; at = at->ai_next) {
    FileDescriptor fd(::socket(at->ai_family, at->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, at->ai_protocol));
    if (fd.get() < 0) continue;
    const int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), at->ai_addr, at->ai_addrlen) != 0 || ::listen(fd.get(), 16) != 0) {
      why = std::strerror(errno);
      continue;
    }
    listener_.reset(fd.release());
    break;
  }
  ::freeaddrinfo(found);
  if (listener_.get() < 0) throw Error(Component::Server, "metrics_listen " + listen + ": cannot listen: " + why);
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&address), &length);
  std::string bound_port;
  bound_ = numeric_host(address, length, bound_port);
  bound_ += ":" + bound_port;
}

MetricsEndpoint::~MetricsEndpoint() {
  for (const auto& [fd, connection] : connections_) ::close(fd);
}

std::vector<int> MetricsEndpoint::descriptors() const {
  std::vector<int> out{listener_.get()};
  for (const auto& [fd, connection] : connections_) out.push_back(fd);
  return out;
}

void MetricsEndpoint::accept_all(Clock::time_point now) {
  for (;;) {
    FileDescriptor fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (fd.get() < 0) return;  // EAGAIN: none left; anything else: the next turn tries again
    if (connections_.size() >= kMaxConnections) continue;  // closed: a scraper retries
    // The answer is written in one go; a scraper that stops reading is given up after a second.
    const timeval limit{1, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    const int flags = ::fcntl(fd.get(), F_GETFL);
    ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
    connections_.emplace(fd.release(), Connection{{}, now});
  }
}

bool MetricsEndpoint::read_and_answer(int fd, Connection& connection, const std::function<std::string()>& render) {
  char buffer[1024];
  const ssize_t got = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
  if (got == 0) return true;
  if (got < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
  connection.request.append(buffer, static_cast<std::size_t>(got));
  const auto end = connection.request.find("\r\n\r\n");
  if (end == std::string::npos) {
    if (connection.request.size() <= kMaxRequestBytes) return false;
    send_all(fd, response("431 Request Header Fields Too Large", "text/plain", "request too large\n"));
    return true;
  }
  if (end > kMaxRequestBytes) {
    send_all(fd, response("431 Request Header Fields Too Large", "text/plain", "request too large\n"));
    return true;
  }
  const std::string line = connection.request.substr(0, connection.request.find("\r\n"));
  const auto space = line.find(' ');
  const std::string method = line.substr(0, space);
  const std::string target = space == std::string::npos ? "" : line.substr(space + 1, line.find(' ', space + 1) - space - 1);
  if (method != "GET" && method != "HEAD")
    send_all(fd, response("405 Method Not Allowed", "text/plain", "only GET\n"));
  else if (target != "/metrics")
    send_all(fd, response("404 Not Found", "text/plain", "see /metrics\n"));
  else {
    std::string answer = response("200 OK", "text/plain; version=0.0.4; charset=utf-8", render());
    if (method == "HEAD") answer.resize(answer.find("\r\n\r\n") + 4);
    send_all(fd, answer);
  }
  return true;
}

void MetricsEndpoint::serve(const std::vector<int>& readable, const std::function<std::string()>& render,
                            Clock::time_point now) {
  for (const int fd : readable) {
    if (fd == listener_.get()) {
      accept_all(now);
      continue;
    }
    auto it = connections_.find(fd);
    if (it == connections_.end()) continue;
    if (read_and_answer(fd, it->second, render)) {
      ::close(fd);
      connections_.erase(it);
    }
  }
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (now - it->second.opened > kRequestTime) {
      log_.debug("metrics request timed out", {});
      ::close(it->first);
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace mpc::node
