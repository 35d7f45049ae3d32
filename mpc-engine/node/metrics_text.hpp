// What a server tells Prometheus (node/metrics_endpoint.hpp): its Status counters and states in
// the text exposition format 0.0.4. Names carry the mpc_ prefix, counters end in _total, sizes
// are in bytes and times in seconds; labels take a handful of values (party, mode, role), never
// a key name, a client key or request content.
#pragma once

#include <string>

#include "wire/client_messages.hpp"

namespace mpc::node {

struct MetricsSnapshot {
  wire::ServerStatus status;
  std::string protocol;  // rss3, gc2, lut2
  std::string security;  // active, passive
  bool three_servers = true;
};

std::string render_metrics(const MetricsSnapshot& snapshot);

}  // namespace mpc::node
