// tests/unit/engines/two_party/nonce_ledger_test.cpp: a follower accepts each GCM nonce counter once,
// in whatever order the prefetch jobs' ranges arrive, and never an epoch it left.
#include <gtest/gtest.h>

#include "engines/two_party/gc2_backend.hpp"

namespace {

using mpc::two_party_engine::NonceLedger;
constexpr auto kFresh = NonceLedger::Verdict::Fresh;
constexpr auto kRepeated = NonceLedger::Verdict::Repeated;
constexpr auto kEpochOpenedBefore = NonceLedger::Verdict::EpochOpenedBefore;

TEST(NonceLedger, AcceptsDisjointRangesInAnyOrder) {
  NonceLedger ledger;
  EXPECT_EQ(ledger.accept(7, 100, 10), kFresh);
  EXPECT_EQ(ledger.accept(7, 0, 50), kFresh);    // below, from a job on the other worker
  EXPECT_EQ(ledger.accept(7, 110, 5), kFresh);   // touching: merged
  EXPECT_EQ(ledger.accept(7, 50, 50), kFresh);   // fills the gap exactly
  EXPECT_EQ(ledger.accept(7, 0xffffffffu, 1), kFresh);
}

TEST(NonceLedger, RefusesEveryOverlap) {
  NonceLedger ledger;
  ASSERT_EQ(ledger.accept(7, 100, 10), kFresh);
  ASSERT_EQ(ledger.accept(7, 200, 10), kFresh);
  EXPECT_EQ(ledger.accept(7, 100, 10), kRepeated);  // the same range again
  EXPECT_EQ(ledger.accept(7, 109, 1), kRepeated);   // its last counter
  EXPECT_EQ(ledger.accept(7, 90, 11), kRepeated);   // reaching into it from below
  EXPECT_EQ(ledger.accept(7, 105, 200), kRepeated); // spanning both
  EXPECT_EQ(ledger.accept(7, 150, 0), kRepeated);   // an empty range is no range
  EXPECT_EQ(ledger.accept(7, 110, 90), kFresh);   // the gap between them, and nothing else
  EXPECT_EQ(ledger.accept(7, 150, 1), kRepeated);
}

TEST(NonceLedger, AnEpochItLeftNeverComesBack) {
  NonceLedger ledger;
  ASSERT_EQ(ledger.accept(7, 0, 10), kFresh);
  ASSERT_EQ(ledger.accept(8, 0, 10), kFresh);
  EXPECT_EQ(ledger.accept(7, 10, 10), kEpochOpenedBefore);  // E1, E2, E1: even unused counters
  EXPECT_EQ(ledger.accept(7, 0, 10), kEpochOpenedBefore);
  EXPECT_EQ(ledger.accept(8, 10, 1), kFresh);
}

TEST(NonceLedger, ARestartedFollowerRefusesEveryEpochOfTheServersLife) {
  mpc::store::EpochLedger epochs({});  // the server's ledger, which outlives an engine
  {
    NonceLedger before(&epochs);
    ASSERT_EQ(before.accept(7, 0, 10), kFresh);
  }
  NonceLedger after(&epochs);
  EXPECT_EQ(after.accept(7, 10, 10), kEpochOpenedBefore);
  EXPECT_EQ(after.accept(9, 0, 10), kFresh);
}

TEST(NonceLedger, ANewEpochStartsAfresh) {
  NonceLedger ledger;
  ASSERT_EQ(ledger.accept(7, 0, 10), kFresh);
  EXPECT_EQ(ledger.accept(8, 0, 10), kFresh);   // the leader restarted under a new epoch
  EXPECT_EQ(ledger.accept(8, 5, 1), kRepeated);
}

}  // namespace
