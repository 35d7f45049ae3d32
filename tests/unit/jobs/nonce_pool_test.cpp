#include "jobs/nonce_pool.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "common/error.hpp"

namespace mpc::jobs {
namespace {

using Clock = NoncePool::Clock;
using namespace std::chrono_literals;

wire::PublicKey client_key(std::uint8_t seed) {
  wire::PublicKey key{};
  key.fill(seed);
  return key;
}

wire::KeyId gcm_key(std::uint32_t version = 1) {
  return {"krbtgt/EXAMPLE.COM", version, wire::KeyAlgorithm::Aes256Gcm};
}

NonceShare share_of(std::uint32_t seed) {
  NonceShare share;
  for (std::size_t i = 0; i < 16; ++i) {
    share.x[i] = static_cast<std::uint8_t>(seed + i);
    share.a[i] = static_cast<std::uint8_t>(seed * 7 + i);
  }
  return share;
}

void expect_share(const std::optional<NonceShare>& got, std::uint32_t seed) {
  ASSERT_TRUE(got.has_value());
  const NonceShare expected = share_of(seed);
  EXPECT_EQ(got->x, expected.x);
  EXPECT_EQ(got->a, expected.a);
}

TEST(GcmNonce, LayoutIsEpochThenCounterBigEndian) {
  const auto nonce = make_gcm_nonce(0x0102030405060708ull, 0x090a0b0cu);
  const wire::GcmNonce expected{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  EXPECT_EQ(nonce, expected);
  EXPECT_EQ(gcm_nonce_epoch(nonce), 0x0102030405060708ull);
  EXPECT_EQ(gcm_nonce_counter(nonce), 0x090a0b0cu);
  const auto block = gcm_counter_block(nonce, 0x01020304u);
  const std::array<std::uint8_t, 16> counter{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3, 4};
  EXPECT_EQ(block, counter);
}

TEST(NonceCounter, GrowsAndNeverWraps) {
  NonceCounter counter;
  EXPECT_EQ(counter.take(3), 0u);
  EXPECT_EQ(counter.take(1), 3u);
  // The counter's top bit marks local-mask nonces (wire::kLocalMaskCounterBit): counters end
  // below it.
  NonceCounter near_end(wire::kGcmCountersPerEpoch - 2);
  EXPECT_TRUE(near_end.fits(2));
  EXPECT_FALSE(near_end.fits(3));
  EXPECT_THROW((void)near_end.take(3), Error);
  EXPECT_EQ(near_end.take(2), 0x7ffffffeu);
  EXPECT_FALSE(near_end.fits(1));
  near_end.restart();
  EXPECT_EQ(near_end.take(1), 0u);
}

TEST(NonceGuard, AcceptsOnlyRangesStrictlyAboveTheLastInTheEpoch) {
  NonceGuard guard;
  const std::vector<NonceRange> first{{0, 4}, {4, 2}};
  EXPECT_TRUE(guard.accept(7, first));
  // A replay, an overlap, and a range inside the old ones are refused; nothing is remembered.
  EXPECT_FALSE(guard.accept(7, first));
  EXPECT_FALSE(guard.accept(7, std::vector<NonceRange>{{5, 1}}));
  EXPECT_FALSE(guard.accept(7, std::vector<NonceRange>{{2, 1}}));
  // Ranges of one batch must ascend too.
  EXPECT_FALSE(guard.accept(7, std::vector<NonceRange>{{20, 2}, {10, 1}}));
  EXPECT_FALSE(guard.accept(7, std::vector<NonceRange>{{20, 2}, {21, 1}}));
  EXPECT_FALSE(guard.accept(7, std::vector<NonceRange>{{30, 0}}));
  EXPECT_TRUE(guard.accept(7, std::vector<NonceRange>{{6, 1}}));
  EXPECT_TRUE(guard.accept(7, std::vector<NonceRange>{{100, 1}}));
  EXPECT_FALSE(guard.accept(7, std::vector<NonceRange>{{50, 1}}));
  // A new epoch starts afresh; the old epoch's state is gone with it.
  EXPECT_TRUE(guard.accept(8, std::vector<NonceRange>{{0, 1}}));
  EXPECT_TRUE(guard.accept(7, std::vector<NonceRange>{{0, 1}}));
  EXPECT_FALSE(guard.accept(7, std::vector<NonceRange>{{0x7fffffffu, 2}}));
  EXPECT_FALSE(guard.accept(7, std::vector<NonceRange>{{0x80000000u, 1}}));
  EXPECT_TRUE(guard.accept(7, std::vector<NonceRange>{{0x7fffffffu, 1}}));
  EXPECT_FALSE(guard.accept(7, std::vector<NonceRange>{{0x7fffffffu, 1}}));
}

TEST(NoncePool, TakesEachEntryOnce) {
  NoncePool pool(16, 3600s);
  const auto now = Clock::now();
  const auto nonce = make_gcm_nonce(1, 1);
  ASSERT_TRUE(pool.put(client_key(1), gcm_key(), nonce, share_of(5), now));
  EXPECT_EQ(pool.size(), 1u);
  expect_share(pool.take(client_key(1), gcm_key(), nonce, now), 5);
  EXPECT_FALSE(pool.take(client_key(1), gcm_key(), nonce, now).has_value());
  EXPECT_EQ(pool.size(), 0u);
  EXPECT_FALSE(pool.take(client_key(1), gcm_key(), make_gcm_nonce(1, 2), now).has_value());
}

TEST(NoncePool, ClientsAreIsolated) {
  NoncePool pool(16, 3600s);
  const auto now = Clock::now();
  const auto nonce = make_gcm_nonce(1, 1);
  ASSERT_TRUE(pool.put(client_key(1), gcm_key(), nonce, share_of(5), now));
  EXPECT_FALSE(pool.take(client_key(2), gcm_key(), nonce, now).has_value());
  // The other client's attempt did not consume it.
  expect_share(pool.take(client_key(1), gcm_key(), nonce, now), 5);
  // Both clients may hold the same nonce value independently.
  ASSERT_TRUE(pool.put(client_key(1), gcm_key(), nonce, share_of(6), now));
  ASSERT_TRUE(pool.put(client_key(2), gcm_key(), nonce, share_of(7), now));
  EXPECT_EQ(pool.size(client_key(1)), 1u);
  EXPECT_EQ(pool.size(client_key(2)), 1u);
  expect_share(pool.take(client_key(2), gcm_key(), nonce, now), 7);
  expect_share(pool.take(client_key(1), gcm_key(), nonce, now), 6);
}

TEST(NoncePool, AnEntryServesOnlyTheKeyItWasMadeUnder) {
  NoncePool pool(16, 3600s);
  const auto now = Clock::now();
  const auto nonce = make_gcm_nonce(1, 1);
  ASSERT_TRUE(pool.put(client_key(1), gcm_key(1), nonce, share_of(5), now));
  EXPECT_FALSE(pool.take(client_key(1), gcm_key(2), nonce, now).has_value());
  expect_share(pool.take(client_key(1), gcm_key(1), nonce, now), 5);
}

TEST(NoncePool, EntriesExpireAfterTheTtl) {
  NoncePool pool(16, 10s);
  const auto start = Clock::now();
  ASSERT_TRUE(pool.put(client_key(1), gcm_key(), make_gcm_nonce(1, 1), share_of(1), start));
  ASSERT_TRUE(pool.put(client_key(1), gcm_key(), make_gcm_nonce(1, 2), share_of(2), start + 5s));
  ASSERT_TRUE(pool.put(client_key(2), gcm_key(), make_gcm_nonce(1, 3), share_of(3), start + 5s));
  // take() refuses an expired entry even before expire() runs.
  EXPECT_FALSE(pool.take(client_key(1), gcm_key(), make_gcm_nonce(1, 1), start + 10s).has_value());
  EXPECT_EQ(pool.size(), 2u);
  pool.expire(start + 14s);
  EXPECT_EQ(pool.size(), 2u);
  pool.expire(start + 15s);
  EXPECT_EQ(pool.size(), 0u);
  EXPECT_FALSE(pool.take(client_key(1), gcm_key(), make_gcm_nonce(1, 2), start + 15s).has_value());
}

TEST(NoncePool, OldestEntryOfAClientIsEvictedFirst) {
  NoncePool pool(3, 3600s);
  const auto now = Clock::now();
  for (std::uint32_t i = 1; i <= 3; ++i)
    ASSERT_TRUE(pool.put(client_key(1), gcm_key(), make_gcm_nonce(1, i), share_of(i), now));
  ASSERT_TRUE(pool.put(client_key(2), gcm_key(), make_gcm_nonce(1, 9), share_of(9), now));
  // Taking one frees a place: the next put evicts nothing.
  expect_share(pool.take(client_key(1), gcm_key(), make_gcm_nonce(1, 2), now), 2);
  ASSERT_TRUE(pool.put(client_key(1), gcm_key(), make_gcm_nonce(1, 4), share_of(4), now));
  // Full again: the oldest (1) goes, then 3.
  ASSERT_TRUE(pool.put(client_key(1), gcm_key(), make_gcm_nonce(1, 5), share_of(5), now));
  EXPECT_FALSE(pool.take(client_key(1), gcm_key(), make_gcm_nonce(1, 1), now).has_value());
  ASSERT_TRUE(pool.put(client_key(1), gcm_key(), make_gcm_nonce(1, 6), share_of(6), now));
  EXPECT_FALSE(pool.take(client_key(1), gcm_key(), make_gcm_nonce(1, 3), now).has_value());
  EXPECT_EQ(pool.size(client_key(1)), 3u);
  for (std::uint32_t i : {4u, 5u, 6u}) expect_share(pool.take(client_key(1), gcm_key(), make_gcm_nonce(1, i), now), i);
  // Another client's entries were never touched.
  expect_share(pool.take(client_key(2), gcm_key(), make_gcm_nonce(1, 9), now), 9);
}

TEST(NoncePool, ANonceSeenTwiceIsNeverServed) {
  NoncePool pool(16, 3600s);
  const auto now = Clock::now();
  const auto nonce = make_gcm_nonce(1, 1);
  ASSERT_TRUE(pool.put(client_key(1), gcm_key(), nonce, share_of(1), now));
  EXPECT_FALSE(pool.put(client_key(1), gcm_key(), nonce, share_of(2), now));
  EXPECT_FALSE(pool.take(client_key(1), gcm_key(), nonce, now).has_value());
  EXPECT_EQ(pool.size(), 0u);
}

TEST(NoncePool, RefusesAZeroBound) { EXPECT_THROW(NoncePool(0, 1s), Error); }

}  // namespace
}  // namespace mpc::jobs
