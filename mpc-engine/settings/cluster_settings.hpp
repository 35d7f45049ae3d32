// How a client reaches a cluster (TOML). Used by the client library and mpcctl.
// Example: config/cluster.example.toml.
//
//   protocol = "rss3"                  # rss3: three servers; gc2 | lut2: two servers
//   timeout_ms = 2000                  # per call, all servers together
//   krb_timeout_ms = 30000             # per Kerberos enctype job (mpc_client_krb_*), GCM prefetch
//                                      # of AES_K masks and GCM open; at least timeout_ms
//   secret_key_file = "client.key"     # this client's CurveZMQ key pair
//
//   [[servers]]                        # one per party, party = 1..3
//   party = 1
//   endpoint = "tcp://127.0.0.1:7101"
//   data_endpoint = "tcp://127.0.0.1:7221"  # rss3, optional: the server's data_endpoint
//   public_key = "z85..."              # or a path to a .pub file
//
// Relative paths are relative to the configuration file's directory.
//
// Validation (load_cluster_settings throws Error(Settings) "<file>:<line>: <key>: <problem>"):
// unknown keys and wrong types are errors; protocol ("rss3", "gc2" or "lut2"), secret_key_file and
// [[servers]] are required, timeout_ms is optional (default 2000, 1..600000), so is krb_timeout_ms
// (default 30000, 1..600000: the Kerberos jobs run circuits of thousands of AND layers, and a
// server builds the circuit of a new data length first; two servers garble GCM prefetches of
// AES_K masks and GCM opens too, behind the Kerberos jobs; a dead server is still reported at once,
// by the other two, after their peer timeout); one server for each party: three (1..3) with
// rss3, two (1..2) with gc2 and lut2, with distinct endpoints (tcp://host:port, ipc:// or
// inproc://). Public keys and paths follow the rules in server_settings.hpp. data_endpoint (rss3
// only, tcp:// only) is optional: with it, requests whose answers are small (all but bulk
// keystream and ECB jobs) go to that server over a data link (transport/data_link.hpp, keyed by
// the same pinned keys) instead of CurveZMQ, which the client falls back to while the link
// cannot be had.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "settings/server_settings.hpp"
#include "transport/curve_keys.hpp"

namespace mpc::settings {

struct ServerEndpoint {
  int party = 0;  // 0-based
  std::string endpoint;
  std::string data_endpoint;  // empty: CurveZMQ alone
  transport::PublicKey public_key{};
};

struct ClusterSettings {
  Protocol protocol = Protocol::Rss3;
  std::chrono::milliseconds timeout{2000};
  std::chrono::milliseconds krb_timeout{30000};
  std::filesystem::path secret_key_file;
  std::vector<ServerEndpoint> servers;  // sorted by party, one per party
};

ClusterSettings load_cluster_settings(const std::filesystem::path& file);

}  // namespace mpc::settings
