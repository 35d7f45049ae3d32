// The Prometheus endpoint: what it exposes (names, types, values, labels of few values and no
// secrets) and how it answers over a real socket (GET /metrics, 404, 405, oversized requests,
// a connection that never finishes its request).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "common/error.hpp"
#include "common/log.hpp"
#include "node/job_metrics.hpp"
#include "node/metrics_endpoint.hpp"
#include "node/metrics_text.hpp"

namespace mpc::node {
namespace {

using Clock = std::chrono::steady_clock;

MetricsSnapshot sample_snapshot() {
  MetricsSnapshot snapshot;
  snapshot.status.party = 1;
  snapshot.status.jobs = 42;
  snapshot.status.batches = 7;
  snapshot.status.stored_keys = 3;
  snapshot.status.verification_failures = 2;
  snapshot.status.request_mismatches = 1;
  snapshot.status.and_gates_evaluated = 123456;
  snapshot.status.mode = wire::ClusterMode::TwoParty;
  snapshot.status.missing_party = 2;
  snapshot.status.mode_switches = 4;
  snapshot.status.mode_since_unix_ms = 1'700'000'000'123;
  snapshot.status.excluded_party = 2;
  snapshot.status.exclusions = 1;
  snapshot.status.distrusts = 0b100;
  snapshot.status.three_party_suspended = true;
  snapshot.status.failed_pairs = 0b100;
  snapshot.status.disputes = 3;
  snapshot.protocol = "rss3";
  snapshot.security = "active";
  snapshot.peer_heard_age_s[0] = 0.25;
  snapshot.peer_heard_age_s[2] = 12.5;
  snapshot.client_links = 6;
  snapshot.gcm_nonces = 96;
  snapshot.prepared_garblings = 2;
  snapshot.prepared_bytes = 20'000'000;
  snapshot.cpu_seconds_by_thread = {{"batch worker", 1.5}, {"mpc-server", 0.25}};
  snapshot.status.payload_bytes_sent = 5000;
  snapshot.activity.payload_bytes_received = 4000;
  snapshot.activity.aborts[{"and_check", 0}] = 2;
  snapshot.activity.aborts[{"abort_notice", 2}] = 1;
  snapshot.activity.links_refused_at_limit = 9;
  snapshot.client_handshakes_refused = 11;
  snapshot.lut_entries_ahead = 4096;
  return snapshot;
}

JobMetrics sample_jobs() {
  JobMetrics jobs;
  jobs.answered(JobKind::KrbEncrypt, wire::Status::Ok, std::chrono::microseconds(300));
  jobs.answered(JobKind::KrbEncrypt, wire::Status::Ok, std::chrono::milliseconds(7));
  jobs.answered(JobKind::KrbEncrypt, wire::Status::Ok, std::chrono::seconds(30));
  jobs.answered(JobKind::KrbEncrypt, wire::Status::VerificationFailed, std::chrono::milliseconds(3));
  jobs.refused(JobKind::GcmTag, wire::Status::UnknownNonce);
  return jobs;
}

TEST(MetricsText, EveryLineIsExpositionFormatWithTheValuesGiven) {
  MetricsSnapshot snapshot = sample_snapshot();
  const JobMetrics jobs = sample_jobs();
  snapshot.jobs = &jobs;
  const std::string text = render_metrics(snapshot);
  const std::regex help(R"(# HELP mpc_[a-z_]+ [^\n]+)"), type(R"(# TYPE mpc_[a-z_]+ (counter|gauge|histogram))"),
      sample(R"re(mpc_[a-z_]+(\{[a-z_]+="[a-z0-9 _-]+"(,[a-z_]+="([a-z0-9_.-]+|\+Inf)")*\})? [0-9]+(\.[0-9]+)?)re");
  std::istringstream lines(text);
  std::string line;
  int samples = 0;
  while (std::getline(lines, line)) {
    if (line.starts_with("# HELP")) {
      EXPECT_TRUE(std::regex_match(line, help)) << line;
    } else if (line.starts_with("# TYPE")) {
      EXPECT_TRUE(std::regex_match(line, type)) << line;
      if (line.ends_with(" counter")) {
        EXPECT_NE(line.find("_total "), std::string::npos) << line;
      }
    } else {
      EXPECT_TRUE(std::regex_match(line, sample)) << line;
      ++samples;
    }
  }
  EXPECT_GT(samples, 10);
  for (const char* expected :
       {"mpc_jobs_total 42\n", "mpc_batches_total 7\n", "mpc_stored_keys 3\n", "mpc_verification_failures_total 2\n",
        "mpc_request_mismatches_total 1\n", "mpc_and_gates_total 123456\n", "mpc_cluster_mode{mode=\"two-party\"} 1\n",
        "mpc_cluster_mode{mode=\"three-party\"} 0\n", "mpc_server_missing{server=\"3\"} 1\n",
        "mpc_server_missing{server=\"1\"} 0\n", "mpc_mode_switches_total 4\n", "mpc_mode_since_seconds 1700000000\n",
        "mpc_server_excluded{server=\"3\"} 1\n", "mpc_server_excluded{server=\"2\"} 0\n", "mpc_exclusions_total 1\n",
        "mpc_disputes_total 3\n", "mpc_server_distrusted{server=\"3\"} 1\n", "mpc_server_distrusted{server=\"1\"} 0\n",
        "mpc_three_party_suspended 1\n", "mpc_pair_failed{server=\"3\"} 1\n", "mpc_pair_failed{server=\"1\"} 0\n",
        "mpc_server_info{server=\"2\",protocol=\"rss3\",security=\"active\"} 1\n",
        "mpc_peer_heard_age_seconds{server=\"1\"} 0.250\n", "mpc_peer_heard_age_seconds{server=\"3\"} 12.500\n",
        "mpc_client_data_links 6\n", "mpc_gcm_nonces_held 96\n", "mpc_prepared_garblings 2\n",
        "mpc_prepared_garblings_bytes 20000000\n", "mpc_cpu_seconds_total{thread=\"batch worker\"} 1.500\n",
        "mpc_cpu_seconds_total{thread=\"mpc-server\"} 0.250\n",
        "mpc_batch_payload_bytes_total{server=\"3\",direction=\"sent\"} 5000\n",
        "mpc_batch_payload_bytes_total{server=\"1\",direction=\"received\"} 4000\n",
        "mpc_aborts_total{check=\"and_check\",server=\"1\"} 2\n",
        "mpc_aborts_total{check=\"abort_notice\",server=\"3\"} 1\n",
        "mpc_client_links_refused_total{reason=\"at_limit\"} 9\n",
        "mpc_client_links_refused_total{reason=\"busy\"} 0\n",
        "mpc_handshakes_refused_total{listener=\"clients\"} 11\n",
        "mpc_handshakes_refused_total{listener=\"peers\"} 0\n",
        "mpc_lut_entries_ahead 4096\n",
        "mpc_jobs_by_kind_total{kind=\"krb_encrypt\",status=\"ok\"} 3\n",
        "mpc_jobs_by_kind_total{kind=\"krb_encrypt\",status=\"verification_failed\"} 1\n",
        "mpc_jobs_by_kind_total{kind=\"gcm_tag\",status=\"unknown_nonce\"} 1\n",
        // Buckets are cumulative; only jobs answered ok are timed; 30 s lies past the last bound.
        "mpc_job_seconds_bucket{kind=\"krb_encrypt\",le=\"0.0005\"} 1\n",
        "mpc_job_seconds_bucket{kind=\"krb_encrypt\",le=\"0.005\"} 1\n",
        "mpc_job_seconds_bucket{kind=\"krb_encrypt\",le=\"0.01\"} 2\n",
        "mpc_job_seconds_bucket{kind=\"krb_encrypt\",le=\"10\"} 2\n",
        "mpc_job_seconds_bucket{kind=\"krb_encrypt\",le=\"+Inf\"} 3\n",
        "mpc_job_seconds_count{kind=\"krb_encrypt\"} 3\n",
        "mpc_job_seconds_sum{kind=\"krb_encrypt\"} 30.007300\n"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected;
  EXPECT_EQ(text.find("mpc_job_seconds_count{kind=\"gcm_tag\"}"), std::string::npos) << "a refusal is not timed";
}

TEST(MetricsText, ThreadsCpuIsReadFromProc) {
  // Burn a little CPU on a named thread, then find it.
  std::thread busy([] {
    ::pthread_setname_np(::pthread_self(), "metrics busy");
    const auto until = Clock::now() + std::chrono::milliseconds(50);
    volatile std::uint64_t spin = 0;
    while (Clock::now() < until) spin = spin + 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto threads = cpu_seconds_by_thread();
  busy.join();
  double busy_seconds = -1;
  for (const auto& [name, seconds] : threads)
    if (name == "metrics busy") busy_seconds = seconds;
  EXPECT_GT(busy_seconds, 0.0);
  EXPECT_LT(busy_seconds, 10.0);
}

TEST(MetricsText, TwoServerClustersHaveNoClusterMode) {
  MetricsSnapshot snapshot = sample_snapshot();
  snapshot.three_servers = false;
  const std::string text = render_metrics(snapshot);
  EXPECT_EQ(text.find("mpc_cluster_mode"), std::string::npos);
  EXPECT_EQ(text.find("mpc_peer_heard_age_seconds"), std::string::npos);
  EXPECT_NE(text.find("mpc_jobs_total 42"), std::string::npos);
}

class MetricsEndpointTest : public ::testing::Test {
 protected:
  // Sends `request`, lets the endpoint serve until the answer is in (or two seconds pass).
  std::string exchange(const std::string& request, bool close_after_send = false) {
    const int fd = connect_to();
    if (!request.empty()) {
      EXPECT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
    }
    if (close_after_send) ::shutdown(fd, SHUT_WR);
    std::string answer;
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    while (Clock::now() < deadline) {
      endpoint.serve(endpoint.descriptors(), [&] { ++renders; return std::string("mpc_jobs_total 1\n"); }, Clock::now());
      char buffer[4096];
      const ssize_t got = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (got > 0) answer.append(buffer, static_cast<std::size_t>(got));
      if (got == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ::close(fd);
    return answer;
  }
  int connect_to() {
    const std::string bound = endpoint.bound();
    const auto colon = bound.rfind(':');
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(std::stoi(bound.substr(colon + 1))));
    ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    return fd;
  }

  Logger log{"metrics_test", LogLevel::Error};
  MetricsEndpoint endpoint{"127.0.0.1:0", log};
  int renders = 0;
};

TEST_F(MetricsEndpointTest, GetMetricsIsAnsweredWithTheRenderedText) {
  const std::string answer = exchange("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_NE(answer.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << answer;
  EXPECT_TRUE(answer.ends_with("\r\n\r\nmpc_jobs_total 1\n")) << answer;
  EXPECT_EQ(renders, 1);
}

TEST_F(MetricsEndpointTest, OtherPathsAndMethodsAreRefusedAndRenderNothing) {
  EXPECT_TRUE(exchange("GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404")) << "path";
  EXPECT_TRUE(exchange("GET /metrics/../keys HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
  EXPECT_TRUE(exchange("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n").starts_with("HTTP/1.1 405"));
  EXPECT_TRUE(exchange("GET /metrics HTTP/1.1\r\nX: " + std::string(5000, 'a') + "\r\n\r\n").starts_with("HTTP/1.1 431"));
  EXPECT_TRUE(exchange(std::string(5000, 'a')).starts_with("HTTP/1.1 431"));
  EXPECT_EQ(exchange("GET /met", true), "");  // the scraper gave up halfway: closed, nothing sent
  EXPECT_EQ(renders, 0);
}

TEST_F(MetricsEndpointTest, AConnectionThatSendsNothingIsClosedAfterItsTime) {
  const int fd = connect_to();
  endpoint.serve(endpoint.descriptors(), [] { return std::string(); }, Clock::now());
  EXPECT_EQ(endpoint.descriptors().size(), 2u);
  endpoint.serve({}, [] { return std::string(); }, Clock::now() + MetricsEndpoint::kRequestTime + std::chrono::seconds(1));
  EXPECT_EQ(endpoint.descriptors().size(), 1u);
  char byte;
  EXPECT_EQ(::recv(fd, &byte, 1, 0), 0);  // closed by the endpoint
  ::close(fd);
}

TEST_F(MetricsEndpointTest, AtMostEightConnectionsAreHeld) {
  std::vector<int> clients;
  for (int i = 0; i < 12; ++i) clients.push_back(connect_to());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  endpoint.serve(endpoint.descriptors(), [] { return std::string(); }, Clock::now());
  EXPECT_EQ(endpoint.descriptors().size(), 1 + MetricsEndpoint::kMaxConnections);
  for (const int fd : clients) ::close(fd);
}

TEST(MetricsEndpoint, AnAddressItCannotBindIsAClearError) {
  Logger log{"metrics_test", LogLevel::Error};
  EXPECT_THROW(MetricsEndpoint("192.0.2.1:9464", log), Error);  // not an address of this host
  EXPECT_THROW(MetricsEndpoint("no-port", log), Error);
}

}  // namespace
}  // namespace mpc::node
