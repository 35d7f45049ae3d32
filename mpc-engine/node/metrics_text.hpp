// What a server tells Prometheus (node/metrics_endpoint.hpp): its Status counters and states in
// the text exposition format 0.0.4. Names carry the mpc_ prefix, counters end in _total, sizes
// are in bytes and times in seconds; labels take a handful of values (party, mode, role), never
// a key name, a client key or request content.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "node/engine.hpp"
#include "node/job_metrics.hpp"
#include "wire/client_messages.hpp"

namespace mpc::node {

struct MetricsSnapshot {
  wire::ServerStatus status;
  std::string protocol;  // rss3, gc2, lut2
  std::string security;  // active, passive
  bool three_servers = true;
  // Per 0-based party: seconds since it was last heard (three-server clusters; nullopt for
  // this server and for a peer never heard since this server started or lost its session).
  std::array<std::optional<double>, 3> peer_heard_age_s{};
  std::optional<std::size_t> client_links;  // clients' data links held (rss3 with data links)
  std::size_t gcm_nonces = 0;               // prefetched nonces' shares held (Engine::Stock)
  std::size_t prepared_garblings = 0;
  std::size_t prepared_bytes = 0;
  std::optional<std::uint64_t> lut_entries_ahead;  // lut2 leader (Engine::Stock)
  // By the 0-based server a pair serves without, of the pairs this server leads: the
  // preprocessing its engine made or is making ahead (Engine::Stock::lut_entries_ahead).
  std::map<int, std::uint64_t> pair_entries_ahead;
  Engine::Activity activity;
  // CurveZMQ handshakes refused by the ZAP handler: clients' (a key not admitted) and peers'.
  std::uint64_t client_handshakes_refused = 0;
  std::uint64_t peer_handshakes_refused = 0;
  const JobMetrics* jobs = nullptr;  // the shell's, by kind and status
  // CPU seconds this process spent, by thread name (the names the server gives its threads).
  std::vector<std::pair<std::string, double>> cpu_seconds_by_thread;
};

// CPU seconds of this process's threads from /proc/self/task, summed by thread name.
std::vector<std::pair<std::string, double>> cpu_seconds_by_thread();

std::string render_metrics(const MetricsSnapshot& snapshot);

}  // namespace mpc::node
