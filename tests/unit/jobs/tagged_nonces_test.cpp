#include "jobs/tagged_nonces.hpp"

#include <gtest/gtest.h>

#include "jobs/nonce_pool.hpp"

namespace mpc::jobs {
namespace {

using Clock = TaggedNonces::Clock;
using namespace std::chrono_literals;

wire::KeyId gcm_key(std::uint32_t version = 1) {
  return {"krbtgt/EXAMPLE.COM", version, wire::KeyAlgorithm::Aes256Gcm};
}

NonceShare share_of(std::uint8_t seed) {
  NonceShare share;
  share.x.fill(seed);
  share.a.fill(static_cast<std::uint8_t>(seed ^ 0x5a));
  share.keystream.resize(64);
  for (std::size_t i = 0; i < 64; ++i) share.keystream[i] = static_cast<std::uint8_t>(seed + i);
  return share;
}

TEST(TaggedNoncesTest, KeepsSharesAndKeystreamPerNonceUnderTheirKeyOnly) {
  TaggedNonces tagged(4, 60s);
  const auto now = Clock::now();
  tagged.keep(gcm_key(1), make_gcm_nonce(7, 1), share_of(1), now);
  tagged.keep(gcm_key(1), make_gcm_nonce(7, 2), share_of(2), now);
  const NonceShare* found = tagged.find(gcm_key(1), make_gcm_nonce(7, 2), now);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->x, share_of(2).x);
  EXPECT_EQ(found->a, share_of(2).a);
  ASSERT_EQ(found->keystream.size(), 64u);
  EXPECT_EQ(found->keystream[63], static_cast<std::uint8_t>(2 + 63));
  // Another kvno of the key, or a nonce never tagged, finds nothing.
  EXPECT_EQ(tagged.find(gcm_key(2), make_gcm_nonce(7, 2), now), nullptr);
  EXPECT_EQ(tagged.find(gcm_key(1), make_gcm_nonce(8, 2), now), nullptr);
  // Reopening does not use an entry up.
  EXPECT_NE(tagged.find(gcm_key(1), make_gcm_nonce(7, 2), now), nullptr);
}

TEST(TaggedNoncesTest, TheOldestMakesRoomAndEntriesExpire) {
  TaggedNonces tagged(2, 10s);
  const auto start = Clock::now();
  tagged.keep(gcm_key(), make_gcm_nonce(1, 1), share_of(1), start);
  tagged.keep(gcm_key(), make_gcm_nonce(1, 2), share_of(2), start + 1s);
  tagged.keep(gcm_key(), make_gcm_nonce(1, 3), share_of(3), start + 2s);
  EXPECT_EQ(tagged.size(), 2u);
  EXPECT_EQ(tagged.find(gcm_key(), make_gcm_nonce(1, 1), start + 2s), nullptr);
  EXPECT_NE(tagged.find(gcm_key(), make_gcm_nonce(1, 2), start + 2s), nullptr);
  // Past the TTL an entry is not served, and expire() drops it.
  EXPECT_EQ(tagged.find(gcm_key(), make_gcm_nonce(1, 2), start + 11s), nullptr);
  EXPECT_NE(tagged.find(gcm_key(), make_gcm_nonce(1, 3), start + 11s), nullptr);
  tagged.expire(start + 11s);
  EXPECT_EQ(tagged.size(), 1u);
  tagged.expire(start + 12s);
  EXPECT_EQ(tagged.size(), 0u);
}

TEST(TaggedNoncesTest, ACapacityOfZeroKeepsNothing) {
  TaggedNonces tagged(0, 10s);
  const auto now = Clock::now();
  tagged.keep(gcm_key(), make_gcm_nonce(1, 1), share_of(1), now);
  EXPECT_EQ(tagged.size(), 0u);
  EXPECT_EQ(tagged.find(gcm_key(), make_gcm_nonce(1, 1), now), nullptr);
}

}  // namespace
}  // namespace mpc::jobs
