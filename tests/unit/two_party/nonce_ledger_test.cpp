// tests/unit/two_party/nonce_ledger_test.cpp: a follower accepts each GCM nonce counter once
// per leader epoch, in whatever order the prefetch jobs' ranges arrive.
#include <gtest/gtest.h>

#include "engines/two_party/gc2_backend.hpp"

namespace {

using mpc::two_party_engine::NonceLedger;

TEST(NonceLedger, AcceptsDisjointRangesInAnyOrder) {
  NonceLedger ledger;
  EXPECT_TRUE(ledger.accept(7, 100, 10));
  EXPECT_TRUE(ledger.accept(7, 0, 50));    // below, from a job on the other worker
  EXPECT_TRUE(ledger.accept(7, 110, 5));   // touching: merged
  EXPECT_TRUE(ledger.accept(7, 50, 50));   // fills the gap exactly
  EXPECT_TRUE(ledger.accept(7, 0xffffffffu, 1));
}

TEST(NonceLedger, RefusesEveryOverlap) {
  NonceLedger ledger;
  ASSERT_TRUE(ledger.accept(7, 100, 10));
  ASSERT_TRUE(ledger.accept(7, 200, 10));
  EXPECT_FALSE(ledger.accept(7, 100, 10));  // the same range again
  EXPECT_FALSE(ledger.accept(7, 109, 1));   // its last counter
  EXPECT_FALSE(ledger.accept(7, 90, 11));   // reaching into it from below
  EXPECT_FALSE(ledger.accept(7, 105, 200)); // spanning both
  EXPECT_FALSE(ledger.accept(7, 150, 0));   // an empty range is no range
  EXPECT_TRUE(ledger.accept(7, 110, 90));   // the gap between them, and nothing else
  EXPECT_FALSE(ledger.accept(7, 150, 1));
}

TEST(NonceLedger, ANewEpochStartsAfresh) {
  NonceLedger ledger;
  ASSERT_TRUE(ledger.accept(7, 0, 10));
  EXPECT_TRUE(ledger.accept(8, 0, 10));   // the leader restarted under a new epoch
  EXPECT_FALSE(ledger.accept(8, 5, 1));
}

}  // namespace
