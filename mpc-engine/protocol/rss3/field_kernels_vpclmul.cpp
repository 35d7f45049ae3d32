// The kernels of field_kernels.hpp four elements at a time: one 512-bit VPCLMULQDQ multiplies
// four pairs, each element in its own 128-bit lane (`lo` in the low quadword, as Gf128 lies in
// memory). Built with AVX-512 flags; vpclmul_field_kernels() checks the CPU before handing them
// out. Partial groups of four use masked loads and stores, never a branch on a value: every
// kernel stays constant time in the elements.
#include "protocol/rss3/field_kernels.hpp"

#if defined(MPC_RSS3_X86)
// GCC 12's AVX-512 headers fill unused operands with _mm512_undefined_epi32(), which its own
// -Wuninitialized then reports inside every broadcast, extract and shift.
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "common/secret.hpp"
#include "protocol/rss3/grid_walk.hpp"

namespace mpc::rss3::detail {
namespace {

using Four = __m512i;

// A product of four pairs before reduction: lo + mid x^64 + hi x^128 per lane.
struct Wide4 {
  Four lo = _mm512_setzero_si512(), mid = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
};

// Quadword mask for the first `elements` elements (0 to 4) of a group.
inline __mmask8 first(std::size_t elements) {
  return static_cast<__mmask8>((1u << (2 * (elements < 4 ? elements : 4))) - 1);
}
// The elements of [from, from + 4) below `end`.
inline __mmask8 below(std::size_t from, std::size_t end) { return first(end > from ? end - from : 0); }

inline Four load(const Gf128* at, __mmask8 mask) { return _mm512_maskz_loadu_epi64(mask, at); }
inline void store(Gf128* at, __mmask8 mask, Four v) { _mm512_mask_storeu_epi64(at, mask, v); }
inline Four broadcast(Gf128 v) {
  return _mm512_broadcast_i32x4(_mm_set_epi64x(static_cast<long long>(v.hi), static_cast<long long>(v.lo)));
}

inline void accumulate(Wide4& acc, Four a, Four b) {
  acc.lo = _mm512_xor_si512(acc.lo, _mm512_clmulepi64_epi128(a, b, 0x00));
  acc.hi = _mm512_xor_si512(acc.hi, _mm512_clmulepi64_epi128(a, b, 0x11));
  acc.mid = _mm512_xor_si512(acc.mid, _mm512_xor_si512(_mm512_clmulepi64_epi128(a, b, 0x01),
                                                       _mm512_clmulepi64_epi128(a, b, 0x10)));
}

// x^128 = x^7 + x^2 + x + 1, per lane, as PclmulField::reduce.
inline Four reduce(const Wide4& w) {
  const Four poly = _mm512_set4_epi64(0, 0x87, 0, 0x87);
  Four low = _mm512_xor_si512(w.lo, _mm512_bslli_epi128(w.mid, 8));
  Four high = _mm512_xor_si512(w.hi, _mm512_bsrli_epi128(w.mid, 8));
  const Four top = _mm512_clmulepi64_epi128(high, poly, 0x01);
  high = _mm512_xor_si512(high, _mm512_bsrli_epi128(top, 8));
  low = _mm512_xor_si512(low, _mm512_bslli_epi128(top, 8));
  return _mm512_xor_si512(low, _mm512_clmulepi64_epi128(high, poly, 0x00));
}

inline Four mul(Four a, Four b) {
  Wide4 w;
  accumulate(w, a, b);
  return reduce(w);
}

// The sum of the four lanes, reduced.
inline Gf128 lane_sum(const Wide4& w) {
  const Four r = reduce(w);
  const __m128i s = _mm_xor_si128(_mm_xor_si128(_mm512_castsi512_si128(r), _mm512_extracti32x4_epi32(r, 1)),
                                  _mm_xor_si128(_mm512_extracti32x4_epi32(r, 2), _mm512_extracti32x4_epi32(r, 3)));
  Gf128 out;
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&out), s);
  return out;
}

// Weights and words both of degree < 64: each product is one carry-less multiplication of
// degree < 127, and so is their sum, with nothing to reduce.
void window_sums(const std::uint64_t* words, std::size_t windows, std::size_t stride, const std::uint64_t* weight,
                 Gf128* out) {
  constexpr std::size_t kGroups = 8;  // 32 sums held at once
  // Word m of a group of four into the low quadword of lane m.
  const Four spread = _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0);
  for (std::size_t l0 = 0; l0 < stride; l0 += 4 * kGroups) {
    Four sum[kGroups];
    for (std::size_t g = 0; g < kGroups; ++g) sum[g] = _mm512_setzero_si512();
    const std::size_t groups = (stride - l0 + 3) / 4 < kGroups ? (stride - l0 + 3) / 4 : kGroups;
    for (std::size_t c = 0; c < windows; ++c) {
      const Four rho = _mm512_set1_epi64(static_cast<long long>(weight[c]));
      const std::uint64_t* row = words + stride * c + l0;
      for (std::size_t g = 0; g < groups; ++g) {
        const auto count = static_cast<unsigned>(stride - l0 - 4 * g < 4 ? stride - l0 - 4 * g : 4);
        const __m256i four = _mm256_maskz_loadu_epi64(static_cast<__mmask8>((1u << count) - 1), row + 4 * g);
        const Four w = _mm512_permutexvar_epi64(spread, _mm512_castsi256_si512(four));
        sum[g] = _mm512_xor_si512(sum[g], _mm512_clmulepi64_epi128(rho, w, 0x00));
      }
    }
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t at = l0 + 4 * g;
      store(out + at, below(at, stride), sum[g]);
    }
  }
}

// Each lane times x^s, s < 64 its own: a shift by s bits across the lane's two quadwords, and the
// s bits carried out of x^127 folded back in times x^128 = x^7 + x^2 + x + 1 (a product of
// degree < 71, so nothing more to reduce).
inline Four times_x_by_lane(Four v, Four shift, Four rest) {
  const Four poly = _mm512_set4_epi64(0, 0x87, 0, 0x87);
  const Four out = _mm512_srlv_epi64(v, rest);  // the bits each quadword loses (none where s = 0)
  const Four shifted = _mm512_or_si512(_mm512_sllv_epi64(v, shift), _mm512_bslli_epi128(out, 8));
  return _mm512_xor_si512(shifted, _mm512_clmulepi64_epi128(_mm512_bsrli_epi128(out, 8), poly, 0x00));
}

// Each lane times a weight of degree < 64: two products (of degree < 191) and one reduction of
// the 64 bits above x^127.
inline Four times_weight(Four v, Four weight) {
  const Four poly = _mm512_set4_epi64(0, 0x87, 0, 0x87);
  const Four low = _mm512_clmulepi64_epi128(v, weight, 0x00), high = _mm512_clmulepi64_epi128(v, weight, 0x01);
  const Four product = _mm512_xor_si512(low, _mm512_bslli_epi128(high, 8));
  return _mm512_xor_si512(product, _mm512_clmulepi64_epi128(_mm512_bsrli_epi128(high, 8), poly, 0x00));
}

// Element j of a window times x^j first, then times the window's weight: four carry-less
// products per four elements, where a product with weight[c] x^j as one element takes seven.
void weight_lanes(Gf128* v, std::size_t windows, const std::uint64_t* weight) {
  const Four step = _mm512_set1_epi64(4);
  for (std::size_t c = 0; c < windows; ++c) {
    const Four w = _mm512_set1_epi64(static_cast<long long>(weight[c]));
    Four shift = _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0);
    Gf128* row = v + 64 * c;
    for (unsigned j = 0; j < 64; j += 4, shift = _mm512_add_epi64(shift, step)) {
      const Four rest = _mm512_sub_epi64(_mm512_set1_epi64(64), shift);
      store(row + j, 0xFF, times_weight(times_x_by_lane(load(row + j, 0xFF), shift, rest), w));
    }
  }
}

void round_sums(const Gf128* a, const Gf128* b, std::size_t len, Gf128* c0, Gf128* c2) {
  const std::size_t half = (len + 1) / 2;
  Wide4 s0, s2;
  for (std::size_t i = 0; i < half; i += 4) {
    const __mmask8 in = below(i, half), partner = below(i + half, len);
    const Four al = load(a + i, in), bl = load(b + i, in);
    accumulate(s0, al, bl);
    accumulate(s2, _mm512_xor_si512(al, load(a + i + half, partner)), _mm512_xor_si512(bl, load(b + i + half, partner)));
  }
  *c0 = lane_sum(s0);
  *c2 = lane_sum(s2);
}

// v[i] + t (v[i] + v[i + half]) for the lanes of `in`, the partner read where `partner` says;
// zero in the other lanes, so they add nothing to a sum.
inline Four folded(const Gf128* v, std::size_t i, std::size_t half, __mmask8 in, __mmask8 partner, Four t) {
  const Four l = load(v + i, in);
  return _mm512_xor_si512(l, mul(t, _mm512_xor_si512(l, load(v + i + half, partner & in))));
}

void fold(Gf128* v, std::size_t len, Gf128 t) {
  const std::size_t half = (len + 1) / 2;
  const Four tv = broadcast(t);
  for (std::size_t i = 0; i < half; i += 4) {
    const __mmask8 in = below(i, half);
    store(v + i, in, folded(v, i, half, in, below(i + half, len), tv));
  }
}

void fold_and_sum(Gf128* a, Gf128* b, std::size_t len, Gf128 t, Gf128* c0, Gf128* c2) {
  const std::size_t half = (len + 1) / 2, next = (half + 1) / 2;
  const Four tv = broadcast(t);
  Wide4 s0, s2;
  for (std::size_t i = 0; i < next; i += 4) {
    const __mmask8 in = below(i, next), high = below(i + next, half);
    const __mmask8 partner = below(i + half, len), high_partner = below(i + next + half, len);
    const Four a0 = folded(a, i, half, in, partner, tv), a1 = folded(a, i + next, half, high, high_partner, tv);
    const Four b0 = folded(b, i, half, in, partner, tv), b1 = folded(b, i + next, half, high, high_partner, tv);
    store(a + i, in, a0), store(a + i + next, high, a1), store(b + i, in, b0), store(b + i + next, high, b1);
    accumulate(s0, a0, b0);
    accumulate(s2, _mm512_xor_si512(a0, a1), _mm512_xor_si512(b0, b1));
  }
  *c0 = lane_sum(s0);
  *c2 = lane_sum(s2);
}

// Four outputs at a time, three products summed before one reduction. Reads run ahead of writes
// (out[m] lies below v[3 m]), so out may be v.
void bind_points(const Gf128* v, std::size_t n, const Gf128* basis, Gf128* out) {
  const Four b0 = broadcast(basis[0]), b1 = broadcast(basis[1]), b2 = broadcast(basis[2]);
  std::size_t m = 0;
  for (; m + 4 <= n; m += 4) {
    alignas(64) Gf128 first[4], second[4], third[4];
    for (std::size_t k = 0; k < 4; ++k) {
      first[k] = v[3 * (m + k)];
      second[k] = v[3 * (m + k) + 1];
      third[k] = v[3 * (m + k) + 2];
    }
    Wide4 acc;
    accumulate(acc, b0, _mm512_load_si512(first));
    accumulate(acc, b1, _mm512_load_si512(second));
    accumulate(acc, b2, _mm512_load_si512(third));
    _mm512_storeu_si512(out + m, reduce(acc));
  }
  for (; m < n; ++m) {
    Wide4 acc;
    accumulate(acc, b0, load(v + 3 * m, 0x03));
    accumulate(acc, b1, load(v + 3 * m + 1, 0x03));
    accumulate(acc, b2, load(v + 3 * m + 2, 0x03));
    store(out + m, 0x03, reduce(acc));
  }
}

// Sixteen windows side by side, one per quadword of a pair of vectors: each grid point's product
// of eight windows is two carry-less products with the windows' weights (one per window of the
// two in each 128-bit lane), summed into one accumulator per point. Weights and products are of
// degree < 64, so nothing needs reducing.
using Words16 = std::uint64_t __attribute__((vector_size(128)));
constexpr std::size_t kGridBlock = 16;

void grid_sums(const GridOperands& g, std::size_t windows, const std::uint64_t* weight, Gf128* grid) {
  const std::size_t points = power_of_three(g.variables), entries = std::size_t{1} << g.variables;
  SecretWords acc_words(8 * points);  // a vector per point, 64-byte aligned
  std::fill(acc_words.data(), acc_words.data() + acc_words.size(), std::uint64_t{0});
  Four* acc = reinterpret_cast<Four*>(acc_words.data());
  Words16 x[std::size_t{1} << kMaxGridVariables], y[std::size_t{1} << kMaxGridVariables];
  // Eight windows' words of eight entries, loaded row by row (one window each) and transposed,
  // so that vector e holds entry e of the eight windows; missing windows read as zero.
  const Four pairs_low = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const Four pairs_high = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  const Four quads_low = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0);
  const Four quads_high = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
  auto transpose8 = [&](const std::uint64_t* rows, std::size_t stride, std::size_t count, Four* out) {
    Four r[8], t[8], u[8];
    for (std::size_t m = 0; m < 8; ++m)
      r[m] = m < count ? _mm512_loadu_si512(rows + stride * m) : _mm512_setzero_si512();
    for (std::size_t m = 0; m < 4; ++m) {
      t[2 * m] = _mm512_unpacklo_epi64(r[2 * m], r[2 * m + 1]);
      t[2 * m + 1] = _mm512_unpackhi_epi64(r[2 * m], r[2 * m + 1]);
    }
    for (std::size_t h = 0; h < 2; ++h) {  // rows 4 h .. 4 h + 3
      u[4 * h] = _mm512_permutex2var_epi64(t[4 * h], pairs_low, t[4 * h + 2]);       // entries 0, 4
      u[4 * h + 1] = _mm512_permutex2var_epi64(t[4 * h + 1], pairs_low, t[4 * h + 3]);  // entries 1, 5
      u[4 * h + 2] = _mm512_permutex2var_epi64(t[4 * h], pairs_high, t[4 * h + 2]);     // entries 2, 6
      u[4 * h + 3] = _mm512_permutex2var_epi64(t[4 * h + 1], pairs_high, t[4 * h + 3]);  // entries 3, 7
    }
    for (std::size_t e = 0; e < 4; ++e) {
      out[e] = _mm512_permutex2var_epi64(u[e], quads_low, u[4 + e]);
      out[4 + e] = _mm512_permutex2var_epi64(u[e], quads_high, u[4 + e]);
    }
  };
  auto load = [&](const WindowPlanes& planes, std::size_t c0, std::size_t count, Words16* out) {
    if (planes.half % 8 != 0) {  // windows of fewer than sixteen entries: word by word
      for (std::size_t s = 0; s < 2 * planes.half; ++s) {
        const std::uint64_t* plane = s < planes.half ? planes.first : planes.second;
        alignas(64) std::uint64_t lane[kGridBlock] = {};
        for (std::size_t m = 0; m < count; ++m) lane[m] = plane[planes.half * (c0 + m) + s % planes.half];
        std::memcpy(&out[s], lane, sizeof lane);
      }
      return;
    }
    for (std::size_t half = 0; half < 2; ++half)
      for (std::size_t s0 = 0; s0 < planes.half; s0 += 8)
        for (std::size_t group = 0; group < 2; ++group) {
          const std::size_t first = 8 * group;
          if (first >= count && group != 0) {
            for (std::size_t e = 0; e < 8; ++e)
              std::memset(reinterpret_cast<char*>(&out[half * planes.half + s0 + e]) + 64 * group, 0, 64);
            continue;
          }
          const std::uint64_t* rows = (half == 0 ? planes.first : planes.second) + planes.half * (c0 + first) + s0;
          Four entries[8];
          transpose8(rows, planes.half, std::min<std::size_t>(8, count - first), entries);
          for (std::size_t e = 0; e < 8; ++e)
            std::memcpy(reinterpret_cast<char*>(&out[half * planes.half + s0 + e]) + 64 * group, &entries[e], 64);
        }
  };
  for (std::size_t c0 = 0; c0 < windows; c0 += kGridBlock) {
    const std::size_t count = std::min(kGridBlock, windows - c0);
    load(g.x, c0, count, x);
    load(g.y, c0, count, y);
    alignas(64) std::uint64_t rho[kGridBlock] = {};
    for (std::size_t m = 0; m < count; ++m) rho[m] = weight[c0 + m];
    const Four rho0 = _mm512_load_si512(rho), rho1 = _mm512_load_si512(rho + 8);
    auto leaf = [&](std::size_t p, Words16 product) {
      Four first, second;
      std::memcpy(&first, &product, 64);
      std::memcpy(&second, reinterpret_cast<const char*>(&product) + 64, 64);
      acc[p] = _mm512_ternarylogic_epi64(
          acc[p],
          _mm512_xor_si512(_mm512_clmulepi64_epi128(first, rho0, 0x00), _mm512_clmulepi64_epi128(first, rho0, 0x11)),
          _mm512_xor_si512(_mm512_clmulepi64_epi128(second, rho1, 0x00), _mm512_clmulepi64_epi128(second, rho1, 0x11)),
          0x96);
    };
    grid_walk(g.variables, x, y, leaf);
  }
  for (std::size_t p = 0; p < points; ++p) {
    const __m128i s = _mm_xor_si128(
        _mm_xor_si128(_mm512_castsi512_si128(acc[p]), _mm512_extracti32x4_epi32(acc[p], 1)),
        _mm_xor_si128(_mm512_extracti32x4_epi32(acc[p], 2), _mm512_extracti32x4_epi32(acc[p], 3)));
    Gf128 sum;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(&sum), s);
    grid[p] = grid[p] ^ sum;
  }
  wipe(x, entries * sizeof(Words16));
  wipe(y, entries * sizeof(Words16));
}

}  // namespace

const FieldKernels* vpclmul_field_kernels() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("vpclmulqdq"))
    return nullptr;
  // A single product gains nothing from wide registers: it is PCLMULQDQ's.
  const FieldKernels* narrow = pclmul_field_kernels();
  if (narrow == nullptr) return nullptr;
  static const FieldKernels kernels = {narrow->mul, &window_sums, &weight_lanes, &round_sums, &fold,
                                       &fold_and_sum, &bind_points, &grid_sums, "vpclmul"};
  return &kernels;
}

}  // namespace mpc::rss3::detail

#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#else

namespace mpc::rss3::detail {
const FieldKernels* vpclmul_field_kernels() { return nullptr; }
}  // namespace mpc::rss3::detail

#endif
