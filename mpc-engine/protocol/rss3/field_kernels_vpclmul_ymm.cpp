// The kernels of field_kernels.hpp two elements at a time, for CPUs with VPCLMULQDQ and AVX2 but
// no AVX-512: one 256-bit VPCLMULQDQ multiplies two pairs, each element in its own 128-bit lane
// (`lo` in the low quadword, as Gf128 lies in memory), as field_kernels_vpclmul.cpp does four.
// A last odd element, and the kernels that gain nothing from the width (a single product, the
// window sums, binding the grid's points), go one at a time through PCLMULQDQ (field_pclmul.hpp).
// Built with -mvpclmulqdq -mavx2; vpclmul_ymm_field_kernels() checks the CPU before handing them
// out. No branch or address depends on an element: every kernel stays constant time in them.
#include "protocol/rss3/field_kernels.hpp"

#if defined(MPC_RSS3_X86) && defined(__VPCLMULQDQ__) && defined(__AVX2__)
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "common/secret.hpp"
#include "protocol/rss3/field_pclmul.hpp"
#include "protocol/rss3/grid_walk.hpp"

namespace mpc::rss3::detail {
namespace {

using Two = __m256i;
using One = KernelSet<PclmulField>;

// A product of two pairs before reduction: lo + mid x^64 + hi x^128 per lane.
struct Wide2 {
  Two lo = _mm256_setzero_si256(), mid = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
};

inline Two load2(const Gf128* at) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)); }
inline void store2(Gf128* at, Two v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(at), v); }
inline Two broadcast2(Gf128 v) {
  return _mm256_broadcastsi128_si256(_mm_set_epi64x(static_cast<long long>(v.hi), static_cast<long long>(v.lo)));
}

inline void accumulate2(Wide2& acc, Two a, Two b) {
  acc.lo = _mm256_xor_si256(acc.lo, _mm256_clmulepi64_epi128(a, b, 0x00));
  acc.hi = _mm256_xor_si256(acc.hi, _mm256_clmulepi64_epi128(a, b, 0x11));
  acc.mid = _mm256_xor_si256(acc.mid, _mm256_xor_si256(_mm256_clmulepi64_epi128(a, b, 0x01),
                                                       _mm256_clmulepi64_epi128(a, b, 0x10)));
}

// x^128 = x^7 + x^2 + x + 1, per lane, as PclmulField::reduce.
inline Two reduce2(const Wide2& w) {
  const Two poly = _mm256_set_epi64x(0, 0x87, 0, 0x87);
  Two low = _mm256_xor_si256(w.lo, _mm256_bslli_epi128(w.mid, 8));
  Two high = _mm256_xor_si256(w.hi, _mm256_bsrli_epi128(w.mid, 8));
  const Two top = _mm256_clmulepi64_epi128(high, poly, 0x01);
  high = _mm256_xor_si256(high, _mm256_bsrli_epi128(top, 8));
  low = _mm256_xor_si256(low, _mm256_bslli_epi128(top, 8));
  return _mm256_xor_si256(low, _mm256_clmulepi64_epi128(high, poly, 0x00));
}

inline Two mul2(Two a, Two b) {
  Wide2 w;
  accumulate2(w, a, b);
  return reduce2(w);
}

inline Gf128 lanes_sum(Two v) {
  Gf128 out;
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&out),
                   _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
  return out;
}

// The reduced sum of a two-lane accumulator and a one-element one (reduction is linear).
inline Gf128 total(const Wide2& two, const PclmulField::Wide& one) {
  return lanes_sum(reduce2(two)) ^ PclmulField::reduce(one);
}

// Each lane times x^s, s < 64 its own: a shift by s bits across the lane's two quadwords, and the
// s bits carried out of x^127 folded back in times x^128 = x^7 + x^2 + x + 1 (a product of
// degree < 71, so nothing more to reduce).
inline Two times_x_by_lane(Two v, Two shift, Two rest) {
  const Two poly = _mm256_set_epi64x(0, 0x87, 0, 0x87);
  const Two out = _mm256_srlv_epi64(v, rest);  // the bits each quadword loses (none where s = 0)
  const Two shifted = _mm256_or_si256(_mm256_sllv_epi64(v, shift), _mm256_bslli_epi128(out, 8));
  return _mm256_xor_si256(shifted, _mm256_clmulepi64_epi128(_mm256_bsrli_epi128(out, 8), poly, 0x00));
}

// Each lane times a weight of degree < 64: two products (of degree < 191) and one reduction of
// the 64 bits above x^127.
inline Two times_weight(Two v, Two weight) {
  const Two poly = _mm256_set_epi64x(0, 0x87, 0, 0x87);
  const Two low = _mm256_clmulepi64_epi128(v, weight, 0x00), high = _mm256_clmulepi64_epi128(v, weight, 0x01);
  const Two product = _mm256_xor_si256(low, _mm256_bslli_epi128(high, 8));
  return _mm256_xor_si256(product, _mm256_clmulepi64_epi128(_mm256_bsrli_epi128(high, 8), poly, 0x00));
}

void weight_lanes(Gf128* v, std::size_t windows, const std::uint64_t* weight) {
  const Two step = _mm256_set1_epi64x(2);
  for (std::size_t c = 0; c < windows; ++c) {
    const Two w = _mm256_set1_epi64x(static_cast<long long>(weight[c]));
    Two shift = _mm256_set_epi64x(1, 1, 0, 0);
    Gf128* row = v + 64 * c;
    for (unsigned j = 0; j < 64; j += 2, shift = _mm256_add_epi64(shift, step)) {
      const Two rest = _mm256_sub_epi64(_mm256_set1_epi64x(64), shift);
      store2(row + j, times_weight(times_x_by_lane(load2(row + j), shift, rest), w));
    }
  }
}

void round_sums(const Gf128* a, const Gf128* b, std::size_t len, Gf128* c0, Gf128* c2) {
  const std::size_t half = (len + 1) / 2, pairs = len - half;  // i < pairs has a partner at i + half
  Wide2 s0, s2;
  std::size_t i = 0;
  for (; i + 2 <= pairs; i += 2) {
    const Two al = load2(a + i), bl = load2(b + i);
    accumulate2(s0, al, bl);
    accumulate2(s2, _mm256_xor_si256(al, load2(a + i + half)), _mm256_xor_si256(bl, load2(b + i + half)));
  }
  PclmulField::Wide r0 = PclmulField::zero(), r2 = PclmulField::zero();
  for (; i < half; ++i) {
    const auto al = PclmulField::load(a[i]), bl = PclmulField::load(b[i]);
    PclmulField::accumulate(r0, al, bl);
    if (i < pairs)
      PclmulField::accumulate(r2, PclmulField::add(al, PclmulField::load(a[i + half])),
                              PclmulField::add(bl, PclmulField::load(b[i + half])));
    else
      PclmulField::accumulate(r2, al, bl);
  }
  *c0 = total(s0, r0);
  *c2 = total(s2, r2);
}

void fold(Gf128* v, std::size_t len, Gf128 t) {
  const std::size_t half = (len + 1) / 2, pairs = len - half;
  const Two tv = broadcast2(t);
  std::size_t i = 0;
  // Writes stay below half and reads of partners at or above it: in place is safe.
  for (; i + 2 <= pairs; i += 2) {
    const Two l = load2(v + i);
    store2(v + i, _mm256_xor_si256(l, mul2(tv, _mm256_xor_si256(l, load2(v + i + half)))));
  }
  const auto t1 = PclmulField::load(t);
  for (; i < half; ++i) {
    const auto l = PclmulField::load(v[i]);
    const auto r = i < pairs ? PclmulField::add(l, PclmulField::load(v[i + half])) : l;
    v[i] = PclmulField::store(PclmulField::add(l, PclmulField::load(PclmulField::reduce(PclmulField::product(t1, r)))));
  }
}

// fold(a), fold(b), then the round sums of the folded halves: two passes over the halves, each
// two elements at a time.
void fold_and_sum(Gf128* a, Gf128* b, std::size_t len, Gf128 t, Gf128* c0, Gf128* c2) {
  fold(a, len, t);
  fold(b, len, t);
  round_sums(a, b, (len + 1) / 2, c0, c2);
}

// Four windows side by side in the lanes of a vector through the grid walk, as KernelSet's;
// each leaf's four product words meet their windows' weights in two carry-less multiplications.
// Weights and words are of degree < 64: nothing to reduce.
void grid_sums(const GridOperands& g, std::size_t windows, const std::uint64_t* weight, Gf128* grid) {
  const std::size_t points = power_of_three(g.variables), entries = std::size_t{1} << g.variables;
  SecretWords acc_words(4 * points);  // a vector per point, 64-byte aligned
  std::fill(acc_words.data(), acc_words.data() + acc_words.size(), std::uint64_t{0});
  Two* acc = reinterpret_cast<Two*>(acc_words.data());
  Words4 x[std::size_t{1} << kMaxGridVariables], y[std::size_t{1} << kMaxGridVariables];
  for (std::size_t c0 = 0; c0 < windows; c0 += 4) {
    const std::size_t count = windows - c0 < 4 ? windows - c0 : 4;
    One::load4(g.x, c0, count, x);
    One::load4(g.y, c0, count, y);
    alignas(32) std::uint64_t rho_words[4] = {};
    for (std::size_t m = 0; m < count; ++m) rho_words[m] = weight[c0 + m];
    const Two rho = _mm256_load_si256(reinterpret_cast<const __m256i*>(rho_words));
    auto leaf = [&](std::size_t p, Words4 product) {
      Two words;
      std::memcpy(&words, &product, sizeof words);
      acc[p] = _mm256_xor_si256(acc[p], _mm256_xor_si256(_mm256_clmulepi64_epi128(words, rho, 0x00),
                                                          _mm256_clmulepi64_epi128(words, rho, 0x11)));
    };
    grid_walk(g.variables, x, y, leaf);
  }
  for (std::size_t p = 0; p < points; ++p) grid[p] = grid[p] ^ lanes_sum(acc[p]);
  wipe(x, entries * sizeof(Words4));
  wipe(y, entries * sizeof(Words4));
}

}  // namespace

const FieldKernels* vpclmul_ymm_field_kernels() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("vpclmulqdq") || !__builtin_cpu_supports("pclmul"))
    return nullptr;
  static const FieldKernels kernels = {&One::mul,   &One::window_sums, &weight_lanes,     &round_sums, &fold,
                                       &fold_and_sum, &One::bind_points, &grid_sums, "vpclmul-ymm"};
  return &kernels;
}

}  // namespace mpc::rss3::detail

#else

namespace mpc::rss3::detail {
const FieldKernels* vpclmul_ymm_field_kernels() { return nullptr; }
}  // namespace mpc::rss3::detail

#endif
