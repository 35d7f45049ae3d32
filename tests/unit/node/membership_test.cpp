// Membership: when two servers of three switch to two-party service, and when they return.
#include "node/membership.hpp"

#include <gtest/gtest.h>

#include <array>

#include "node/pair_service.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::node {
namespace {

using std::chrono::milliseconds;
using Clock = Membership::Clock;

constexpr MembershipTiming kTiming{milliseconds(100), milliseconds(500), milliseconds(1000)};

wire::Hello hello_hearing(std::uint8_t heard, wire::ClusterMode mode = wire::ClusterMode::Full,
                          std::uint8_t missing = wire::kNoParty) {
  return wire::Hello{heard, mode, missing};
}

// Party 0's view: every peer heard at `at`, each saying it hears everybody.
void all_heard(Membership& membership, Clock::time_point at) {
  membership.hello(1, hello_hearing(0b101), at);
  membership.hello(2, hello_hearing(0b011), at);
}

// Party 0's view at 720 ms: everyone was heard at 700 ms, then party 2's session was lost
// and party 1 says it no longer hears party 2 either.
void lose_party_2(Membership& membership, Clock::time_point start) {
  all_heard(membership, start + milliseconds(700));
  membership.lost(2);
  membership.hello(1, hello_hearing(0b001), start + milliseconds(720));
}

TEST(MembershipTest, StaysFullWhileEveryoneIsHeard) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  for (int tick = 1; tick <= 30; ++tick) {
    const auto now = start + milliseconds(100 * tick);
    all_heard(membership, now);
    EXPECT_FALSE(membership.update(now));
  }
  EXPECT_EQ(membership.mode(), wire::ClusterMode::Full);
  EXPECT_EQ(membership.serving(), (std::vector<int>{0, 1, 2}));
}

TEST(MembershipTest, SwitchesWhenThePartnerAlsoLostTheThird) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  all_heard(membership, start + milliseconds(700));
  membership.lost(2);
  // The partner still hears party 2: no switch (party 0 alone may be cut off from it).
  membership.hello(1, hello_hearing(0b101), start + milliseconds(710));
  EXPECT_FALSE(membership.update(start + milliseconds(710)));
  // The partner no longer hears it either: two-party service without party 2.
  membership.hello(1, hello_hearing(0b001), start + milliseconds(720));
  const auto change = membership.update(start + milliseconds(720));
  ASSERT_TRUE(change);
  EXPECT_EQ(change->mode, wire::ClusterMode::TwoParty);
  EXPECT_EQ(change->missing, 2);
  EXPECT_EQ(membership.serving(), (std::vector<int>{0, 1}));
  EXPECT_EQ(membership.pair_leader(), 0);
  const wire::Hello own = membership.own_hello(start + milliseconds(720));
  EXPECT_EQ(own.mode, wire::ClusterMode::TwoParty);
  EXPECT_EQ(own.missing, 2);
  EXPECT_EQ(own.heard, 0b010);
}

TEST(MembershipTest, SilenceCountsAsDownAfterPeerDown) {
  const auto start = Clock::now();
  Membership membership(1, kTiming, true, start);
  membership.hello(0, hello_hearing(0b110), start + milliseconds(600));
  membership.hello(2, hello_hearing(0b011), start + milliseconds(600));
  // Party 0 goes silent; party 2 keeps talking and stops hearing party 0 too.
  for (int tick = 1; tick <= 5; ++tick) {
    const auto now = start + milliseconds(600 + 100 * tick);
    membership.hello(2, hello_hearing(0b010), now);
    EXPECT_FALSE(membership.update(now)) << "switched " << 100 * tick << " ms after the last word";
  }
  const auto now = start + milliseconds(1200);
  membership.hello(2, hello_hearing(0b010), now);
  const auto change = membership.update(now);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->missing, 0);
  EXPECT_EQ(membership.pair_leader(), 1);
}

TEST(MembershipTest, NoSwitchBeforeAPeerDownHasPassedSinceStart) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  membership.hello(1, hello_hearing(0b001), start + milliseconds(50));
  EXPECT_FALSE(membership.update(start + milliseconds(100)));
}

TEST(MembershipTest, OffNeverSwitches) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, false, start);
  lose_party_2(membership, start);
  EXPECT_FALSE(membership.update(start + milliseconds(720)));
  EXPECT_FALSE(membership.update(start + milliseconds(5000)));
}

TEST(MembershipTest, ReturnsOnlyAfterTheThirdIsHeardForRejoinAndHearsIt) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  lose_party_2(membership, start);
  ASSERT_TRUE(membership.update(start + milliseconds(720)));
  // Party 2 is back at 2000 ms and talks every 100 ms.
  const auto back = start + milliseconds(2000);
  for (int tick = 0; tick < 10; ++tick) {
    const auto now = back + milliseconds(100 * tick);
    membership.hello(1, hello_hearing(0b101, wire::ClusterMode::TwoParty, 2), now);
    membership.hello(2, hello_hearing(0b011), now);
    EXPECT_FALSE(membership.update(now)) << "returned " << 100 * tick << " ms after the third came back";
  }
  const auto now = back + milliseconds(1000);
  membership.hello(1, hello_hearing(0b101, wire::ClusterMode::TwoParty, 2), now);
  membership.hello(2, hello_hearing(0b011), now);
  const auto change = membership.update(now);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->mode, wire::ClusterMode::Full);
  EXPECT_EQ(membership.missing(), -1);
}

// The partner keeps serving as a pair and does not talk to the returning server (party 2 hears
// only this one): this server returns all the same. One that the returning server does not
// hear stays.
TEST(MembershipTest, APartnerThatShunsTheReturningServerCannotHoldThePair) {
  const auto start = Clock::now();
  for (const std::uint8_t returning_hears : {std::uint8_t{0b001}, std::uint8_t{0b010}}) {
    Membership membership(0, kTiming, true, start);
    lose_party_2(membership, start);
    ASSERT_TRUE(membership.update(start + milliseconds(720)));
    const auto back = start + milliseconds(2000);
    std::optional<ModeChange> change;
    for (int tick = 0; tick <= 12 && !change; ++tick) {
      const auto now = back + milliseconds(100 * tick);
      membership.hello(1, hello_hearing(0b001, wire::ClusterMode::TwoParty, 2), now);
      membership.hello(2, hello_hearing(returning_hears), now);
      change = membership.update(now);
    }
    if (returning_hears == 0b001) {
      ASSERT_TRUE(change) << "the partner's silence towards the returning server held this one in the pair";
      EXPECT_EQ(change->mode, wire::ClusterMode::Full);
    } else {
      EXPECT_FALSE(change) << "returned though the returning server does not hear this one";
      EXPECT_EQ(membership.mode(), wire::ClusterMode::TwoParty);
    }
  }
}

TEST(MembershipTest, AServerLeftAloneReturnsToThreePartyService) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  lose_party_2(membership, start);
  ASSERT_TRUE(membership.update(start + milliseconds(720)));
  membership.lost(1);
  const auto change = membership.update(start + milliseconds(730));
  ASSERT_TRUE(change);
  EXPECT_EQ(change->mode, wire::ClusterMode::Full);
}

TEST(MembershipTest, AReturningServerKnowsItIsNotTakenBackYet) {
  const auto start = Clock::now();
  Membership membership(2, kTiming, true, start);
  const auto now = start + milliseconds(300);
  membership.hello(0, hello_hearing(0b110, wire::ClusterMode::TwoParty, 2), now);
  EXPECT_FALSE(membership.awaiting_return(now));
  membership.hello(1, hello_hearing(0b101, wire::ClusterMode::TwoParty, 2), now);
  EXPECT_TRUE(membership.awaiting_return(now));
  EXPECT_FALSE(membership.awaiting_return(now + milliseconds(600)));  // stale words say nothing
}

wire::Hello hello_excluding(std::uint8_t heard, std::uint8_t excluded, wire::ClusterMode mode = wire::ClusterMode::Full,
                            std::uint8_t missing = wire::kNoParty) {
  wire::Hello hello = hello_hearing(heard, mode, missing);
  hello.excluded = excluded;
  return hello;
}

// An operator's exclusion holds however well the excluded server is heard, and ends only when
// it is lifted: then the usual return applies.
TEST(MembershipTest, AnExcludedServerIsServedWithoutHoweverWellItIsHeard) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  all_heard(membership, start + milliseconds(100));
  membership.set_excluded(2, start + milliseconds(100));
  const auto change = membership.update(start + milliseconds(100));
  ASSERT_TRUE(change);
  EXPECT_EQ(change->mode, wire::ClusterMode::TwoParty);
  EXPECT_EQ(change->missing, 2);
  EXPECT_EQ(membership.own_hello(start + milliseconds(100)).excluded, 2);
  for (int tick = 2; tick <= 40; ++tick) {
    const auto now = start + milliseconds(100 * tick);
    membership.hello(1, hello_excluding(0b101, 2, wire::ClusterMode::TwoParty, 2), now);
    membership.hello(2, hello_excluding(0b011, 2), now);
    EXPECT_FALSE(membership.update(now)) << "the excluded server was taken back at " << 100 * tick << " ms";
  }
  membership.set_excluded(-1, start + milliseconds(4050));
  const auto now = start + milliseconds(4100);
  membership.hello(1, hello_hearing(0b101, wire::ClusterMode::TwoParty, 2), now);
  membership.hello(2, hello_hearing(0b011), now);
  const auto back = membership.update(now);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->mode, wire::ClusterMode::Full);
}

TEST(MembershipTest, TheExcludedServerJoinsNoPair) {
  const auto start = Clock::now();
  Membership membership(2, kTiming, true, start);
  membership.hello(0, hello_hearing(0b010), start + milliseconds(700));
  membership.hello(1, hello_hearing(0b001), start + milliseconds(700));
  membership.lost(1);
  membership.hello(0, hello_hearing(0b100), start + milliseconds(720));
  ASSERT_TRUE(membership.update(start + milliseconds(720)));  // the pair (2, 0) without party 1
  ASSERT_EQ(membership.mode(), wire::ClusterMode::TwoParty);
  membership.set_excluded(2, start + milliseconds(730));
  const auto change = membership.update(start + milliseconds(730));
  ASSERT_TRUE(change);
  EXPECT_EQ(change->mode, wire::ClusterMode::Full);
  membership.hello(0, hello_excluding(0b100, 2), start + milliseconds(800));
  EXPECT_FALSE(membership.update(start + milliseconds(5000)));
  EXPECT_EQ(membership.mode(), wire::ClusterMode::Full);
}

// With the excluded server's would-be partner gone too, no pair is left to serve.
TEST(MembershipTest, NoPairServesWhenThePartnerOfAnExclusionIsDown) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  all_heard(membership, start + milliseconds(100));
  membership.set_excluded(2, start + milliseconds(100));
  ASSERT_TRUE(membership.update(start + milliseconds(100)));
  membership.lost(1);
  const auto change = membership.update(start + milliseconds(200));
  ASSERT_TRUE(change);
  EXPECT_EQ(change->mode, wire::ClusterMode::Full);
  EXPECT_FALSE(membership.update(start + milliseconds(300)));
}

// A server follows an exclusion or a readmission it missed only when both peers say it.
TEST(MembershipTest, FollowsOnlyWhatBothPeersSayOfAnExclusion) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  const auto now = start + milliseconds(300);
  membership.hello(1, hello_excluding(0b101, 2), now);
  membership.hello(2, hello_hearing(0b011), now);
  EXPECT_FALSE(membership.peers_exclusion(now)) << "one peer's word excluded a server";
  membership.hello(2, hello_excluding(0b011, 1), now);
  EXPECT_FALSE(membership.peers_exclusion(now)) << "two different words excluded a server";
  membership.hello(2, hello_excluding(0b011, 2), now);
  ASSERT_TRUE(membership.peers_exclusion(now));
  EXPECT_EQ(*membership.peers_exclusion(now), 2);
  EXPECT_FALSE(membership.peers_exclusion(now + milliseconds(600))) << "stale words were followed";
  membership.set_excluded(2, now);
  EXPECT_FALSE(membership.peers_exclusion(now)) << "nothing to follow when it already holds the same";
  const auto later = now + milliseconds(600);
  membership.hello(1, hello_hearing(0b101), later);
  EXPECT_FALSE(membership.peers_exclusion(later)) << "one peer's word readmitted a server";
  membership.hello(2, hello_hearing(0b011), later);
  ASSERT_TRUE(membership.peers_exclusion(later));
  EXPECT_EQ(*membership.peers_exclusion(later), -1);
}

// The operator's exclusion reaches the three servers one after another: the first to take it
// still hears both peers' hellos sent before it reached them. Those are not a readmission.
TEST(MembershipTest, HellosSentBeforeTheOperatorsWordReachedTheirSendersAreNotFollowed) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  const auto excluded_at = start + milliseconds(1000);
  membership.set_excluded(2, excluded_at);
  for (const auto after : {milliseconds(10), milliseconds(100), milliseconds(450)}) {
    const auto at = excluded_at + after;
    membership.hello(1, hello_hearing(0b101), at);
    membership.hello(2, hello_hearing(0b011), at);
    EXPECT_FALSE(membership.peers_exclusion(at)) << "followed hellos " << after.count() << " ms after";
  }
  // Both peers still say nobody a peer_down later: the word never reached them, and this
  // server goes with them (the operator's tool reports the exclusion failed).
  const auto settled = excluded_at + milliseconds(600);
  membership.hello(1, hello_hearing(0b101), settled);
  membership.hello(2, hello_hearing(0b011), settled);
  ASSERT_TRUE(membership.peers_exclusion(settled));
  EXPECT_EQ(*membership.peers_exclusion(settled), -1);
}

TEST(MembershipTest, SettledOnlyWhenAllHearAllInOneMode) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  const auto now = start + milliseconds(700);
  EXPECT_FALSE(membership.settled(now));
  all_heard(membership, now);
  EXPECT_TRUE(membership.settled(now));
  // A peer that no longer hears the third: a switch may be coming.
  membership.hello(1, hello_hearing(0b001), now);
  EXPECT_FALSE(membership.settled(now));
  // A peer still serving as a pair while this one is back in three-party service.
  membership.hello(1, hello_hearing(0b101, wire::ClusterMode::TwoParty, 2), now);
  EXPECT_FALSE(membership.settled(now));
  all_heard(membership, now);
  EXPECT_FALSE(membership.settled(now + milliseconds(600)));  // nothing heard lately
}

// A peer killed just now is still within peer_down, but a job that failed on it then must be
// sent again rather than refused as a peer failure.
TEST(MembershipTest, NotSettledAfterAHeartbeatAndAHalfOfSilence) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  const auto now = start + milliseconds(700);
  all_heard(membership, now);
  EXPECT_TRUE(membership.settled(now + milliseconds(140)));
  membership.heard(1, now + milliseconds(140));
  EXPECT_FALSE(membership.settled(now + milliseconds(160)));  // party 2 silent for 160 ms
  EXPECT_TRUE(membership.hears(2, now + milliseconds(160)));
  membership.heard(2, now + milliseconds(160));
  EXPECT_TRUE(membership.settled(now + milliseconds(160)));
}

TEST(MembershipTest, HelloChangesAreSentAtOnce) {
  const auto start = Clock::now();
  Membership membership(0, kTiming, true, start);
  all_heard(membership, start);
  membership.sent(membership.own_hello(start), start);
  EXPECT_FALSE(membership.hello_changed(start + milliseconds(10)));
  EXPECT_FALSE(membership.heartbeat_due(start + milliseconds(10)));
  membership.lost(1);
  EXPECT_TRUE(membership.hello_changed(start + milliseconds(10)));
  EXPECT_TRUE(membership.heartbeat_due(start + milliseconds(100)));
}

// The halves each pair computes with are XOR shares of the key: for every missing party, the
// leader's x and the second member's a open to the secret.
TEST(PairTest, EveryPairsHalvesOpenToTheKey) {
  std::array<std::uint8_t, 32> secret{};
  for (std::size_t i = 0; i < secret.size(); ++i) secret[i] = static_cast<std::uint8_t>(7 * i + 1);
  const auto shares = rss3::share_bytes(secret);
  for (int missing = 0; missing < 3; ++missing) {
    const Pair pair{missing};
    EXPECT_NE(pair.leader(), missing);
    EXPECT_NE(pair.second(), missing);
    EXPECT_EQ(pair.index_of(pair.leader()), 0);
    EXPECT_EQ(pair.party_at(1), pair.second());
    const auto& x = shares[static_cast<std::size_t>(pair.leader())].x;
    const auto& a = shares[static_cast<std::size_t>(pair.second())].a;
    for (std::size_t i = 0; i < secret.size(); ++i) EXPECT_EQ(x[i] ^ a[i], secret[i]) << "missing " << missing;
  }
}

TEST(LinkBreaksTest, ABrokenLinkCountsForItsWindowOnly) {
  LinkBreaks breaks;
  const Clock::time_point start = Clock::now();
  const auto window = milliseconds(600);
  EXPECT_FALSE(breaks.recent(start, window));
  breaks.note(2, start);
  EXPECT_TRUE(breaks.recent(start, window));
  EXPECT_TRUE(breaks.recent(start + window, window));
  EXPECT_FALSE(breaks.recent(start + window + milliseconds(1), window));
  // Another break later restarts the window; a party out of range is ignored.
  breaks.note(0, start + milliseconds(500));
  breaks.note(7, start + milliseconds(900));
  EXPECT_TRUE(breaks.recent(start + milliseconds(1000), window));
  EXPECT_FALSE(breaks.recent(start + milliseconds(1101), window));
}

TEST(PairTest, PairSettingsNameTheOtherMemberAsTheOnePeer) {
  settings::ServerSettings own;
  own.protocol = settings::Protocol::Rss3;
  own.party = 2;
  own.peers = {settings::PeerSettings{0, "tcp://a:1", {}}, settings::PeerSettings{1, "tcp://b:2", {}}};
  const auto settings = pair_settings(own, Pair{1});  // pair (2, 0): 2 leads
  EXPECT_EQ(settings.protocol, settings::Protocol::Gc2);
  // The pair is as secure as the trio: authenticated garbling under "active" (the default).
  EXPECT_EQ(own.security, settings::Security::Active);
  EXPECT_EQ(settings.security, settings::Security::Active);
  own.security = settings::Security::Passive;
  EXPECT_EQ(pair_settings(own, Pair{1}).security, settings::Security::Passive);
  EXPECT_EQ(settings.party, 0);
  ASSERT_EQ(settings.peers.size(), 1u);
  EXPECT_EQ(settings.peers[0].party, 1);
  EXPECT_EQ(settings.peers[0].endpoint, "tcp://a:1");
  // Garbled jobs are slower: the pair takes none larger than degraded_max_job_blocks, which
  // under "active" leaves a seal's own prefetch and refuses a background refill of many nonces.
  EXPECT_EQ(settings.limits.max_job_blocks, 48u);
  EXPECT_EQ(pair_settings(own, Pair{1}).limits.max_job_blocks, 1024u);  // passive
  own.limits.degraded_max_job_blocks = 200;
  EXPECT_EQ(pair_settings(own, Pair{1}).limits.max_job_blocks, 200u);
  own.limits.max_job_blocks = 100;
  EXPECT_EQ(pair_settings(own, Pair{1}).limits.max_job_blocks, 100u);
}

}  // namespace
}  // namespace mpc::node
