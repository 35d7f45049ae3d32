// The watch of a stalled service: a kind of job that fails on peers' timeouts, often enough,
// mostly, and over enough of the window, is stalled; jobs of that kind served in between, or
// failures in one burst, or another kind served, are not.
#include <gtest/gtest.h>

#include "node/service_stall.hpp"

namespace mpc::node {
namespace {

using Clock = ServiceStall::Clock;
using std::chrono::milliseconds;

constexpr std::size_t kKrb = 3, kKeystream = 0;

TEST(ServiceStall, AKindFailingOnTimeoutsOverHalfTheWindowIsStalled) {
  ServiceStall watch;
  const Clock::time_point start{};
  for (unsigned i = 0; i < kStalledJobs; ++i) watch.answered(kKrb, false, start + milliseconds(100 * i));
  EXPECT_FALSE(watch.stalled(start + kStallWindow / 2 - milliseconds(1))) << "failures in one burst are no stall";
  const auto stalled = watch.stalled(start + kStallWindow / 2);
  ASSERT_TRUE(stalled);
  EXPECT_EQ(stalled->kind, kKrb);
  EXPECT_EQ(stalled->failures, kStalledJobs);
}

TEST(ServiceStall, AnotherKindServedDoesNotHideAStall) {
  ServiceStall watch;
  const Clock::time_point start{};
  for (unsigned i = 0; i < 2 * kStalledJobs; ++i) {
    watch.answered(kKeystream, true, start + milliseconds(1000 * i));
    watch.answered(kKrb, false, start + milliseconds(1000 * i));
  }
  const auto stalled = watch.stalled(start + milliseconds(1000 * 2 * kStalledJobs));
  ASSERT_TRUE(stalled);
  EXPECT_EQ(stalled->kind, kKrb);
}

TEST(ServiceStall, AKindServedAsOftenAsItFailsOrFailingTooRarelyIsNoStall) {
  const Clock::time_point start{};
  ServiceStall half;
  for (unsigned i = 0; i < 8; ++i) half.answered(kKrb, i % 2 == 0, start + milliseconds(1000 * i));
  EXPECT_FALSE(half.stalled(start + milliseconds(8000))) << "a host under load fails some and serves the rest";
  ServiceStall two_thirds;
  for (unsigned i = 0; i < 9; ++i) two_thirds.answered(kKrb, i % 3 == 0, start + milliseconds(1000 * i));
  EXPECT_TRUE(two_thirds.stalled(start + milliseconds(9000))) << "a server that lets one job in three through";
  ServiceStall few;
  for (unsigned i = 0; i + 1 < kStalledJobs; ++i) few.answered(kKrb, false, start + milliseconds(3000 * i));
  EXPECT_FALSE(few.stalled(start + kStallWindow)) << "a host starved for a moment fails a batch or two";
}

TEST(ServiceStall, OldFailuresLeaveTheWindowAndAResetForgetsAll) {
  const Clock::time_point start{};
  ServiceStall watch;
  for (unsigned i = 0; i < kStalledJobs; ++i) watch.answered(kKrb, false, start + milliseconds(1000 * i));
  EXPECT_TRUE(watch.stalled(start + kStallWindow / 2 + milliseconds(1000)));
  EXPECT_FALSE(watch.stalled(start + 2 * kStallWindow)) << "the failures are older than the window";
  for (unsigned i = 0; i < kStalledJobs; ++i) watch.answered(kKrb, false, start + 2 * kStallWindow + milliseconds(1000 * i));
  watch.reset();
  EXPECT_FALSE(watch.stalled(start + 3 * kStallWindow));
}

}  // namespace
}  // namespace mpc::node
