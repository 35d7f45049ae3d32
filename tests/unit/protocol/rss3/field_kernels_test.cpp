// GF(2^128) arithmetic of the AND check: the portable multiplication against field laws and
// known products, and the PCLMULQDQ and VPCLMULQDQ kernels against the portable ones.
#include <gtest/gtest.h>

#include "common/error.hpp"

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "protocol/rss3/bit_combination.hpp"
#include "protocol/rss3/field_kernels.hpp"
#include "protocol/rss3/gf128.hpp"
#include "protocol/rss3/transpose.hpp"

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

void expect_kernels_match_portable(const detail::FieldKernels* fast) {
  const detail::FieldKernels& slow = detail::portable_field_kernels();
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000; ++i) {
    const Gf128 a = random_element(rng), b = random_element(rng);
    ASSERT_EQ(fast->mul(a, b), slow.mul(a, b));
  }
  for (std::size_t len : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 15u, 16u, 17u, 64u, 65u, 1001u}) {
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
    std::vector<Gf128> fb = b, sb = b;
    fast->fold_and_sum(fa.data(), fb.data(), len, t, &f0, &f2);
    slow.fold_and_sum(sa.data(), sb.data(), len, t, &s0, &s2);
    EXPECT_EQ(f0, s0) << len;
    EXPECT_EQ(f2, s2) << len;
    EXPECT_EQ(fa, sa) << len;
    EXPECT_EQ(fb, sb) << len;
  }
  const std::size_t windows = 5, stride = 37;
  std::vector<std::uint64_t> words(windows * stride);
  std::vector<std::uint64_t> weight(windows);  // window weights are of degree < 64
  for (auto& v : words) v = rng();
  for (auto& v : weight) v = rng();
  std::vector<Gf128> fs(stride), ss(stride);
  fast->window_sums(words.data(), windows, stride, weight.data(), fs.data());
  slow.window_sums(words.data(), windows, stride, weight.data(), ss.data());
  EXPECT_EQ(fs, ss);
  for (std::size_t n : {1u, 3u, 4u, 7u, 243u}) {
    std::vector<Gf128> v(3 * n);
    for (auto& e : v) e = random_element(rng);
    const Gf128 basis[3] = {random_element(rng), random_element(rng), random_element(rng)};
    std::vector<Gf128> fast_out(n), slow_out(n);
    fast->bind_points(v.data(), n, basis, fast_out.data());
    slow.bind_points(v.data(), n, basis, slow_out.data());
    EXPECT_EQ(fast_out, slow_out) << n;
  }
  std::vector<Gf128> fv(64 * windows), sv;
  for (auto& v : fv) v = random_element(rng);
  sv = fv;
  fast->weight_lanes(fv.data(), windows, weight.data());
  slow.weight_lanes(sv.data(), windows, weight.data());
  EXPECT_EQ(fv, sv);
  // Strides around multiples of the wide kernels' group of four and their 32 sums at once.
  for (std::size_t odd_stride : {1u, 4u, 5u, 16u, 33u, 243u}) {
    std::vector<std::uint64_t> odd(3 * odd_stride);
    for (auto& v : odd) v = rng();
    std::vector<Gf128> fo(odd_stride), so(odd_stride);
    fast->window_sums(odd.data(), 3, odd_stride, weight.data(), fo.data());
    slow.window_sums(odd.data(), 3, odd_stride, weight.data(), so.data());
    EXPECT_EQ(fo, so) << odd_stride;
  }
}

TEST(FieldKernels, PclmulMatchesPortable) {
  const detail::FieldKernels* fast = detail::pclmul_field_kernels();
  if (fast == nullptr) GTEST_SKIP() << "no PCLMULQDQ on this CPU";
  expect_kernels_match_portable(fast);
}

TEST(FieldKernels, VpclmulMatchesPortable) {
  const detail::FieldKernels* widest = detail::vpclmul_field_kernels();
  if (widest == nullptr) GTEST_SKIP() << "no AVX-512 VPCLMULQDQ on this CPU";
  expect_kernels_match_portable(widest);
}

TEST(FieldKernels, VpclmulOnAvx2MatchesPortable) {
  const detail::FieldKernels* wide = detail::vpclmul_ymm_field_kernels();
  if (wide == nullptr) GTEST_SKIP() << "no VPCLMULQDQ with AVX2 on this CPU";
  expect_kernels_match_portable(wide);
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
  // window_sums reads word bit j as x^j; weight_lanes multiplies lane j by x^j.
  const std::size_t windows = 3, stride = 2;
  std::vector<std::uint64_t> words(windows * stride);
  std::vector<std::uint64_t> weight(windows);  // window weights are of degree < 64
  for (auto& v : words) v = rng();
  for (auto& v : weight) v = rng();
  Gf128 sums[stride];
  k.window_sums(words.data(), windows, stride, weight.data(), sums);
  const Gf128 x{2, 0};
  for (std::size_t l = 0; l < stride; ++l) {
    Gf128 expected, power{1, 0};
    for (unsigned j = 0; j < 64; ++j, power = gf128_mul_portable(power, x))
      for (std::size_t c = 0; c < windows; ++c)
        if ((words[stride * c + l] >> j) & 1) expected ^= gf128_mul_portable({weight[c], 0}, power);
    EXPECT_EQ(sums[l], expected);
  }
  // fold_and_sum is fold of both vectors, then round_sums.
  for (std::size_t n : {1u, 2u, 5u, 8u, 9u}) {
    std::vector<Gf128> fa(a.begin(), a.begin() + std::min<std::size_t>(n, len)), fb(b.begin(), b.begin() + std::min<std::size_t>(n, len));
    fa.resize(n), fb.resize(n);
    std::vector<Gf128> ea = fa, eb = fb;
    Gf128 f0, f2, g0, g2;
    k.fold_and_sum(fa.data(), fb.data(), n, t, &f0, &f2);
    k.fold(ea.data(), n, t);
    k.fold(eb.data(), n, t);
    k.round_sums(ea.data(), eb.data(), (n + 1) / 2, &g0, &g2);
    EXPECT_EQ(f0, g0) << n;
    EXPECT_EQ(f2, g2) << n;
    EXPECT_EQ(std::vector<Gf128>(fa.begin(), fa.begin() + (n + 1) / 2), std::vector<Gf128>(ea.begin(), ea.begin() + (n + 1) / 2));
  }
  // bind_points: three products per output, in place as the grid uses it.
  for (std::size_t n : {1u, 4u, 5u, 81u}) {
    std::vector<Gf128> v(3 * n), bound(3 * n);
    for (auto& e : v) e = random_element(rng);
    const Gf128 basis[3] = {random_element(rng), random_element(rng), random_element(rng)};
    bound = v;
    k.bind_points(bound.data(), n, basis, bound.data());
    for (std::size_t m = 0; m < n; ++m)
      EXPECT_EQ(bound[m], gf128_mul_portable(basis[0], v[3 * m]) ^ gf128_mul_portable(basis[1], v[3 * m + 1]) ^
                              gf128_mul_portable(basis[2], v[3 * m + 2]))
          << n << " points, output " << m;
  }
  std::vector<Gf128> lanes(64 * windows);
  for (auto& v : lanes) v = random_element(rng);
  std::vector<Gf128> weighted = lanes;
  k.weight_lanes(weighted.data(), windows, weight.data());
  for (std::size_t c = 0; c < windows; ++c) {
    Gf128 power{1, 0};
    for (unsigned j = 0; j < 64; ++j, power = gf128_mul_portable(power, x))
      EXPECT_EQ(weighted[64 * c + j],
                gf128_mul_portable(gf128_mul_portable({weight[c], 0}, power), lanes[64 * c + j]));
  }
}

// Windows of 8 to 64 words from two planes; five windows (the last group of four partial) and
// 37 (two whole passes of sixteen windows, then a partial one). Every kernel the CPU runs, and
// the choice.
TEST(CombineBits, MatchesItsDefinition) {
  std::vector<std::pair<const char*, detail::CombineBitsKernel>> kernels = {
      {"chosen", &combine_bits}, {"portable", &detail::portable_combine_bits}};
  if (const detail::CombineBitsKernel gfni = detail::gfni_combine_bits()) kernels.emplace_back("gfni", gfni);
  std::mt19937_64 rng(9);
  for (const auto& [name, kernel] : kernels)
    for (std::size_t half : {4u, 8u, 12u, 16u, 32u})
      for (std::size_t windows : {1u, 5u, 37u}) {
        if (std::string(name) == "gfni" && half % 8 != 0) continue;
        std::vector<std::uint64_t> first(half * windows), second(half * windows);
        std::vector<Gf128> coefficients(2 * half), out(64 * windows);
        for (auto& w : first) w = rng();
        for (auto& w : second) w = rng();
        for (auto& c : coefficients) c = random_element(rng);
        kernel({first.data(), second.data(), half}, windows, coefficients.data(), out.data());
        for (std::size_t c = 0; c < windows; ++c)
          for (unsigned j = 0; j < 64; ++j) {
            Gf128 expected;
            for (std::size_t s = 0; s < 2 * half; ++s) {
              const std::uint64_t word = s < half ? first[half * c + s] : second[half * c + s - half];
              if ((word >> j) & 1) expected ^= coefficients[s];
            }
            ASSERT_EQ(out[64 * c + j], expected)
                << name << ": " << 2 * half << " words, window " << c << " of " << windows << ", lane " << j;
          }
      }
  Gf128 out[64];
  std::uint64_t words[6] = {};
  EXPECT_THROW(combine_bits({words, words, 3}, 1, nullptr, out), Error);
  EXPECT_THROW(combine_bits({words, words, 64}, 1, nullptr, out), Error);
}

// grid[p] = sum over windows c and lanes j of weight[c] x^j X_c(p)_j Y_c(p)_j, where on {0, 1}
// a point's value is the entry and at inf the XOR of the values at 0 and 1. For every kernel
// set, one to seven variables and window counts around the wide kernel's sixteen at once, against
// the definition computed bit by bit with the portable multiplication.
TEST(FieldKernels, GridSumsMatchTheirDefinition) {
  std::vector<const detail::FieldKernels*> sets = {&detail::portable_field_kernels()};
  if (const auto* fast = detail::pclmul_field_kernels()) sets.push_back(fast);
  if (const auto* widest = detail::vpclmul_field_kernels()) sets.push_back(widest);
  if (const auto* wide = detail::vpclmul_ymm_field_kernels()) sets.push_back(wide);
  std::mt19937_64 rng(12);
  const Gf128 x{2, 0};
  for (const detail::FieldKernels* k : sets)
    for (unsigned variables : {1u, 3u, 5u, 6u, 7u})
      for (std::size_t windows : {1u, 3u, 9u, 16u, 17u}) {
        if (k == sets.front() && variables > 5) continue;  // the portable product is slow
        const std::size_t half = std::size_t{1} << (variables - 1);
        std::size_t points = 1;
        for (unsigned b = 0; b < variables; ++b) points *= 3;
        std::vector<std::uint64_t> x1(half * windows), x2 = x1, y1 = x1, y2 = x1;
        for (auto* plane : {&x1, &x2, &y1, &y2})
          for (auto& w : *plane) w = rng();
        std::vector<std::uint64_t> weight(windows);
        std::vector<Gf128> grid(points), start(points);
        for (auto& w : weight) w = rng();
        for (auto& g : start) g = random_element(rng);
        grid = start;
        k->grid_sums({{x1.data(), x2.data(), half}, {y1.data(), y2.data(), half}, variables}, windows, weight.data(),
                     grid.data());
        for (std::size_t p = 0; p < points; p += 1 + points / 40) {
          Gf128 expected = start[p];
          for (std::size_t c = 0; c < windows; ++c) {
            // The value at p: XOR of the entries s with s_b = d_b where d_b < 2, any s_b where d_b = inf.
            auto value = [&](const std::vector<std::uint64_t>& first, const std::vector<std::uint64_t>& second) {
              std::uint64_t v = 0;
              for (std::size_t s = 0; s < 2 * half; ++s) {
                bool in = true;
                for (std::size_t b = 0, rest = p; b < variables; ++b, rest /= 3)
                  if (rest % 3 < 2 && ((s >> b) & 1) != rest % 3) in = false;
                if (in) v ^= s < half ? first[half * c + s] : second[half * c + s - half];
              }
              return v;
            };
            const std::uint64_t product = value(x1, x2) & value(y1, y2);
            Gf128 power{1, 0};
            for (unsigned j = 0; j < 64; ++j, power = gf128_mul_portable(power, x))
              if ((product >> j) & 1) expected ^= gf128_mul_portable({weight[c], 0}, power);
          }
          ASSERT_EQ(grid[p], expected) << k->name << ": " << variables << " variables, " << windows << " windows, point "
                                       << p;
        }
      }
}

TEST(CombineBits, FourTransposesAtOnceEqualOneAtATime) {
  std::mt19937_64 rng(10);
  Words4 side_by_side[64];
  std::uint64_t single[4][64];
  for (unsigned i = 0; i < 64; ++i)
    for (unsigned m = 0; m < 4; ++m) side_by_side[i][m] = single[m][i] = rng();
  transpose64x4(side_by_side);
  for (unsigned m = 0; m < 4; ++m) {
    transpose64(single[m]);
    for (unsigned i = 0; i < 64; ++i) ASSERT_EQ(side_by_side[i][m], single[m][i]);
  }
}

}  // namespace
}  // namespace mpc::rss3
