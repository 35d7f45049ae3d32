// The zero test of zero_test.hpp, with three parties' shares made by the dealer.
#include "protocol/rss3/zero_test.hpp"

#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>

#include "protocol/rss3/shares.hpp"

namespace mpc::rss3 {
namespace {

struct Keys {
  std::array<PrfKey, 3> edge{};  // k_i, shared by parties i and i+1
};

Keys random_keys() {
  Keys keys;
  for (auto& key : keys.edge) randombytes_buf(key.data(), key.size());
  return keys;
}

// Party i's zero-test answer for its share of a dealt block, under keys own and previous.
Block answer_of(const ByteShare& share, const PrfKey& own, const PrfKey& previous, BatchNonce id) {
  Block x{};
  Block a{};
  std::copy_n(share.x.begin(), 16, x.begin());
  std::copy_n(share.a.begin(), 16, a.begin());
  return zero_test_share(x, a, own, previous, id);
}

std::array<Block, 3> answers_for(const Block& secret, const Keys& keys, BatchNonce id) {
  const auto shares = share_bytes(secret);
  std::array<Block, 3> answers{};
  for (int party = 0; party < 3; ++party)
    answers[party] = answer_of(shares[party], keys.edge[party], keys.edge[previous_party(party)], id);
  return answers;
}

Block sum(const std::array<Block, 3>& answers) {
  Block out{};
  for (const auto& answer : answers)
    for (std::size_t i = 0; i < 16; ++i) out[i] ^= answer[i];
  return out;
}

TEST(ZeroTestTest, ZeroPassesAndAnythingElseFails) {
  const Keys keys = random_keys();
  EXPECT_TRUE(zero_test_passes(answers_for(Block{}, keys, {1, 1})));
  for (int bit = 0; bit < 128; bit += 9) {
    Block secret{};
    secret[bit / 8] = static_cast<std::uint8_t>(1u << (bit % 8));
    EXPECT_FALSE(zero_test_passes(answers_for(secret, keys, {1, 2}))) << "bit " << bit;
  }
}

TEST(ZeroTestTest, ANonZeroBlockOpensToAFreshValueNotToItself) {
  const Keys keys = random_keys();
  Block secret{};
  randombytes_buf(secret.data(), secret.size());
  const Block first = sum(answers_for(secret, keys, {7, 1}));
  const Block again = sum(answers_for(secret, keys, {7, 1}));
  const Block other_id = sum(answers_for(secret, keys, {7, 2}));
  // r * s: the same for the same id (fresh shares of s change nothing), another for another id,
  // and never s itself.
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other_id);
  EXPECT_NE(first, secret);
  EXPECT_NE(other_id, secret);
}

TEST(ZeroTestTest, APartyWithOtherKeysMakesEvenZeroFail) {
  // A party that computed with keys bound to another copy of a request: its neighbours'
  // randomness does not cancel its own, so the client sees noise, not the test's result.
  const Keys keys = random_keys();
  const auto shares = share_bytes(Block{});
  std::array<Block, 3> answers{};
  for (int party = 0; party < 3; ++party) {
    PrfKey own = keys.edge[party];
    if (party == 1) own[0] ^= 1;
    answers[party] = answer_of(shares[party], own, keys.edge[previous_party(party)], {3, 3});
  }
  EXPECT_FALSE(zero_test_passes(answers));
}

TEST(ZeroTestTest, OneDeviatingPartyCannotMakeANonZeroBlockPass) {
  // Party 2 answers what would pass for zero from its own view: the others' answers for s
  // plus its own for a zero block. r * s still carries the rho it lacks.
  const Keys keys = random_keys();
  Block secret{};
  secret[5] = 0x40;
  const auto honest = answers_for(secret, keys, {9, 9});
  std::array<Block, 3> deviating = honest;
  deviating[2] = answer_of(share_bytes(Block{})[2], keys.edge[2], keys.edge[1], {9, 9});
  EXPECT_FALSE(zero_test_passes(deviating));
  EXPECT_FALSE(zero_test_passes(honest));
}

}  // namespace
}  // namespace mpc::rss3
