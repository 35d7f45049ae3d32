// The Prometheus endpoint of a server: GET /metrics over plain HTTP/1.1 on the address the
// operator names (metrics_listen), served from the shell's poll loop. It holds nothing secret
// (node/metrics_text.hpp), so it is not encrypted; bind it to a management address and let a
// firewall admit the monitoring host only.
//
// A small listener rather than prometheus-cpp's exposer: the exposer runs civetweb threads
// that would read the shell's counters from outside the shell's thread, where this one
// answers between two turns of the loop with the same counters Status reports, and adds no
// dependency. Bounds: a request line and headers of at most 4 KiB, 8 connections at a time,
// 2 s for a request to arrive; anything else is answered with an error or closed.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/file_descriptor.hpp"
#include "common/log.hpp"

namespace mpc::node {

class MetricsEndpoint {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxRequestBytes = 4096;
  static constexpr std::size_t kMaxConnections = 8;
  static constexpr std::chrono::seconds kRequestTime{2};

  // Binds HOST:PORT (a name or a numeric address; [v6]:port too). Throws Error(Server) when it
  // cannot.
  MetricsEndpoint(const std::string& listen, const Logger& log);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // The address bound, HOST:PORT with the port the system chose for port 0.
  std::string bound() const { return bound_; }
  // The listener and the open connections: the caller polls them for reading.
  std::vector<int> descriptors() const;
  // Accepts, reads and answers what `readable` says is ready; `render` makes the body of a
  // GET /metrics. Closes connections past their time.
  void serve(const std::vector<int>& readable, const std::function<std::string()>& render, Clock::time_point now);

 private:
  struct Connection {
    std::string request;
    Clock::time_point opened;
  };
  void accept_all(Clock::time_point now);
  // True when the connection is done with (answered or dropped).
  bool read_and_answer(int fd, Connection& connection, const std::function<std::string()>& render);

  const Logger& log_;
  FileDescriptor listener_{-1};
  std::string bound_;
  std::map<int, Connection> connections_;
};

}  // namespace mpc::node
