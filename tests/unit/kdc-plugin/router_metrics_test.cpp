// tests/unit/kdc-plugin/router_metrics_test.cpp - the crypto router's shared counters
// (kdc-plugin/router/router_metrics.h) as krb5kdc's forked workers add to them: calls by
// operation and result, latency buckets, and outages counted once per host, also by a
// worker that made no call between two of them; a file of another layout is refused.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "mpc_client.h"
#include "router_metrics.h"

namespace {

class RouterMetrics : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/router-metrics-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ + "/router.metrics";
  }
  void TearDown() override {
    std::remove(path_.c_str());
    ::rmdir(dir_.c_str());
  }

  router_metrics* open_worker() {
    router_metrics* metrics = nullptr;
    char why[256] = {};
    EXPECT_EQ(router_metrics_open(path_.c_str(), &metrics, why, sizeof why), 0) << why;
    return metrics;
  }

  // The page as `mpcctl kdc metrics` reads it.
  router_metrics_page read_page() {
    router_metrics_page page{};
    const int fd = ::open(path_.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::pread(fd, &page, sizeof page, 0), static_cast<ssize_t>(sizeof page));
    ::close(fd);
    return page;
  }

  // Runs body in a forked child, as a krb5kdc worker runs: its own process, the same file.
  template <typename Body>
  void in_worker(Body body) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      router_metrics* metrics = open_worker();
      body(metrics);
      router_metrics_close(metrics);
      std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }

  std::string dir_;
  std::string path_;
};

TEST_F(RouterMetrics, CallsLandInTheirOperationResultAndLatencyBucket) {
  in_worker([](router_metrics* m) {
    router_metrics_call(m, ROUTER_OP_KRB, MPC_OK, 400);
    router_metrics_call(m, ROUTER_OP_KRB, MPC_EBADTAG, 1500);
  });
  in_worker([](router_metrics* m) {
    router_metrics_call(m, ROUTER_OP_GCM_OPEN, MPC_EABORT, 7000000);
    router_metrics_call(m, ROUTER_OP_KRB, MPC_EUNREACHABLE, 500);
  });
  const router_metrics_page page = read_page();
  EXPECT_EQ(page.magic, ROUTER_METRICS_MAGIC);
  EXPECT_EQ(page.calls[ROUTER_OP_KRB][ROUTER_RESULT_OK], 1u);
  EXPECT_EQ(page.calls[ROUTER_OP_KRB][ROUTER_RESULT_BAD_TAG], 1u);
  EXPECT_EQ(page.calls[ROUTER_OP_KRB][ROUTER_RESULT_UNREACHABLE], 1u);
  EXPECT_EQ(page.calls[ROUTER_OP_GCM_OPEN][ROUTER_RESULT_ABORTED], 1u);
  EXPECT_EQ(page.latency_buckets[ROUTER_OP_KRB][0], 2u);  // 400 and 500 us: at most 500
  EXPECT_EQ(page.latency_buckets[ROUTER_OP_KRB][2], 1u);  // 1500 us: at most 2000
  for (std::size_t b = 0; b < ROUTER_LATENCY_BUCKETS; ++b)  // slower than the last bound: in none
    EXPECT_EQ(page.latency_buckets[ROUTER_OP_GCM_OPEN][b], 0u);
  EXPECT_EQ(page.latency_sum_us[ROUTER_OP_KRB], 2400u);
}

TEST_F(RouterMetrics, AnOutageCountsOncePerHostWhateverWorkersFindIt) {
  // Two workers find the engine down, one again: one period.
  in_worker([](router_metrics* m) { router_metrics_engine_unreachable(m); });
  in_worker([](router_metrics* m) {
    router_metrics_engine_unreachable(m);
    router_metrics_engine_unreachable(m);
  });
  EXPECT_EQ(read_page().unreachable_periods, 1u);
  // The engine answers another worker, then goes down again: the first worker, which made
  // no call in between, counts the second outage.
  in_worker([](router_metrics* m) { router_metrics_engine_reached(m); });
  in_worker([](router_metrics* m) { router_metrics_engine_unreachable(m); });
  EXPECT_EQ(read_page().unreachable_periods, 2u);
  in_worker([](router_metrics* m) { router_metrics_engine_reached(m); });
  EXPECT_EQ(read_page().engine_unreachable, 0u);
}

TEST_F(RouterMetrics, AFileOfAnotherLayoutIsRefusedAndLeftAlone) {
  const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  const std::uint64_t other = ROUTER_METRICS_MAGIC ^ 1;
  ASSERT_EQ(::pwrite(fd, &other, sizeof other, 0), static_cast<ssize_t>(sizeof other));
  ::close(fd);
  router_metrics* metrics = nullptr;
  char why[256] = {};
  EXPECT_EQ(router_metrics_open(path_.c_str(), &metrics, why, sizeof why), -1);
  EXPECT_EQ(metrics, nullptr);
  EXPECT_NE(std::string(why).find("another layout"), std::string::npos) << why;
  EXPECT_EQ(read_page().magic, other);
}

TEST_F(RouterMetrics, AFileOfTheShorterPageOfThisMagicGrowsAndKeepsItsCounts) {
  // The page before engine_unreachable was added: same magic, one word shorter.
  router_metrics_page page{};
  page.magic = ROUTER_METRICS_MAGIC;
  page.failed_fast = 7;
  const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  const auto shorter = static_cast<ssize_t>(sizeof page - sizeof page.engine_unreachable);
  ASSERT_EQ(::pwrite(fd, &page, static_cast<std::size_t>(shorter), 0), shorter);
  ::close(fd);
  in_worker([](router_metrics* m) {
    router_metrics_failed_fast(m);
    router_metrics_engine_unreachable(m);
  });
  const router_metrics_page grown = read_page();
  EXPECT_EQ(grown.failed_fast, 8u);
  EXPECT_EQ(grown.unreachable_periods, 1u);
  EXPECT_EQ(grown.engine_unreachable, 1u);
}

}  // namespace
