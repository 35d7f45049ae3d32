// Replicated sharing: dealer, reconstruction, tamper detection, and that one party's
// share is uniform and independent of the secret.
#include <gtest/gtest.h>

#include <random>

#include "common/error.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "protocol/rss3/shares.hpp"
#include "test_util.hpp"

namespace mpc::rss3 {
namespace {

TEST(ShareMatrix, ShapeAndWipe) {
  ShareMatrix m(3, 65);
  EXPECT_EQ(m.rows, 3u);
  EXPECT_EQ(m.instances, 65u);
  EXPECT_EQ(m.words_per_row, 2u);
  ASSERT_EQ(m.x.size(), 6u);
  ASSERT_EQ(m.a.size(), 6u);
  m.x_row(1)[1] = 5;
  m.a_row(2)[0] = 7;
  EXPECT_EQ(m.x[3], 5u);
  EXPECT_EQ(m.a[4], 7u);
  m.wipe();
  for (auto w : m.x) EXPECT_EQ(w, 0u);
  for (auto w : m.a) EXPECT_EQ(w, 0u);
  ShareMatrix empty(0, 0);
  EXPECT_EQ(empty.words_per_row, 0u);
  empty.wipe();
}

TEST(ShareMatrix, ResetWipedKeepsAWipedShapeAndZeroFillsAnother) {
  ShareMatrix matrix(10, 130);
  matrix.wipe();
  const auto* storage = matrix.x.data();
  // A mark left where a wiped matrix has zeros shows whether reset_wiped wrote anything.
  matrix.x[5] = 7;
  matrix.reset_wiped(10, 130);
  EXPECT_EQ(matrix.x.data(), storage);
  EXPECT_EQ(matrix.x[5], 7u) << "the same shape was written over";
  matrix.reset_wiped(10, 200);
  EXPECT_EQ(matrix.words_per_row, 4u);
  EXPECT_EQ(matrix.x.size(), 40u);
  for (std::size_t i = 0; i < matrix.x.size(); ++i) ASSERT_EQ(matrix.x[i] | matrix.a[i], 0u) << i;
  matrix.x[5] = 7;
  matrix.reset_wiped(11, 200);
  EXPECT_EQ(matrix.rows, 11u);
  for (std::size_t i = 0; i < matrix.x.size(); ++i) ASSERT_EQ(matrix.x[i] | matrix.a[i], 0u) << i;
}

TEST(ShareBytes, Example) {
  const std::vector<std::uint8_t> secret{0xde, 0xad, 0xbe, 0xef};
  const auto shares = share_bytes(secret);
  for (std::size_t j = 0; j < secret.size(); ++j) {
    EXPECT_EQ(shares[0].x[j] ^ shares[1].x[j] ^ shares[2].x[j], 0);
    for (int i = 0; i < 3; ++i)  // a_i = x_{i-1} ^ v
      EXPECT_EQ(shares[i].a[j], shares[previous_party(i)].x[j] ^ secret[j]);
  }
  EXPECT_EQ(reconstruct_bytes(shares), secret);
}

TEST(ShareBytes, RoundTripManyLengths) {
  std::mt19937_64 rng(1);
  for (std::size_t n : {0u, 1u, 15u, 16u, 17u, 1000u}) {
    std::vector<std::uint8_t> secret(n);
    for (auto& b : secret) b = static_cast<std::uint8_t>(rng());
    EXPECT_EQ(reconstruct_bytes(share_bytes(secret)), secret);
  }
}

TEST(ShareBytes, ReconstructionDetectsAnyTamperedComponent) {
  const std::vector<std::uint8_t> secret(32, 0x5a);
  for (int party = 0; party < 3; ++party) {
    for (int component = 0; component < 2; ++component) {
      for (std::size_t position : {0u, 17u, 31u}) {
        auto shares = share_bytes(secret);
        auto& v = component == 0 ? shares[party].x : shares[party].a;
        v[position] ^= 0x10;
        EXPECT_THROW(reconstruct_bytes(shares), Error) << party << " " << component << " " << position;
      }
    }
  }
}

TEST(ShareBytes, MismatchedLengthsRejected) {
  auto shares = share_bytes(std::vector<std::uint8_t>(8, 1));
  shares[1].a.pop_back();
  EXPECT_THROW(reconstruct_bytes(shares), Error);
  auto truncated = share_bytes(std::vector<std::uint8_t>(8, 1));
  truncated[2].x.clear();
  EXPECT_THROW(reconstruct_bytes(truncated), Error);
}

TEST(ShareBytes, WipeZeroes) {
  auto shares = share_bytes(std::vector<std::uint8_t>(8, 0xff));
  shares[0].wipe();
  for (auto b : shares[0].x) EXPECT_EQ(b, 0);
  for (auto b : shares[0].a) EXPECT_EQ(b, 0);
}

// Party i's view (x_i, a_i) of a one-byte secret: over many sharings, x_i and a_i are each
// uniform, and the joint distribution of (x_i, a_i) is the same for two different secrets.
TEST(ShareBytes, SinglePartyShareIsUniformAndIndependentOfSecret) {
  constexpr int kSamples = 40000;
  for (int party = 0; party < 3; ++party) {
    std::vector<std::uint64_t> joint[2];
    for (int s = 0; s < 2; ++s) {
      const std::vector<std::uint8_t> secret{static_cast<std::uint8_t>(s == 0 ? 0x00 : 0xa7)};
      std::vector<std::uint64_t> x_counts(256), a_counts(256);
      joint[s].assign(256, 0);
      for (int k = 0; k < kSamples; ++k) {
        const auto shares = share_bytes(secret);
        const std::uint8_t x = shares[party].x[0], a = shares[party].a[0];
        ++x_counts[x];
        ++a_counts[a];
        ++joint[s][static_cast<std::size_t>((x & 0x0f) | ((a & 0x0f) << 4))];
      }
      EXPECT_LT(test::chi_square_uniform(x_counts), test::chi_square_bound(255)) << party;
      EXPECT_LT(test::chi_square_uniform(a_counts), test::chi_square_bound(255)) << party;
      EXPECT_LT(test::chi_square_uniform(joint[s]), test::chi_square_bound(255)) << party;
    }
    EXPECT_LT(test::chi_square_two_samples(joint[0], joint[1]), test::chi_square_bound(255)) << party;
  }
}

TEST(ShareMatrixHelpers, ShareOpenRoundTripAndPublic) {
  std::mt19937_64 rng(3);
  for (std::size_t instances : {1u, 63u, 64u, 65u, 1000u}) {
    const std::size_t rows = 5, words = words_for(instances);
    std::vector<std::uint64_t> clear(rows * words);
    for (auto& w : clear) w = rng();
    if (instances % 64) for (std::size_t r = 0; r < rows; ++r) clear[r * words + words - 1] &= (1ull << (instances % 64)) - 1;
    auto shares = share_matrix(clear, rows, instances);
    EXPECT_EQ(open_matrix(shares), clear);
    const ShareMatrix pub = public_matrix(clear, rows, instances);
    for (auto w : pub.x) EXPECT_EQ(w, 0u);
    EXPECT_EQ(open_matrix({pub, pub, pub}), clear);
    shares[1].x[rows * words / 2] ^= 1;
    EXPECT_THROW(open_matrix(shares), Error);
  }
  EXPECT_THROW(share_matrix(std::vector<std::uint64_t>(3), 2, 64), Error);
  auto a = share_matrix(std::vector<std::uint64_t>(2), 2, 64);
  a[2] = ShareMatrix(2, 65);
  EXPECT_THROW(open_matrix(a), Error);
}

TEST(ShareMatrixHelpers, PaddingBitsIgnoredWhenOpening) {
  auto shares = share_matrix(std::vector<std::uint64_t>{0x5}, 1, 3);
  shares[0].x[0] ^= 1ull << 40;  // a padding lane
  EXPECT_EQ(open_matrix(shares), std::vector<std::uint64_t>{0x5});
}

}  // namespace
}  // namespace mpc::rss3
