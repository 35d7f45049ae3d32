// tests/unit/protocol/auth2/auth_bits_test.cpp: authenticated bits carry MACs under the peer's delta,
// with the deltas' fixed low bits; opening gives the XOR of the shares and catches a party that
// opens another share than it holds; XOR and public bits keep MACs valid; the coin toss and the
// equality check agree between honest parties and catch a deviating one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "pair_run.hpp"
#include "protocol/auth2/auth_bits.hpp"

namespace {

using namespace mpc;
using auth2::AuthBit;
using auth2::Block;
using auth2::Session;
using auth2::Step;
using test_support::run_pair;

struct Held {
  std::vector<AuthBit> bits;
  Block delta;
};

Held draw(Session& session, std::size_t n) {
  Held held{session.random_bits(n), {}};
  held.delta = session.delta();
  return held;
}

// mac = peer's key ^ bit * peer's delta, for one party's half of each bit.
bool macs_hold(const std::vector<AuthBit>& own, const std::vector<AuthBit>& peer, const Block& peer_delta) {
  for (std::size_t i = 0; i < own.size(); ++i)
    if (own[i].mac != (peer[i].key ^ (own[i].bit ? peer_delta : Block{}))) return false;
  return true;
}

TEST(AuthBits, RandomBitsCarryMacsUnderThePeersDelta) {
  const std::size_t n = 3000;
  const auto outcome = run_pair<Held>([&](Session& s) { return draw(s, n); }, [&](Session& s) { return draw(s, n); });
  ASSERT_FALSE(outcome.first.failed());
  ASSERT_FALSE(outcome.second.failed());
  const Held& first = *outcome.first.result;
  const Held& second = *outcome.second.result;
  EXPECT_EQ(first.delta.lo & 3, 3u);
  EXPECT_EQ(second.delta.lo & 3, 1u);
  EXPECT_NE(first.delta, second.delta);
  EXPECT_TRUE(macs_hold(first.bits, second.bits, second.delta));
  EXPECT_TRUE(macs_hold(second.bits, first.bits, first.delta));
  // Each party's shares are random bits, not a constant.
  for (const Held* held : {&first, &second}) {
    const auto ones = std::count_if(held->bits.begin(), held->bits.end(), [](const AuthBit& b) { return b.bit == 1; });
    EXPECT_GT(ones, 1300);
    EXPECT_LT(ones, 1700);
  }
  // A MAC of the other bit value is no MAC: the relation fails for a flipped share.
  std::vector<AuthBit> flipped = first.bits;
  flipped[7].bit ^= 1;
  EXPECT_FALSE(macs_hold(flipped, second.bits, second.delta));
}

// Opens x, x ^ y and x ^ y ^ 1 (a public bit added) of fresh shared bits x, y.
struct Opened {
  std::vector<std::uint8_t> shares_x, shares_y, x, x_xor_y, x_xor_y_not;
};

Opened open_combinations(Session& session, std::size_t n) {
  const std::vector<AuthBit> x = session.random_bits(n), y = session.random_bits(n);
  std::vector<AuthBit> sum(n), sum_not(n);
  Opened out;
  for (std::size_t i = 0; i < n; ++i) {
    sum[i] = x[i] ^ y[i];
    sum_not[i] = sum[i];
    session.add_public(sum_not[i], 1);
    out.shares_x.push_back(x[i].bit);
    out.shares_y.push_back(y[i].bit);
  }
  out.x = session.open(x);
  out.x_xor_y = session.open(sum);
  out.x_xor_y_not = session.open(sum_not);
  return out;
}

TEST(AuthBits, OpeningGivesTheXorOfTheSharesAndLinearCombinationsKeepTheirMacs) {
  const std::size_t n = 700;
  const auto outcome = run_pair<Opened>([&](Session& s) { return open_combinations(s, n); },
                                        [&](Session& s) { return open_combinations(s, n); });
  ASSERT_FALSE(outcome.first.failed()) << outcome.first.check();
  ASSERT_FALSE(outcome.second.failed()) << outcome.second.check();
  const Opened& a = *outcome.first.result;
  const Opened& b = *outcome.second.result;
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.x_xor_y, b.x_xor_y);
  EXPECT_EQ(a.x_xor_y_not, b.x_xor_y_not);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t x = a.shares_x[i] ^ b.shares_x[i], y = a.shares_y[i] ^ b.shares_y[i];
    ASSERT_EQ(a.x[i], x) << i;
    ASSERT_EQ(a.x_xor_y[i], x ^ y) << i;
    ASSERT_EQ(a.x_xor_y_not[i], x ^ y ^ 1) << i;
  }
}

std::vector<std::uint8_t> open_fresh(Session& session, std::size_t n) { return session.open(session.random_bits(n)); }

// Flips bit `index` of a party's first opening: it claims the other value of one share.
auth2::Deviation flip_opened_share(std::size_t index) {
  return [index, done = false](Step step, std::span<std::uint8_t> message) mutable {
    if (step != Step::Opening || done) return;
    message[index / 8] ^= static_cast<std::uint8_t>(1u << (index % 8));
    done = true;
  };
}

TEST(AuthBits, AShareOpenedWithTheOtherValueIsCaughtByTheMacCheck) {
  const std::size_t n = 200;
  for (const std::size_t index : {std::size_t{0}, std::size_t{77}, std::size_t{199}}) {
    SCOPED_TRACE(index);
    // Either party deviates; the honest one names the MAC check.
    const auto by_second = run_pair<std::vector<std::uint8_t>>([&](Session& s) { return open_fresh(s, n); },
                                                                [&](Session& s) { return open_fresh(s, n); }, {},
                                                                flip_opened_share(index));
    EXPECT_EQ(by_second.first.check(), "mac_check");
    const auto by_first = run_pair<std::vector<std::uint8_t>>([&](Session& s) { return open_fresh(s, n); },
                                                               [&](Session& s) { return open_fresh(s, n); },
                                                               flip_opened_share(index));
    EXPECT_EQ(by_first.second.check(), "mac_check");
  }
  // A digest of other MACs is caught as well.
  const auto bad_digest = run_pair<std::vector<std::uint8_t>>(
      [&](Session& s) { return open_fresh(s, n); }, [&](Session& s) { return open_fresh(s, n); }, {},
      [](Step step, std::span<std::uint8_t> message) {
        if (step == Step::Opening) message.back() ^= 0x40;
      });
  EXPECT_EQ(bad_digest.first.check(), "mac_check");
}

TEST(AuthBits, CoinTossAgreesAndAnOpeningOfAnotherSeedIsCaught) {
  const auto honest = run_pair<auth2::Digest>([](Session& s) { return s.coin_toss(); },
                                              [](Session& s) { return s.coin_toss(); });
  ASSERT_FALSE(honest.first.failed());
  ASSERT_FALSE(honest.second.failed());
  EXPECT_EQ(*honest.first.result, *honest.second.result);
  const auto again = run_pair<auth2::Digest>([](Session& s) { return s.coin_toss(); },
                                             [](Session& s) { return s.coin_toss(); });
  EXPECT_NE(*again.first.result, *honest.first.result);

  const auto cheating = run_pair<auth2::Digest>(
      [](Session& s) { return s.coin_toss(); }, [](Session& s) { return s.coin_toss(); },
      [](Step step, std::span<std::uint8_t> message) {
        if (step == Step::CoinOpening) message[3] ^= 1;
      });
  EXPECT_EQ(cheating.second.check(), "coin_toss");
}

TEST(AuthBits, EqualityCheckPassesEqualDigestsAndCatchesDifferentOnes) {
  auth2::Digest one{}, other{};
  one[0] = 1;
  other[0] = 2;
  const auto check = [](const auth2::Digest& digest) {
    return [digest](Session& s) {
      s.check_equal(digest, "test_check");
      return 0;
    };
  };
  const auto equal = run_pair<int>(check(one), check(one));
  EXPECT_FALSE(equal.first.failed());
  EXPECT_FALSE(equal.second.failed());
  const auto differ = run_pair<int>(check(one), check(other));
  EXPECT_EQ(differ.first.check(), "test_check");  // the first compares first
  EXPECT_TRUE(differ.second.failed());
  // An opening that does not match the commitment is caught, even of equal digests.
  const auto unbound = run_pair<int>(check(one), check(one), [](Step step, std::span<std::uint8_t> message) {
    if (step == Step::EqualityCommit) message[0] ^= 1;
  });
  EXPECT_FALSE(unbound.first.failed());
  EXPECT_EQ(unbound.second.check(), "test_check");
}

}  // namespace
