// GF(2^128) arithmetic of the AND check: the portable multiplication against field laws and
// known products, and the PCLMULQDQ kernels against the portable ones.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "protocol/rss3/field_kernels.hpp"
#include "protocol/rss3/gf128.hpp"

namespace mpc::rss3 {
namespace {

Gf128 random_element(std::mt19937_64& rng) { return {rng(), rng()}; }

TEST(CheckField, KnownProducts) {
  const Gf128 x{2, 0}, x63{std::uint64_t{1} << 63, 0}, x64{0, 1}, x127{0, std::uint64_t{1} << 63};
  EXPECT_EQ(gf128_mul_portable(x, x63), x64);
  // x^128 = x^7 + x^2 + x + 1.
  EXPECT_EQ(gf128_mul_portable(x, x127), (Gf128{0x87, 0}));
  EXPECT_EQ(gf128_mul_portable(x64, x64), (Gf128{0x87, 0}));
  // x^254 = x^126 * x^128 = x^133 + x^128 + x^127 + x^126 -> reduce x^133 and x^128.
  const Gf128 x126_{0, std::uint64_t{1} << 62};
  const Gf128 expected = gf128_mul_portable(gf128_mul_portable(x126_, Gf128{0x87, 0}), Gf128{1, 0});
  EXPECT_EQ(gf128_mul_portable(x127, x127), expected);
}

TEST(CheckField, FieldLaws) {
  std::mt19937_64 rng(7);
  const Gf128 one{1, 0};
  for (int i = 0; i < 200; ++i) {
    const Gf128 a = random_element(rng), b = random_element(rng), c = random_element(rng);
    EXPECT_EQ(gf128_mul_portable(a, one), a);
    EXPECT_EQ(gf128_mul_portable(a, b), gf128_mul_portable(b, a));
    EXPECT_EQ(gf128_mul_portable(gf128_mul_portable(a, b), c), gf128_mul_portable(a, gf128_mul_portable(b, c)));
    EXPECT_EQ(gf128_mul_portable(a, b ^ c), gf128_mul_portable(a, b) ^ gf128_mul_portable(a, c));
  }
}

// a^(2^128) = a for every element of GF(2^128): fails for a reducible modulus or a wrong reduction.
TEST(CheckField, FrobeniusIsTheIdentity) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 8; ++i) {
    const Gf128 a = random_element(rng);
    Gf128 power = a;
    for (int k = 0; k < 128; ++k) power = gf128_mul_portable(power, power);
    EXPECT_EQ(power, a);
  }
}

TEST(FieldKernels, PclmulMatchesPortable) {
  const detail::FieldKernels* fast = detail::pclmul_field_kernels();
  if (fast == nullptr) GTEST_SKIP() << "no PCLMULQDQ on this CPU";
  const detail::FieldKernels& slow = detail::portable_field_kernels();
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000; ++i) {
    const Gf128 a = random_element(rng), b = random_element(rng);
    ASSERT_EQ(fast->mul(a, b), slow.mul(a, b));
  }
  for (std::size_t len : {1u, 2u, 3u, 64u, 65u, 1001u}) {
    std::vector<Gf128> a(len), b(len);
    for (auto& v : a) v = random_element(rng);
    for (auto& v : b) v = random_element(rng);
    Gf128 f0, f2, s0, s2;
    fast->round_sums(a.data(), b.data(), len, &f0, &f2);
    slow.round_sums(a.data(), b.data(), len, &s0, &s2);
    EXPECT_EQ(f0, s0);
    EXPECT_EQ(f2, s2);
    const Gf128 t = random_element(rng);
    std::vector<Gf128> fa = a, sa = a;
    fast->fold(fa.data(), len, t);
    slow.fold(sa.data(), len, t);
    EXPECT_EQ(std::vector<Gf128>(fa.begin(), fa.begin() + (len + 1) / 2),
              std::vector<Gf128>(sa.begin(), sa.begin() + (len + 1) / 2));
  }
  const std::size_t words = 5;
  std::vector<std::uint64_t> low(words), high(words);
  std::vector<Gf128> weight(words), lane_low(64), lane_high(64);
  for (auto& v : low) v = rng();
  for (auto& v : high) v = rng();
  for (auto& v : weight) v = random_element(rng);
  for (auto& v : lane_low) v = random_element(rng);
  for (auto& v : lane_high) v = random_element(rng);
  EXPECT_EQ(fast->weighted_bits(low.data(), words, weight.data(), lane_low.data()),
            slow.weighted_bits(low.data(), words, weight.data(), lane_low.data()));
  std::vector<Gf128> fo(64 * words), so(64 * words);
  fast->lift(low.data(), high.data(), words, weight.data(), lane_low.data(), lane_high.data(), fo.data());
  slow.lift(low.data(), high.data(), words, weight.data(), lane_low.data(), lane_high.data(), so.data());
  EXPECT_EQ(fo, so);
}

// The kernels' definitions, computed element by element with the portable multiplication.
TEST(FieldKernels, MatchTheirDefinitions) {
  const detail::FieldKernels& k = detail::field_kernels();
  std::mt19937_64 rng(5);
  const std::size_t len = 7, half = 4;
  std::vector<Gf128> a(len), b(len);
  for (auto& v : a) v = random_element(rng);
  for (auto& v : b) v = random_element(rng);
  Gf128 c0, c2, e0, e2;
  k.round_sums(a.data(), b.data(), len, &c0, &c2);
  for (std::size_t i = 0; i < half; ++i) {
    const Gf128 ar = i + half < len ? a[i + half] : Gf128{}, br = i + half < len ? b[i + half] : Gf128{};
    e0 ^= gf128_mul_portable(a[i], b[i]);
    e2 ^= gf128_mul_portable(a[i] ^ ar, b[i] ^ br);
  }
  EXPECT_EQ(c0, e0);
  EXPECT_EQ(c2, e2);
  const Gf128 t = random_element(rng);
  std::vector<Gf128> folded = a;
  k.fold(folded.data(), len, t);
  for (std::size_t i = 0; i < half; ++i) {
    const Gf128 ar = i + half < len ? a[i + half] : Gf128{};
    EXPECT_EQ(folded[i], a[i] ^ gf128_mul_portable(t, a[i] ^ ar));
  }
  std::vector<Gf128> lane(64);
  for (auto& v : lane) v = random_element(rng);
  const std::uint64_t bits = rng();
  const Gf128 weight = random_element(rng);
  Gf128 expected;
  for (unsigned j = 0; j < 64; ++j)
    if ((bits >> j) & 1) expected ^= gf128_mul_portable(weight, lane[j]);
  EXPECT_EQ(k.weighted_bits(&bits, 1, &weight, lane.data()), expected);
}

}  // namespace
}  // namespace mpc::rss3
