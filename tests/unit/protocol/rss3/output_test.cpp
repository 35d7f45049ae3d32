// Output opening: masked shares still open to v, one tampering party is detected, and a
// party's masked x' is uniform and independent of the secret.
#include <gtest/gtest.h>

#include <random>

#include "common/error.hpp"
#include "protocol/rss3/output.hpp"
#include "test_util.hpp"

namespace mpc::rss3 {
namespace {

std::array<ByteShare, 3> masked_shares(const std::array<ByteShare, 3>& shares, const std::array<PrfKey, 3>& keys,
                                       BatchNonce nonce, std::size_t offset) {
  std::array<ByteShare, 3> out = shares;
  for (int i = 0; i < 3; ++i) {
    CorrelatedRandomness randomness(keys[i], keys[previous_party(i)], nonce);
    mask_output_share(randomness, offset, out[i]);
  }
  return out;
}

TEST(Output, MaskedSharesOpen) {
  std::mt19937_64 rng(11);
  const auto keys = test::random_keys(rng);
  for (std::size_t n : {0u, 1u, 16u, 33u, 500u}) {
    for (std::size_t offset : {0u, 3u, 4096u}) {
      std::vector<std::uint8_t> secret(n);
      for (auto& b : secret) b = static_cast<std::uint8_t>(rng());
      const auto shares = share_bytes(secret);
      const auto masked = masked_shares(shares, keys, BatchNonce{rng(), 1}, offset);
      EXPECT_EQ(open_output(masked), secret);
      if (n >= 16) {  // the masks really change what is sent
        EXPECT_NE(masked[0].x, shares[0].x);
        EXPECT_NE(masked[0].a, shares[0].a);
      }
    }
  }
}

TEST(Output, DetectsOneTamperingParty) {
  std::mt19937_64 rng(12);
  const auto keys = test::random_keys(rng);
  const std::vector<std::uint8_t> secret(32, 0x3c);
  for (int party = 0; party < 3; ++party) {
    for (int component = 0; component < 2; ++component) {
      auto masked = masked_shares(share_bytes(secret), keys, BatchNonce{5, 5}, 0);
      auto& v = component == 0 ? masked[party].x : masked[party].a;
      v[9] ^= 0x01;
      EXPECT_THROW(open_output(masked), Error) << party << " " << component;
    }
    // Replacing both components of one party consistently with another value still disagrees.
    auto masked = masked_shares(share_bytes(secret), keys, BatchNonce{5, 6}, 0);
    masked[party].x[0] ^= 0x80;
    masked[party].a[0] ^= 0x80;
    EXPECT_THROW(open_output(masked), Error);
  }
  auto masked = masked_shares(share_bytes(secret), keys, BatchNonce{5, 7}, 0);
  masked[1].a.pop_back();
  EXPECT_THROW(open_output(masked), Error);
}

TEST(Output, MaskRejectsUnequalComponents) {
  CorrelatedRandomness randomness(PrfKey{1}, PrfKey{2}, BatchNonce{1, 1});
  ByteShare share;
  share.x.resize(4);
  share.a.resize(5);
  EXPECT_THROW(mask_output_share(randomness, 0, share), Error);
}

// The stored shares stay fixed (as in the server's share store); every batch uses a new
// nonce. What the client sees from one party, x'_i, must not depend on the secret.
TEST(Output, MaskedXIsUniformAndIndependentOfSecret) {
  std::mt19937_64 rng(13);
  const auto keys = test::random_keys(rng);
  constexpr int kSamples = 30000;
  for (int party = 0; party < 3; ++party) {
    std::vector<std::uint64_t> histogram[2];
    for (int s = 0; s < 2; ++s) {
      const auto shares = share_bytes(std::vector<std::uint8_t>{static_cast<std::uint8_t>(s == 0 ? 0x00 : 0xff)});
      histogram[s].assign(256, 0);
      for (int k = 0; k < kSamples; ++k) {
        ByteShare mine = shares[party];
        CorrelatedRandomness randomness(keys[party], keys[previous_party(party)],
                                        BatchNonce{0x1234, static_cast<std::uint32_t>(k)});
        mask_output_share(randomness, 0, mine);
        ++histogram[s][mine.x[0]];
      }
      EXPECT_LT(test::chi_square_uniform(histogram[s]), test::chi_square_bound(255)) << party;
    }
    EXPECT_LT(test::chi_square_two_samples(histogram[0], histogram[1]), test::chi_square_bound(255)) << party;
  }
}

}  // namespace
}  // namespace mpc::rss3
