// tests/unit/protocol/auth2/and_triples_test.cpp: leaky and bucketed AND triples multiply and carry
// valid MACs; bucket sizes meet the statistical bound; a party that sends a wrong leaky product,
// a wrong revealed bit, a wrong opening of a bucket's difference or a wrong commitment is caught,
// and a single wrong product aborts exactly when the honest party's x bit is 1 (the leak the
// buckets absorb).
#include <gtest/gtest.h>

#include <random>

#include "pair_run.hpp"
#include "protocol/auth2/and_triples.hpp"

namespace {

using namespace mpc;
using auth2::AuthBit;
using auth2::AuthTriple;
using auth2::Block;
using auth2::Session;
using auth2::Step;
using test_support::run_pair;

struct Held {
  std::vector<AuthTriple> triples;
  Block delta;
};

bool mac_holds(const AuthBit& own, const AuthBit& peer, const Block& peer_delta) {
  return own.mac == (peer.key ^ (own.bit ? peer_delta : Block{}));
}

// Every triple multiplies and each of its bits carries both parties' MACs.
void expect_valid(const Held& first, const Held& second) {
  ASSERT_EQ(first.triples.size(), second.triples.size());
  std::size_t x_ones = 0, z_ones = 0;
  for (std::size_t i = 0; i < first.triples.size(); ++i) {
    const AuthTriple& a = first.triples[i];
    const AuthTriple& b = second.triples[i];
    const int x = a.x.bit ^ b.x.bit, y = a.y.bit ^ b.y.bit, z = a.z.bit ^ b.z.bit;
    ASSERT_EQ(z, x & y) << "triple " << i;
    for (const auto& [own, peer] : {std::pair{a.x, b.x}, std::pair{a.y, b.y}, std::pair{a.z, b.z}}) {
      ASSERT_TRUE(mac_holds(own, peer, second.delta)) << "triple " << i;
      ASSERT_TRUE(mac_holds(peer, own, first.delta)) << "triple " << i;
    }
    x_ones += static_cast<std::size_t>(x);
    z_ones += static_cast<std::size_t>(z);
  }
  // Random inputs: about half of x is 1, a quarter of z (where there are enough to count).
  if (first.triples.size() < 1000) return;
  const double n = static_cast<double>(first.triples.size());
  EXPECT_NEAR(x_ones / n, 0.5, 0.05);
  EXPECT_NEAR(z_ones / n, 0.25, 0.05);
}

std::function<Held(Session&)> leaky(std::size_t n) {
  return [n](Session& s) { return Held{auth2::leaky_triples(s, n), s.delta()}; };
}
std::function<Held(Session&)> bucketed(std::size_t n) {
  return [n](Session& s) { return Held{auth2::and_triples(s, n), s.delta()}; };
}

TEST(AndTriples, LeakyTriplesMultiplyAndCarryMacs) {
  const auto outcome = run_pair<Held>(leaky(2500), leaky(2500));
  ASSERT_FALSE(outcome.first.failed()) << outcome.first.check();
  ASSERT_FALSE(outcome.second.failed()) << outcome.second.check();
  expect_valid(*outcome.first.result, *outcome.second.result);
}

TEST(AndTriples, BucketedTriplesMultiplyAndCarryMacs) {
  const auto outcome = run_pair<Held>(bucketed(4096), bucketed(4096));
  ASSERT_FALSE(outcome.first.failed()) << outcome.first.check();
  ASSERT_FALSE(outcome.second.failed()) << outcome.second.check();
  expect_valid(*outcome.first.result, *outcome.second.result);
}

TEST(AndTriples, BucketSizesMeetTheStatisticalBound) {
  // WRK17's sizes at 2^-40 are 3 for 280,000 triples and 4 for 3,100; at 2^-64 they grow.
  EXPECT_EQ(auth2::bucket_size(std::size_t{1} << 20), 4u);
  EXPECT_EQ(auth2::bucket_size(std::size_t{1} << 16), 5u);
  EXPECT_EQ(auth2::bucket_size(4096), 6u);
  unsigned previous = auth2::bucket_size(1);
  for (std::size_t n = 2; n <= (std::size_t{1} << 22); n *= 2) {
    const unsigned b = auth2::bucket_size(n);
    EXPECT_LE(b, previous) << n;
    previous = b;
  }
  EXPECT_THROW(auth2::bucket_size(0), Error);
}

// XORs `error` into the leaky products of the triples in `which` (all when empty).
auth2::Deviation alter_products(std::vector<std::size_t> which, Block error = Block{0x5a5a, 0xa5a5}) {
  return [which, error](Step step, std::span<std::uint8_t> message) {
    if (step != Step::LeakyProducts) return;
    auto* blocks = reinterpret_cast<Block*>(message.data());
    const std::size_t n = message.size() / sizeof(Block);
    if (which.empty())
      for (std::size_t i = 0; i < n; ++i) blocks[i] ^= error;
    for (const std::size_t i : which) blocks[i] ^= error;
  };
}

TEST(AndTriples, WrongLeakyProductsAreCaught) {
  // Every product altered: the batch passes only if the honest x bits were all 0.
  const auto by_second = run_pair<Held>(leaky(512), leaky(512), {}, alter_products({}));
  EXPECT_EQ(by_second.first.check(), "leaky_and");
  EXPECT_TRUE(by_second.second.failed());
  const auto by_first = run_pair<Held>(leaky(512), leaky(512), alter_products({}));
  EXPECT_TRUE(by_first.second.failed());  // the first stops at its comparison: no opening comes
  const auto in_buckets = run_pair<Held>(bucketed(1024), bucketed(1024), {}, alter_products({}));
  EXPECT_EQ(in_buckets.first.check(), "leaky_and");
}

TEST(AndTriples, ASingleWrongProductAbortsExactlyWhenTheHonestXBitIsOne) {
  // The leak the buckets absorb: whether the batch aborts tells the deviating party the
  // honest party's x bit of the probed triple, and nothing else; it aborts half the time.
  const std::size_t n = 64, probed = 9;
  int passed = 0;
  const int runs = 24;
  for (int run = 0; run < runs; ++run) {
    const auto outcome = run_pair<Held>(leaky(n), leaky(n), {}, alter_products({probed}));
    if (!outcome.first.failed()) {
      ++passed;
      // Passing means the first party's (honest) x bit there was 0: the error met x = 0.
      EXPECT_EQ(outcome.first.result->triples[probed].x.bit, 0) << run;
      EXPECT_FALSE(outcome.second.failed());
      if (outcome.second.result) expect_valid(*outcome.first.result, *outcome.second.result);
    } else {
      EXPECT_EQ(outcome.first.check(), "leaky_and");
    }
  }
  // 24 fair coins: all on one side has probability 2^-23.
  EXPECT_GT(passed, 0);
  EXPECT_LT(passed, runs);
}

TEST(AndTriples, AWrongRevealedBitIsAlwaysCaught) {
  for (const std::size_t index : {std::size_t{0}, std::size_t{300}, std::size_t{511}}) {
    SCOPED_TRACE(index);
    const auto outcome = run_pair<Held>(leaky(512), leaky(512), {}, [index](Step step, std::span<std::uint8_t> message) {
      if (step == Step::LeakyReveal) message[index / 8] ^= static_cast<std::uint8_t>(1u << (index % 8));
    });
    EXPECT_EQ(outcome.first.check(), "leaky_and");
  }
}

TEST(AndTriples, AWrongOpeningOfABucketDifferenceIsCaught) {
  const auto outcome = run_pair<Held>(bucketed(1024), bucketed(1024), {}, [](Step step, std::span<std::uint8_t> message) {
    if (step == Step::Opening) message[5] ^= 0x10;
  });
  EXPECT_EQ(outcome.first.check(), "mac_check");
}

TEST(AndTriples, AFirstPartyThatOpensAnotherSeedIsCaught) {
  const auto outcome = run_pair<Held>(bucketed(1024), bucketed(1024), [](Step step, std::span<std::uint8_t> message) {
    if (step == Step::CoinOpening) message[0] ^= 0x80;
  });
  EXPECT_EQ(outcome.second.check(), "coin_toss");
}

}  // namespace
