#include "node/metrics_text.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>

#include "node/metrics_exposition.hpp"

namespace mpc::node {

namespace {

std::string party_label(std::uint8_t party) { return "server=\"" + std::to_string(party + 1) + "\""; }

}  // namespace

std::string render_metrics(const MetricsSnapshot& snapshot) {
  const wire::ServerStatus& s = snapshot.status;
  Exposition out;
  out.metric("mpc_server_info", "gauge", "This server's party, protocol and security (always 1).");
  out.sample("mpc_server_info",
             party_label(s.party) + ",protocol=\"" + snapshot.protocol + "\",security=\"" + snapshot.security + "\"", 1);
  out.one("mpc_jobs_total", "counter", "Client jobs this server answered.", s.jobs);
  out.one("mpc_batches_total", "counter", "Batches this server ran to the end.", s.batches);
  out.one("mpc_and_gates_total", "counter", "AND gates this server evaluated, every instance counted.",
          s.and_gates_evaluated);
  out.one("mpc_layer_payload_bytes_sent_total", "counter", "AND-layer payload bytes sent to the next party.",
          s.payload_bytes_sent);
  out.one("mpc_layer_messages_sent_total", "counter", "AND-layer messages sent to the next party.",
          s.layer_messages_sent);
  if (snapshot.jobs != nullptr) snapshot.jobs->render(out);
  if (snapshot.three_servers) {
    out.metric("mpc_batch_payload_bytes_total", "counter",
               "Batch payload bytes (AND layers, checks, garbled streams) sent to the next server and received "
               "from the previous one.");
    out.sample("mpc_batch_payload_bytes_total",
               party_label(static_cast<std::uint8_t>((s.party + 1) % 3)) + ",direction=\"sent\"", s.payload_bytes_sent);
    out.sample("mpc_batch_payload_bytes_total",
               party_label(static_cast<std::uint8_t>((s.party + 2) % 3)) + ",direction=\"received\"",
               snapshot.activity.payload_bytes_received);
  }
  out.metric("mpc_aborts_total", "counter",
             "Batches refused for a failed check of active security, by the check and the server whose messages "
             "failed it here (or that reported the failure; \"unknown\" when no server can be named).");
  for (const auto& [what, count] : snapshot.activity.aborts)
    out.sample("mpc_aborts_total",
               "check=\"" + what.first + "\"," +
                   (what.second >= 0 ? party_label(static_cast<std::uint8_t>(what.second)) : std::string("server=\"unknown\"")),
               count);
  out.metric("mpc_client_links_refused_total", "counter",
             "Clients' data links refused: the key held as many as it may, the handshake failed, or too many "
             "handshakes were under way.");
  out.sample("mpc_client_links_refused_total", "reason=\"at_limit\"", snapshot.activity.links_refused_at_limit);
  out.sample("mpc_client_links_refused_total", "reason=\"handshake\"", snapshot.activity.links_refused_handshake);
  out.sample("mpc_client_links_refused_total", "reason=\"busy\"", snapshot.activity.links_refused_busy);
  out.metric("mpc_handshakes_refused_total", "counter",
             "CurveZMQ handshakes refused: the key is not one this server admits on that listener.");
  out.sample("mpc_handshakes_refused_total", "listener=\"clients\"", snapshot.client_handshakes_refused);
  out.sample("mpc_handshakes_refused_total", "listener=\"peers\"", snapshot.peer_handshakes_refused);
  out.one("mpc_request_mismatches_total", "counter",
          "Requests refused because the servers received different copies of them.", s.request_mismatches);
  out.one("mpc_verification_failures_total", "counter",
          "Requests refused because a server's messages failed a check of active security.", s.verification_failures);
  out.one("mpc_stored_keys", "gauge", "Key shares in this server's store.", s.stored_keys);
  if (snapshot.three_servers) {
    const bool full = s.mode == wire::ClusterMode::Full;
    out.metric("mpc_cluster_mode", "gauge", "How the cluster serves as this server sees it (1 for the current mode).");
    out.sample("mpc_cluster_mode", "mode=\"three-party\"", full ? 1 : 0);
    out.sample("mpc_cluster_mode", "mode=\"two-party\"", full ? 0 : 1);
    out.metric("mpc_server_missing", "gauge", "1 for the server the cluster serves without.");
    for (std::uint8_t party = 0; party < 3; ++party)
      out.sample("mpc_server_missing", party_label(party), !full && s.missing_party == party ? 1 : 0);
    out.one("mpc_mode_switches_total", "counter", "Cluster mode switches this server made.", s.mode_switches);
    out.one("mpc_mode_since_seconds", "gauge", "Unix time of the last mode switch (or of the start).",
            s.mode_since_unix_ms / 1000);
    out.metric("mpc_server_excluded", "gauge",
               "1 for the server taken out of service until an operator readmits it (mpcctl cluster readmit).");
    for (std::uint8_t party = 0; party < 3; ++party)
      out.sample("mpc_server_excluded", party_label(party), s.excluded_party == party ? 1 : 0);
    out.one("mpc_exclusions_total", "counter", "Exclusions of a server this server recorded since it started.",
            s.exclusions);
    out.one("mpc_disputes_total", "counter",
            "Checks of active security that failed here and named a peer or suspended three-party service.",
            s.disputes);
    out.metric("mpc_server_distrusted", "gauge", "1 for a server this server is in a dispute with.");
    for (std::uint8_t party = 0; party < 3; ++party)
      out.sample("mpc_server_distrusted", party_label(party), (s.distrusts >> party) & 1u);
    out.one("mpc_three_party_suspended", "gauge",
            "1 while three-party service is suspended after a three-party check failed.",
            s.three_party_suspended ? 1 : 0);
    out.metric("mpc_pair_failed", "gauge",
               "1 for the pair serving without the server of the label once a check of its service failed that names "
               "neither member; such a pair does not serve while three-party service is suspended.");
    for (std::uint8_t party = 0; party < 3; ++party)
      out.sample("mpc_pair_failed", party_label(party), (s.failed_pairs >> party) & 1u);
    out.metric("mpc_peer_heard_age_seconds", "gauge",
               "Seconds since this server last heard each peer (absent: not heard since it started or lost it).");
    for (std::uint8_t party = 0; party < 3; ++party)
      if (const auto& age = snapshot.peer_heard_age_s[party]) out.sample_seconds("mpc_peer_heard_age_seconds", party_label(party), *age);
  }
  if (snapshot.client_links)
    out.one("mpc_client_data_links", "gauge", "Clients' data links this server holds.", *snapshot.client_links);
  out.one("mpc_gcm_nonces_held", "gauge", "Prefetched GCM nonces whose shares this server holds for their tags.",
          snapshot.gcm_nonces);
  out.one("mpc_prepared_garblings", "gauge", "Kerberos garblings prepared ahead that this server holds.",
          snapshot.prepared_garblings);
  out.one("mpc_prepared_garblings_bytes", "gauge", "Bytes of the prepared garblings this server holds.",
          snapshot.prepared_bytes);
  if (snapshot.lut_entries_ahead)
    out.one("mpc_lut_entries_ahead", "gauge",
            "Lookup-table entries made or being made ahead of the jobs that will use them (lut2, the leader).",
            *snapshot.lut_entries_ahead);
  if (!snapshot.pair_entries_ahead.empty()) {
    out.metric("mpc_pair_entries_ahead", "gauge",
               "AND material made or being made ahead by the pair serving without a server (its leader), "
               "while it stands by and while it serves.");
    for (const auto& [missing, entries] : snapshot.pair_entries_ahead)
      out.sample("mpc_pair_entries_ahead", "without=\"" + std::to_string(missing + 1) + "\"", entries);
  }
  if (!snapshot.cpu_seconds_by_thread.empty()) {
    out.metric("mpc_cpu_seconds_total", "counter", "CPU seconds of this server's threads, by thread name.");
    for (const auto& [thread, seconds] : snapshot.cpu_seconds_by_thread)
      out.sample_seconds("mpc_cpu_seconds_total", "thread=\"" + thread + "\"", seconds);
  }
  return out.take();
}

std::vector<std::pair<std::string, double>> cpu_seconds_by_thread() {
  std::map<std::string, double> by_name;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
    std::ifstream file(task.path() / "stat");
    std::string stat;
    if (!std::getline(file, stat)) continue;  // the thread ended meanwhile
    const auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    std::string name = stat.substr(open + 1, close - open - 1);
    // Label values stay few and plain: letters, digits, '-' and ' ' as the server names threads.
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != ' ') c = '-';
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    std::uint64_t utime = 0, stime = 0;
    for (int i = 3; fields >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) {
        stime = std::stoull(field);
        break;
      }
    }
    by_name[name] += static_cast<double>(utime + stime) / ticks;
  }
  return {by_name.begin(), by_name.end()};
}

}  // namespace mpc::node
