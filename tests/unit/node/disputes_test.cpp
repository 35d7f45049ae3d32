// Disputes: which pair serves once checks of active security have failed, from what each
// server says; and that no server, whatever it says, gets an honest one excluded or left out
// of a pair with the other honest one once it deviates again.
#include "node/disputes.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "node/membership.hpp"

namespace mpc::node {
namespace {

using Words = std::array<std::optional<DisputeWord>, 3>;
using std::chrono::milliseconds;
using Clock = Membership::Clock;

std::uint8_t bit(int party) { return static_cast<std::uint8_t>(1u << party); }

// Party `self`'s view when each party says it distrusts the parties in says[party], and the
// pairs in failed[party] failed.
DisputeVerdict view(int self, const std::array<std::uint8_t, 3>& says, bool suspended = false,
                    const std::array<bool, 3>& peer_suspended = {}, const std::array<std::uint8_t, 3>& failed = {}) {
  Words words;
  for (int party = 0; party < 3; ++party)
    if (party != self)
      words[static_cast<std::size_t>(party)] = DisputeWord{says[static_cast<std::size_t>(party)],
                                                           peer_suspended[static_cast<std::size_t>(party)],
                                                           failed[static_cast<std::size_t>(party)]};
  return judge_disputes(self, says[static_cast<std::size_t>(self)], suspended, failed[static_cast<std::size_t>(self)],
                        words);
}

TEST(DisputesTest, NoDisputeCallsForNothing) {
  for (int self = 0; self < 3; ++self) {
    const auto verdict = view(self, {0, 0, 0});
    EXPECT_EQ(verdict.missing, -1);
    EXPECT_EQ(verdict.exclude, -1);
  }
}

// Party 2 caught party 0 in their pair: 2 says so, 0 answers in kind (it adopts the claim
// against it). Every server computes the same pair from the same words.
TEST(DisputesTest, OneDisputeGivesTheSamePairEverywhere) {
  // Only the claimant asks: the outsider pairs with it.
  for (int self = 0; self < 3; ++self) {
    const auto verdict = view(self, {0, 0, bit(0)});
    EXPECT_EQ(verdict.missing, 0) << "at party " << self;
    EXPECT_EQ(verdict.exclude, -1);
  }
  // Both ask: the lower-numbered of the two serves with the outsider.
  for (int self = 0; self < 3; ++self) {
    const auto verdict = view(self, {bit(2), 0, bit(0)});
    EXPECT_EQ(verdict.missing, 2) << "at party " << self;
  }
}

// One dispute {1, 2}, claimed by party 1: the outsider 0 pairs with 1. Once that pair fails a
// check naming neither member (as seen by 0 and 1), 0 pairs with 2 instead, whichever of 1 and 2
// deviated: a lying claimant loses the seat it failed, and a dealer of false checks meets the
// outsider. Party 2 alone cannot fail the pair it is not in.
TEST(DisputesTest, AFailedPairOfOneDisputeHandsTheSeatToTheOtherDisputedParty) {
  for (int self = 0; self < 3; ++self) {
    EXPECT_EQ(view(self, {0, bit(2), 0}).missing, 2) << "at party " << self;
    // Pair {0, 1} (without 2) failed, as its members saw.
    EXPECT_EQ(view(self, {0, bit(2), 0}, false, {}, {bit(2), bit(2), 0}).missing, 1) << "at party " << self;
    // Said only by party 2, which is not in that pair: nothing changes.
    EXPECT_EQ(view(self, {0, bit(2), 0}, false, {}, {0, 0, bit(2)}).missing, self == 2 ? 1 : 2) << "at party " << self;
    // Both pairs of the outsider failed: back to the claimant's.
    EXPECT_EQ(view(self, {0, bit(2), 0}, false, {}, {bit(2) | bit(1), bit(2), bit(1)}).missing, 2)
        << "at party " << self;
  }
}

// Every dispute an honest server knows contains the deviating server: the one in two is it.
TEST(DisputesTest, ThePartyInTwoDisputesIsExcluded) {
  for (int deviating = 0; deviating < 3; ++deviating) {
    std::array<std::uint8_t, 3> says{};
    for (int honest = 0; honest < 3; ++honest)
      if (honest != deviating) says[static_cast<std::size_t>(honest)] = bit(deviating);
    for (int self = 0; self < 3; ++self) {
      const auto verdict = view(self, says);
      EXPECT_EQ(verdict.exclude, deviating) << "at party " << self;
      EXPECT_EQ(verdict.missing, deviating);
    }
  }
}

// A deviating server claims what it likes, to whom it likes: it never gets an honest server
// excluded, and whatever pair it talks an honest server into includes it, so that its next
// deviation there is its second dispute.
TEST(DisputesTest, FalseClaimsNeverExcludeAnHonestServer) {
  for (int deviating = 0; deviating < 3; ++deviating)
    for (std::uint8_t claim = 0; claim < 8; ++claim) {
      const std::uint8_t said = static_cast<std::uint8_t>(claim & ~bit(deviating));
      for (int self = 0; self < 3; ++self) {
        if (self == deviating) continue;
        // Honest servers distrust only the deviating server, and only after a claim against them.
        std::array<std::uint8_t, 3> says{};
        says[static_cast<std::size_t>(deviating)] = said;
        for (int honest = 0; honest < 3; ++honest)
          if (honest != deviating && (said & bit(honest)) != 0) says[static_cast<std::size_t>(honest)] = bit(deviating);
        const auto verdict = view(self, says);
        EXPECT_TRUE(verdict.exclude == -1 || verdict.exclude == deviating)
            << "deviating " << deviating << " claiming " << int(said) << " at " << self;
        // An honest server is left out only when the deviating one claimed a dispute, and
        // then the deviating one serves: beside the other honest server, which has no
        // dispute with it yet.
        if (verdict.missing >= 0 && verdict.missing != deviating) {
          EXPECT_NE(said, 0) << "deviating " << deviating << " at " << self;
          const int partner = 3 - verdict.missing - deviating;
          EXPECT_EQ(says[static_cast<std::size_t>(partner)] & bit(deviating), 0)
              << "deviating " << deviating << " claiming " << int(said) << " at " << self;
        }
      }
    }
}

// After the pair serving with the deviating server catches it, both honest servers agree.
TEST(DisputesTest, TheSecondCatchEndsWithTheHonestPair) {
  // Party 0 deviates; party 1 caught it, and 0 claimed 1 back: {0,1} in dispute, and by the
  // lower number 0 serves with 2.
  std::array<std::uint8_t, 3> says{bit(1), bit(0), 0};
  EXPECT_EQ(view(2, says).missing, 1);
  // 2 catches 0 there: 0 is in two disputes at both honest servers.
  says[2] = bit(0);
  says[0] = static_cast<std::uint8_t>(bit(1) | bit(2));
  EXPECT_EQ(view(1, says).exclude, 0);
  EXPECT_EQ(view(2, says).exclude, 0);
}

TEST(DisputesTest, ASuspensionCallsForServersOneAndTwo) {
  EXPECT_EQ(view(0, {0, 0, 0}, true).missing, kSuspendedServiceMissing);
  EXPECT_EQ(view(1, {0, 0, 0}, false, {false, false, true}).missing, kSuspendedServiceMissing);
  // A dispute says more than a suspension.
  EXPECT_EQ(view(2, {0, bit(0), 0}, true).missing, 0);
}

// While three-party service is suspended, a pair that failed a check naming neither member is
// passed over: servers 1 and 2, then 2 and 3, then 1 and 3.
TEST(DisputesTest, AFailedPairPassesTheServiceToTheNextPair) {
  for (int self = 0; self < 3; ++self) {
    EXPECT_EQ(view(self, {0, 0, 0}, true, {}, {bit(2), bit(2), bit(2)}).missing, 0) << "at party " << self;
    const std::uint8_t two = static_cast<std::uint8_t>(bit(2) | bit(0));
    EXPECT_EQ(view(self, {0, 0, 0}, true, {}, {two, two, two}).missing, 1) << "at party " << self;
    // Every pair failed: none is trusted more, and servers 1 and 2 serve again.
    EXPECT_EQ(view(self, {0, 0, 0}, true, {}, {0b111, 0b111, 0b111}).missing, kSuspendedServiceMissing);
  }
  // Without a suspension a failed pair calls for nothing (the pair serving for an outage has no other).
  EXPECT_EQ(view(0, {0, 0, 0}, false, {}, {bit(2), bit(2), bit(2)}).missing, -1);
  // A dispute says more: 1 asks, so 2 pairs with 1 (the pair without 0), and once that pair has
  // failed, with 0 instead (AFailedPairOfOneDisputeHandsTheSeatToTheOtherDisputedParty), never
  // in the suspension's order.
  EXPECT_EQ(view(2, {0, bit(0), 0}, true, {}, {0, 0, 0}).missing, 0);
  EXPECT_EQ(view(2, {0, bit(0), 0}, true, {}, {bit(0), bit(0), bit(0)}).missing, 1);
  EXPECT_EQ(view(2, {0, bit(0), 0}, true, {}, {bit(2), bit(2), bit(2)}).missing, 0);
}

// A pair's failure counts from its own members: a server outside it cannot set it aside. So
// the deviating server, whatever it says, moves the service only away from its own pairs, and
// the honest pair, once reached, keeps serving.
TEST(DisputesTest, OnlyAPairsMembersSetItAside) {
  // Party 2 says the pair without 2 (parties 0 and 1) failed: not its pair, nothing changes.
  for (int self = 0; self < 2; ++self)
    EXPECT_EQ(view(self, {0, 0, 0}, true, {}, {0, 0, bit(2)}).missing, 2) << "at party " << self;
  // Party 1 says it, a member: taken up.
  EXPECT_EQ(view(0, {0, 0, 0}, true, {}, {0, bit(2), 0}).missing, 0);
  EXPECT_EQ(view(2, {0, 0, 0}, true, {}, {0, bit(2), 0}).missing, 0);
  for (int deviating = 0; deviating < 3; ++deviating)
    for (std::uint8_t claim = 0; claim < 8; ++claim) {
      // The honest pair runs without the deviating server; its members never call it failed.
      std::array<std::uint8_t, 3> failed{};
      failed[static_cast<std::size_t>(deviating)] = claim;
      for (int self = 0; self < 3; ++self) {
        if (self == deviating) continue;
        const auto pair_failed = (failed_pairs_known(0, [&] {
                                    Words words;
                                    for (int party = 0; party < 3; ++party)
                                      if (party != self)
                                        words[static_cast<std::size_t>(party)] =
                                            DisputeWord{0, true, failed[static_cast<std::size_t>(party)]};
                                    return words;
                                  }()) >> deviating) & 1u;
        EXPECT_EQ(pair_failed, 0u) << "party " << deviating << " claims " << int(claim) << ", seen at " << self;
      }
    }
}

TEST(DisputesTest, EveryPairInADisputeCallsForNothing) {
  const auto verdict = view(0, {bit(1), bit(2), bit(0)});
  EXPECT_EQ(verdict.missing, -1);
  EXPECT_EQ(verdict.exclude, -1);
}

constexpr MembershipTiming kTiming{milliseconds(100), milliseconds(500), milliseconds(1000)};

wire::Hello hello(std::uint8_t heard, std::uint8_t distrusts = 0, bool failed = false, std::uint32_t readmissions = 0) {
  wire::Hello out{heard, wire::ClusterMode::Full, wire::kNoParty};
  out.distrusts = distrusts;
  out.three_party_failed = failed;
  out.readmissions = readmissions;
  return out;
}

// Party 0's view of a cluster where everyone hears everyone.
void all_heard(Membership& membership, Clock::time_point at, std::uint8_t distrusts_1 = 0, std::uint8_t distrusts_2 = 0,
               bool failed_2 = false, std::uint32_t readmissions = 0) {
  membership.hello(1, hello(0b101, distrusts_1, false, readmissions), at);
  membership.hello(2, hello(0b011, distrusts_2, failed_2, readmissions), at);
}

TEST(MembershipDisputesTest, ACaughtPartnerIsServedWithoutHoweverWellItIsHeard) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  all_heard(membership, start + milliseconds(100));
  EXPECT_FALSE(membership.update(start + milliseconds(100)));
  membership.caught(2);
  EXPECT_EQ(membership.own_hello(start + milliseconds(100)).distrusts, bit(2));
  const auto change = membership.update(start + milliseconds(100));
  ASSERT_TRUE(change);
  EXPECT_EQ(change->mode, wire::ClusterMode::TwoParty);
  EXPECT_EQ(change->missing, 2);
  for (int tick = 2; tick <= 30; ++tick) {
    all_heard(membership, start + milliseconds(100 * tick));
    EXPECT_FALSE(membership.update(start + milliseconds(100 * tick))) << "back at " << 100 * tick << " ms";
  }
}

TEST(MembershipDisputesTest, AClaimAgainstThisServerIsAClaimAgainstItsMaker) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  all_heard(membership, start + milliseconds(100), 0, bit(0));
  EXPECT_EQ(membership.distrusts(), bit(2));
  // 2 stops saying it: the dispute stays (it was said over an authenticated link).
  all_heard(membership, start + milliseconds(200));
  EXPECT_EQ(membership.distrusts(), bit(2));
  // Claims about others are theirs: party 1 distrusting 2 makes no dispute of 0's own.
  Membership other(0, kTiming, true, start);
  all_heard(other, start + milliseconds(100), bit(2));
  EXPECT_EQ(other.distrusts(), 0);
  EXPECT_EQ(other.disputes(start + milliseconds(100)).missing, 2);
}

TEST(MembershipDisputesTest, ASuspensionIsTakenUpAndSetsServerThreeAside) {
  const auto start = Clock::now();
  Membership membership(2, kTiming, true, start);
  membership.hello(0, hello(0b110), start + milliseconds(100));
  membership.hello(1, hello(0b101, 0, true), start + milliseconds(100));
  EXPECT_TRUE(membership.three_party_failed());
  EXPECT_TRUE(membership.own_hello(start + milliseconds(100)).three_party_failed);
  EXPECT_TRUE(membership.set_aside(start + milliseconds(100)));
  EXPECT_FALSE(membership.update(start + milliseconds(100)));  // it stays in Full, serving nothing
}

// A pair failed while three-party service is suspended: its members serve the next pair, the
// server left aside joins it from what they say, and a readmission drops it all.
TEST(MembershipDisputesTest, AFailedPairIsLeftForTheNextAndTheThirdFollowsItsMembers) {
  const auto start = Clock::now();
  Membership first(0, kTiming, true, start);
  all_heard(first, start + milliseconds(100), 0, 0, true);
  ASSERT_TRUE(first.three_party_failed());
  auto change = first.update(start + milliseconds(100));
  ASSERT_TRUE(change);
  EXPECT_EQ(change->missing, 2);
  first.pair_failed(2);
  EXPECT_EQ(first.own_hello(start + milliseconds(100)).failed_pairs, bit(2));
  all_heard(first, start + milliseconds(200), 0, 0, true);
  change = first.update(start + milliseconds(200));
  // The next pair runs without this server: it is left aside, in three-party mode serving nothing.
  ASSERT_TRUE(change);
  EXPECT_EQ(change->mode, wire::ClusterMode::Full);
  EXPECT_EQ(first.disputes(start + milliseconds(200)).missing, 0);
  EXPECT_TRUE(first.set_aside(start + milliseconds(200)));

  // Party 2, set aside until now, hears party 0 say the pair without 2 failed: a member's word.
  Membership third(2, kTiming, true, start);
  wire::Hello from_first = hello(0b110, 0, true);
  from_first.failed_pairs = bit(2);
  third.hello(0, from_first, start + milliseconds(100));
  third.hello(1, hello(0b101, 0, true), start + milliseconds(100));
  EXPECT_EQ(third.failed_pairs(), 0);  // not its own: known from party 0 while it says so
  EXPECT_EQ(third.failed_pairs_known(start + milliseconds(100)), bit(2));
  change = third.update(start + milliseconds(100));
  ASSERT_TRUE(change);
  EXPECT_EQ(change->missing, 0);

  first.clear_disputes();
  EXPECT_EQ(first.failed_pairs(), 0);
  EXPECT_FALSE(first.three_party_failed());
}

TEST(MembershipDisputesTest, ClearingDropsDisputesAndIgnoresPeersThatHaveNotTakenTheReadmission) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  all_heard(membership, start + milliseconds(100), 0, bit(0), true);
  ASSERT_TRUE(membership.update(start + milliseconds(100)));
  EXPECT_EQ(membership.mode(), wire::ClusterMode::TwoParty);
  membership.clear_disputes();
  EXPECT_EQ(membership.readmissions(), 1u);
  EXPECT_EQ(membership.own_hello(start + milliseconds(200)).readmissions, 1u);
  // Peers that have not taken the readmission yet are not listened to, however long after.
  for (int at = 300; at <= 1200; at += 100) all_heard(membership, start + milliseconds(at), 0, bit(0), true);
  EXPECT_EQ(membership.distrusts(), 0);
  EXPECT_FALSE(membership.three_party_failed());
  EXPECT_EQ(membership.disputes(start + milliseconds(1200)).missing, -1);
  EXPECT_FALSE(membership.peers_readmissions(start + milliseconds(1200)));
  // Back to three-party service as after an outage: once the third was heard for rejoin.
  const auto back = membership.update(start + milliseconds(1200));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->mode, wire::ClusterMode::Full);
  // A peer that has taken it and says so again is taken up: a dispute after the readmission.
  all_heard(membership, start + milliseconds(1300), 0, bit(0), false, 1);
  EXPECT_EQ(membership.distrusts(), bit(2));
}

TEST(MembershipDisputesTest, AReadmissionMissedIsTakenFromBothPeersAndFromNeitherAlone) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  membership.restore_disputes(0, true, 0, 4);  // suspended when it went down, 4 readmissions then
  all_heard(membership, start + milliseconds(100));
  ASSERT_TRUE(membership.update(start + milliseconds(100)));
  EXPECT_EQ(membership.mode(), wire::ClusterMode::TwoParty);
  EXPECT_EQ(membership.missing(), 2);
  // One peer counting more is not enough: it may say what it likes.
  membership.hello(1, hello(0b101, 0, false, 9), start + milliseconds(200));
  membership.hello(2, hello(0b011, 0, false, 4), start + milliseconds(200));
  EXPECT_FALSE(membership.peers_readmissions(start + milliseconds(200)));
  // Both: the readmission this server missed, at the fewer of their counts.
  membership.hello(2, hello(0b011, 0, false, 5), start + milliseconds(300));
  const auto taken = membership.peers_readmissions(start + milliseconds(300));
  ASSERT_TRUE(taken);
  EXPECT_EQ(*taken, 5u);
  membership.adopt_readmissions(*taken);
  EXPECT_FALSE(membership.three_party_failed());
  EXPECT_FALSE(membership.peers_readmissions(start + milliseconds(300)));
  // A peer's hello older than peer_down says nothing.
  membership.hello(1, hello(0b101, 0, false, 7), start + milliseconds(400));
  membership.hello(2, hello(0b011, 0, false, 7), start + milliseconds(400));
  EXPECT_FALSE(membership.peers_readmissions(start + milliseconds(1000)));
}

}  // namespace
}  // namespace mpc::node
