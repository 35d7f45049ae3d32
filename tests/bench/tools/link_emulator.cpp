// mpc-link-emulator: TCP relays that behave like a network link of a given rate and one-way
// delay, for benchmarks of servers on one host (tests/bench/links_bench.py). Where the kernel
// has no netem qdisc, this is what gives loopback a link's bandwidth and latency.
//
//   mpc-link-emulator --delay-us D --rate-mbit R --route LINK:LISTEN_PORT:TARGET_PORT [--route ...]
//
// Each route accepts on 127.0.0.1:LISTEN_PORT and relays every connection, both ways, to
// 127.0.0.1:TARGET_PORT. Routes that name the same LINK share one link, and a LINK named
// "A>B" is the link between hosts A and B, which "B>A" shares the other way round: each
// direction of a link carries R Mbit/s (a byte leaves when the bytes before it on that direction have left, as on a
// wire) and every byte arrives D microseconds after it left. Bytes are relayed unchanged, so
// CurveZMQ and the data links' AES-256-GCM stay end to end. It prints one JSON line when it is
// listening, and runs until SIGTERM or SIGINT. One thread: it relays about 1 GB/s on one core
// of a loopback host, so links faster than that are not emulated faithfully.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t stopping = 0;
void on_signal(int) { stopping = 1; }

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "mpc-link-emulator: %s\n", what.c_str());
  std::exit(2);
}

// One direction of a link: the time its last byte leaves.
struct Wire {
  Clock::time_point free_at{};
};

struct Route {
  int listener = -1;
  std::uint16_t target = 0;
  std::string forward;   // the wire its connections' bytes take towards the target
  std::string backward;  // and back
};

struct Chunk {
  Clock::time_point due;
  std::vector<std::uint8_t> bytes;
  std::size_t sent = 0;
};

// Bytes read from `from`, written to `to` when due.
struct Direction {
  int from = -1;
  int to = -1;
  Wire* wire = nullptr;
  std::deque<Chunk> queue;
  std::size_t queued = 0;
  bool reading = true;       // `from` is read (not at end, not held back by a full queue)
  bool read_closed = false;
  bool write_blocked = false;  // `to` would block: waiting for it to take more
};

struct Connection {
  Direction forward;   // client -> server
  Direction backward;  // server -> client
  bool dead = false;
};

constexpr std::size_t kReadBytes = 64 * 1024;
// Reading stops while this much waits in one direction: the sender then feels the link's
// rate through TCP's own flow control rather than through an unbounded queue here.
constexpr std::size_t kMaxQueued = 8u << 20;

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int listen_on(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 64) != 0)
    fail("cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno));
  return fd;
}

int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  set_nonblocking(fd);
  set_nodelay(fd);
  return fd;
}

class Emulator {
 public:
  Emulator(std::chrono::microseconds delay, double rate_bits_per_s) : delay_(delay), rate_(rate_bits_per_s) {
    epoll_ = ::epoll_create1(0);
    if (epoll_ < 0) fail(std::string("epoll_create1: ") + std::strerror(errno));
  }

  // LINK "A>B": from host A to host B, so that a route from B to A shares the link's two
  // directions the other way round; any other name: a link of its own.
  void add_route(const std::string& link, std::uint16_t listen_port, std::uint16_t target) {
    const auto arrow = link.find('>');
    Route route{listen_on(listen_port), target, link + ">", link + "<"};
    if (arrow != std::string::npos)
      route = Route{route.listener, target, link, link.substr(arrow + 1) + ">" + link.substr(0, arrow)};
    wires_.try_emplace(route.forward);
    wires_.try_emplace(route.backward);
    watch(route.listener, EPOLLIN);
    routes_.push_back(route);
  }

  void run() {
    std::vector<epoll_event> events(256);
    while (!stopping) {
      const timespec wait = wait_time();
      const int ready = ::epoll_pwait2(epoll_, events.data(), static_cast<int>(events.size()), &wait, nullptr);
      if (ready < 0 && errno != EINTR) fail(std::string("epoll_wait: ") + std::strerror(errno));
      for (int i = 0; i < ready; ++i) {
        const int fd = events[static_cast<std::size_t>(i)].data.fd;
        if (const Route* route = route_of(fd)) {
          accept_on(*route);
          continue;
        }
        const auto owner = owners_.find(fd);
        if (owner == owners_.end()) continue;
        Connection& connection = *owner->second;
        const std::uint32_t happened = events[static_cast<std::size_t>(i)].events;
        Direction& reads = fd == connection.forward.from ? connection.forward : connection.backward;
        Direction& writes = fd == connection.forward.to ? connection.forward : connection.backward;
        if ((happened & EPOLLOUT) && writes.write_blocked) {
          writes.write_blocked = false;
          update(connection, fd);
        }
        if ((happened & (EPOLLIN | EPOLLHUP | EPOLLERR)) && reads.reading) read_into(connection, reads);
      }
      deliver();
      reap();
    }
  }

 private:
  void watch(int fd, std::uint32_t events) {
    epoll_event event{};
    event.events = events;
    event.data.fd = fd;
    if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event) != 0) fail(std::string("epoll_ctl: ") + std::strerror(errno));
  }

  // A socket is read for one direction and written for the other: it is watched for what
  // either needs.
  void update(Connection& connection, int fd) {
    const Direction& reads = fd == connection.forward.from ? connection.forward : connection.backward;
    const Direction& writes = fd == connection.forward.to ? connection.forward : connection.backward;
    epoll_event event{};
    event.events = (reads.reading ? EPOLLIN : 0u) | (writes.write_blocked ? EPOLLOUT : 0u);
    event.data.fd = fd;
    ::epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &event);
  }

  const Route* route_of(int fd) const {
    for (const auto& route : routes_)
      if (route.listener == fd) return &route;
    return nullptr;
  }

  void accept_on(const Route& route) {
    for (;;) {
      const int client = ::accept4(route.listener, nullptr, nullptr, SOCK_NONBLOCK);
      if (client < 0) return;
      set_nodelay(client);
      const int server = connect_to(route.target);
      if (server < 0) {
        ::close(client);
        continue;
      }
      auto connection = std::make_unique<Connection>();
      connection->forward.from = connection->backward.to = client;
      connection->forward.to = connection->backward.from = server;
      connection->forward.wire = &wires_.at(route.forward);
      connection->backward.wire = &wires_.at(route.backward);
      owners_[client] = connection.get();
      owners_[server] = connection.get();
      watch(client, EPOLLIN);
      watch(server, EPOLLIN);
      connections_.push_back(std::move(connection));
    }
  }

  // What is readable now, each chunk due when the link has carried it and the delay has passed.
  void read_into(Connection& connection, Direction& direction) {
    while (direction.queued < kMaxQueued) {
      Chunk chunk;
      chunk.bytes.resize(kReadBytes);
      const ssize_t got = ::read(direction.from, chunk.bytes.data(), chunk.bytes.size());
      if (got == 0) {
        direction.read_closed = true;
        direction.reading = false;
        update(connection, direction.from);
        return;
      }
      if (got < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        connection.dead = true;
        return;
      }
      chunk.bytes.resize(static_cast<std::size_t>(got));
      const auto now = Clock::now();
      Wire& wire = *direction.wire;
      const auto leaves = std::max(now, wire.free_at);
      const auto on_wire = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(8.0 * static_cast<double>(got) / rate_));
      wire.free_at = leaves + on_wire;
      chunk.due = wire.free_at + delay_;
      direction.queued += chunk.bytes.size();
      direction.queue.push_back(std::move(chunk));
    }
    direction.reading = false;
    update(connection, direction.from);
  }

  void deliver() {
    const auto now = Clock::now();
    for (auto& connection : connections_) {
      if (connection->dead) continue;
      for (Direction* direction : {&connection->forward, &connection->backward}) {
        while (!direction->write_blocked && !direction->queue.empty() && direction->queue.front().due <= now) {
          Chunk& chunk = direction->queue.front();
          const ssize_t put = ::write(direction->to, chunk.bytes.data() + chunk.sent, chunk.bytes.size() - chunk.sent);
          if (put < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
              connection->dead = true;
            } else {
              direction->write_blocked = true;
              update(*connection, direction->to);
            }
            break;
          }
          chunk.sent += static_cast<std::size_t>(put);
          if (chunk.sent < chunk.bytes.size()) continue;
          direction->queued -= chunk.bytes.size();
          direction->queue.pop_front();
          if (!direction->reading && !direction->read_closed && direction->queued < kMaxQueued) {
            direction->reading = true;
            update(*connection, direction->from);
          }
        }
        if (direction->read_closed && direction->queue.empty()) ::shutdown(direction->to, SHUT_WR);
      }
      if (connection->forward.read_closed && connection->backward.read_closed && connection->forward.queue.empty() &&
          connection->backward.queue.empty())
        connection->dead = true;
    }
  }

  void reap() {
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (!(*it)->dead) {
        ++it;
        continue;
      }
      for (int fd : {(*it)->forward.from, (*it)->backward.from}) {
        owners_.erase(fd);
        ::close(fd);
      }
      it = connections_.erase(it);
    }
  }

  // Until the next chunk is due (a socket that would block wakes the loop when it takes more).
  timespec wait_time() const {
    auto next = Clock::time_point::max();
    for (const auto& connection : connections_)
      for (const Direction* direction : {&connection->forward, &connection->backward})
        if (!direction->queue.empty() && !direction->write_blocked)
          next = std::min(next, direction->queue.front().due);
    constexpr long long kLongestNs = 100'000'000;
    long long left = kLongestNs;
    if (next != Clock::time_point::max())
      left = std::clamp<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(next - Clock::now()).count(), 0,
                                   kLongestNs);
    return timespec{static_cast<time_t>(left / 1'000'000'000), static_cast<long>(left % 1'000'000'000)};
  }

  std::chrono::microseconds delay_;
  double rate_;
  int epoll_ = -1;
  std::vector<Route> routes_;
  std::map<std::string, Wire> wires_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::map<int, Connection*> owners_;
};

std::uint16_t port_of(const std::string& text) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || value <= 0 || value > 65535) fail("not a port: " + text);
  return static_cast<std::uint16_t>(value);
}

}  // namespace

int main(int argc, char** argv) {
  long long delay_us = -1;
  double rate_mbit = 0;
  std::vector<std::string> routes;
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (i + 1 >= argc) fail(option + " needs a value");
    const std::string value = argv[++i];
    if (option == "--delay-us") delay_us = std::atoll(value.c_str());
    else if (option == "--rate-mbit") rate_mbit = std::atof(value.c_str());
    else if (option == "--route") routes.push_back(value);
    else fail("unknown option " + option);
  }
  if (delay_us < 0 || rate_mbit <= 0 || routes.empty())
    fail("usage: mpc-link-emulator --delay-us D --rate-mbit R --route LINK:LISTEN_PORT:TARGET_PORT [--route ...]");
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  // Wake-ups on time to the microsecond: a 100 us delay must not become 150.
  ::prctl(PR_SET_TIMERSLACK, 1UL);
  Emulator emulator(std::chrono::microseconds(delay_us), rate_mbit * 1e6);
  for (const auto& route : routes) {
    const auto first = route.find(':');
    const auto second = route.rfind(':');
    if (first == std::string::npos || second == first) fail("a route is LINK:LISTEN_PORT:TARGET_PORT, not " + route);
    emulator.add_route(route.substr(0, first), port_of(route.substr(first + 1, second - first - 1)),
                       port_of(route.substr(second + 1)));
  }
  std::printf("{\"listening\": %zu, \"delay_us\": %lld, \"rate_mbit\": %g}\n", routes.size(), delay_us, rate_mbit);
  std::fflush(stdout);
  emulator.run();
  return 0;
}
