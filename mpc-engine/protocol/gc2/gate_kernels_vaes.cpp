// The fused VAES half-gate kernels (see gate_kernels.hpp). This file alone is compiled with
// -maes -mvaes -mavx512f -mavx512bw -mavx512vl. It defines nothing with external linkage but
// the two entry points, and calls no inline function of a shared header with external linkage
// (not even Block's operators or std::min): such a function could be emitted here with AVX-512
// code and picked by the linker for the baseline path. (aesni_key_expansion.hpp's have internal
// linkage.)
//
// A 512-bit register holds four labels. From 16 instances on, they are four consecutive
// instances of one gate's wire, which the slot layout (slot * instances + e) keeps adjacent, so
// loads and stores are plain (masked at a partial last group); below, they are gathered lane by
// lane from consecutive gates of the layer, so one instance still fills the registers. Per
// group of four gate-instances the garbler runs four hashes (A0, A1, B0, B1) and the evaluator
// two (A, B); two garbler groups or four evaluator groups go through the AES rounds together,
// eight independent registers in flight.
//
// Hash: H(x, t) = AES_k(sigma(x) ^ t) ^ sigma(x), sigma(lo, hi) = (hi, lo ^ hi), the same
// function as two_party::tccr_hash. sigma is linear, so sigma(A1) = sigma(A0) ^ sigma(delta).
#include "protocol/gc2/gate_kernels.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"  // kFixedKey only: declarations and data

#if defined(__VAES__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AES__)
#include <immintrin.h>

#include "common/aesni_key_expansion.hpp"

// GCC 12 reports its own AVX-512 intrinsics (shift and masked-load forms built on
// _mm512_undefined_*()) as reading uninitialised values; nothing here does.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace mpc::gc2::detail {
namespace {

struct Schedule {
  __m512i k[11];
};

// The fixed key's round keys, each broadcast to the four lanes.
Schedule make_schedule() {
  __m128i k[11];
  aesni::expand_key_128(two_party::kFixedKey, k);
  Schedule s;
  for (int r = 0; r < 11; ++r) s.k[r] = _mm512_broadcast_i32x4(k[r]);
  return s;
}

const Schedule& schedule() {
  static const Schedule s = make_schedule();
  return s;
}

template <int N>
inline void aes_rounds(const Schedule& s, __m512i (&x)[N]) {
  for (int j = 0; j < N; ++j) x[j] = _mm512_xor_si512(x[j], s.k[0]);
  for (int r = 1; r < 10; ++r)
    for (int j = 0; j < N; ++j) x[j] = _mm512_aesenc_epi128(x[j], s.k[r]);
  for (int j = 0; j < N; ++j) x[j] = _mm512_aesenclast_epi128(x[j], s.k[10]);
}

// (lo, hi) -> (hi, lo ^ hi) in every lane.
inline __m512i sigma(__m512i x) {
  return _mm512_xor_si512(_mm512_shuffle_epi32(x, _MM_PERM_BADC), _mm512_maskz_mov_epi64(0xaa, x));
}

// All ones in a lane whose label has lsb 1 (its point-and-permute bit), else zero.
inline __m512i lsb_mask(__m512i x) {
  const __m512i low = _mm512_srai_epi64(_mm512_slli_epi64(x, 63), 63);
  return _mm512_shuffle_epi32(low, _MM_PERM_BABA);
}

// The tweaks of gate-instances first .. first + 3 on the a labels: (2k, tweak_high) per lane.
inline __m512i first_tweaks(std::uint64_t tweak_high, std::uint64_t first) {
  const auto h = static_cast<long long>(tweak_high);
  const auto t = static_cast<long long>(2 * first);
  return _mm512_set_epi64(h, t + 6, h, t + 4, h, t + 2, h, t);
}

// Lanes of the group of four instances starting at e: all four, or the n - e left.
inline __mmask8 lanes(std::size_t e, std::size_t n) {
  const std::size_t left = n - e;
  return left >= 4 ? static_cast<__mmask8>(0xff) : static_cast<__mmask8>((1u << (2 * left)) - 1);
}

struct GarbleConsts {
  __m512i delta;
  __m512i sigma_delta;
  __m512i tweak_step;  // 8 = four gate-instances, two tweaks each
  __m512i b_tweak;     // 2k + 1 = 2k ^ 1
};

GarbleConsts garble_consts(__m128i delta) {
  const __m512i d = _mm512_broadcast_i32x4(delta);
  return {d, sigma(d), _mm512_set_epi64(0, 8, 0, 8, 0, 8, 0, 8), _mm512_set_epi64(0, 1, 0, 1, 0, 1, 0, 1)};
}

// G groups of four gate-instances with consecutive tweaks: zero labels a0, b0 in; tables and
// the output zero label out.
template <int G>
inline void garble_core(const Schedule& s, const GarbleConsts& c, const __m512i (&a0)[G], const __m512i (&b0)[G],
                        __m512i& tweak, __m512i (&t_g)[G], __m512i (&t_e)[G], __m512i (&w)[G]) {
  __m512i sa0[G], sb0[G];
  __m512i x[4 * G];
  for (int g = 0; g < G; ++g) {
    sa0[g] = sigma(a0[g]);
    sb0[g] = sigma(b0[g]);
    const __m512i tweak_b = _mm512_xor_si512(tweak, c.b_tweak);
    x[4 * g + 0] = _mm512_xor_si512(sa0[g], tweak);
    x[4 * g + 1] = _mm512_ternarylogic_epi64(sa0[g], c.sigma_delta, tweak, 0x96);
    x[4 * g + 2] = _mm512_xor_si512(sb0[g], tweak_b);
    x[4 * g + 3] = _mm512_ternarylogic_epi64(sb0[g], c.sigma_delta, tweak_b, 0x96);
    tweak = _mm512_add_epi64(tweak, c.tweak_step);
  }
  aes_rounds(s, x);
  for (int g = 0; g < G; ++g) {
    const __m512i ha0 = _mm512_xor_si512(x[4 * g + 0], sa0[g]);
    const __m512i ha1 = _mm512_ternarylogic_epi64(x[4 * g + 1], sa0[g], c.sigma_delta, 0x96);
    const __m512i hb0 = _mm512_xor_si512(x[4 * g + 2], sb0[g]);
    const __m512i hb1 = _mm512_ternarylogic_epi64(x[4 * g + 3], sb0[g], c.sigma_delta, 0x96);
    const __m512i pa = lsb_mask(a0[g]);
    const __m512i pb = lsb_mask(b0[g]);
    // T_G = H(A0) ^ H(A1) ^ pb * delta;  T_E = H(B0) ^ H(B1) ^ A0.
    t_g[g] = _mm512_xor_si512(_mm512_xor_si512(ha0, ha1), _mm512_and_si512(c.delta, pb));
    const __m512i hb01 = _mm512_xor_si512(hb0, hb1);
    t_e[g] = _mm512_xor_si512(hb01, a0[g]);
    // W0 = H(A0) ^ pa * T_G  ^  H(B0) ^ pb * (T_E ^ A0).
    const __m512i w_g = _mm512_xor_si512(ha0, _mm512_and_si512(t_g[g], pa));
    const __m512i w_e = _mm512_xor_si512(hb0, _mm512_and_si512(hb01, pb));
    w[g] = _mm512_xor_si512(w_g, w_e);
  }
}

// G groups of four gate-instances with consecutive tweaks: active labels a, b and the tables
// in; the output's active label out.
template <int G>
inline void evaluate_core(const Schedule& s, const GarbleConsts& c, const __m512i (&wa)[G], const __m512i (&wb)[G],
                          const __m512i (&t_g)[G], const __m512i (&t_e)[G], __m512i& tweak, __m512i (&w)[G]) {
  __m512i sa[G], sb[G];
  __m512i x[2 * G];
  for (int g = 0; g < G; ++g) {
    sa[g] = sigma(wa[g]);
    sb[g] = sigma(wb[g]);
    x[2 * g + 0] = _mm512_xor_si512(sa[g], tweak);
    x[2 * g + 1] = _mm512_ternarylogic_epi64(sb[g], tweak, c.b_tweak, 0x96);
    tweak = _mm512_add_epi64(tweak, c.tweak_step);
  }
  aes_rounds(s, x);
  for (int g = 0; g < G; ++g) {
    const __m512i ha = _mm512_xor_si512(x[2 * g + 0], sa[g]);
    const __m512i hb = _mm512_xor_si512(x[2 * g + 1], sb[g]);
    // W = H(A) ^ sa * T_G  ^  H(B) ^ sb * (T_E ^ A).
    const __m512i w_g = _mm512_xor_si512(ha, _mm512_and_si512(t_g[g], lsb_mask(wa[g])));
    const __m512i w_e = _mm512_xor_si512(hb, _mm512_and_si512(_mm512_xor_si512(t_e[g], wa[g]), lsb_mask(wb[g])));
    w[g] = _mm512_xor_si512(w_g, w_e);
  }
}

inline const std::uint64_t* words(const Block* p) { return reinterpret_cast<const std::uint64_t*>(p); }
inline std::uint64_t* words(Block* p) { return reinterpret_cast<std::uint64_t*>(p); }

// One gate, n instances: its rows are contiguous, so four labels per plain (masked) load.
template <int G>
inline void garble_rows(const Schedule& s, const GarbleConsts& c, const Block* a, const Block* b, Block* out,
                        Block* tg, Block* te, const __mmask8 (&mask)[G], __m512i& tweak) {
  __m512i a0[G], b0[G], t_g[G], t_e[G], w[G];
  for (int g = 0; g < G; ++g) {
    a0[g] = _mm512_maskz_loadu_epi64(mask[g], words(a) + 8 * g);
    b0[g] = _mm512_maskz_loadu_epi64(mask[g], words(b) + 8 * g);
  }
  garble_core<G>(s, c, a0, b0, tweak, t_g, t_e, w);
  for (int g = 0; g < G; ++g) {
    _mm512_mask_storeu_epi64(words(tg) + 8 * g, mask[g], t_g[g]);
    _mm512_mask_storeu_epi64(words(te) + 8 * g, mask[g], t_e[g]);
    _mm512_mask_storeu_epi64(words(out) + 8 * g, mask[g], w[g]);
  }
}

template <int G>
inline void evaluate_rows(const Schedule& s, const GarbleConsts& c, const Block* a, const Block* b, Block* out,
                          const Block* tg, const Block* te, const __mmask8 (&mask)[G], __m512i& tweak) {
  __m512i wa[G], wb[G], t_g[G], t_e[G], w[G];
  for (int g = 0; g < G; ++g) {
    wa[g] = _mm512_maskz_loadu_epi64(mask[g], words(a) + 8 * g);
    wb[g] = _mm512_maskz_loadu_epi64(mask[g], words(b) + 8 * g);
    t_g[g] = _mm512_maskz_loadu_epi64(mask[g], words(tg) + 8 * g);
    t_e[g] = _mm512_maskz_loadu_epi64(mask[g], words(te) + 8 * g);
  }
  evaluate_core<G>(s, c, wa, wb, t_g, t_e, tweak, w);
  for (int g = 0; g < G; ++g) _mm512_mask_storeu_epi64(words(out) + 8 * g, mask[g], w[g]);
}

void garble_gate(const Schedule& s, const GarbleConsts& c, const Block* a, const Block* b, Block* out, Block* tg,
                 Block* te, std::size_t n, __m512i& tweak) {
  std::size_t e = 0;
  for (; e + 8 <= n; e += 8) {
    const __mmask8 full[2] = {0xff, 0xff};
    garble_rows<2>(s, c, a + e, b + e, out + e, tg + e, te + e, full, tweak);
  }
  for (; e < n; e += 4) {
    const __mmask8 part[1] = {lanes(e, n)};
    garble_rows<1>(s, c, a + e, b + e, out + e, tg + e, te + e, part, tweak);
  }
}

void evaluate_gate(const Schedule& s, const GarbleConsts& c, const Block* a, const Block* b, Block* out,
                   const Block* tg, const Block* te, std::size_t n, __m512i& tweak) {
  std::size_t e = 0;
  for (; e + 16 <= n; e += 16) {
    const __mmask8 full[4] = {0xff, 0xff, 0xff, 0xff};
    evaluate_rows<4>(s, c, a + e, b + e, out + e, tg + e, te + e, full, tweak);
  }
  for (; e < n; e += 4) {
    const __mmask8 part[1] = {lanes(e, n)};
    evaluate_rows<1>(s, c, a + e, b + e, out + e, tg + e, te + e, part, tweak);
  }
}

// Few instances: the gate-instances of consecutive gates (independent within a layer) share
// registers, one label per lane, so small batches keep eight registers in flight too.
struct Lanes {
  const Block* a[16];
  const Block* b[16];
  Block* out[16];
  std::size_t table[16];  // T_G's index in the chunk's tables; T_E is n further
  std::size_t count = 0;
};

// Fills up to `want` lanes from the cursor (gate g, instance e), advancing it.
inline void next_lanes(const circuits::AndOp* ops, std::size_t count, Block* slots, std::size_t n, std::size_t& g,
                       std::size_t& e, std::size_t want, Lanes& lanes) {
  lanes.count = 0;
  while (lanes.count < want && g < count) {
    const std::size_t l = lanes.count++;
    lanes.a[l] = slots + static_cast<std::size_t>(ops[g].in0) * n + e;
    lanes.b[l] = slots + static_cast<std::size_t>(ops[g].in1) * n + e;
    lanes.out[l] = slots + static_cast<std::size_t>(ops[g].out) * n + e;
    lanes.table[l] = 2 * g * n + e;
    if (++e == n) {
      e = 0;
      ++g;
    }
  }
}

inline __m512i gather(const Block* const* p, std::size_t first, std::size_t count) {
  const __m128i zero = _mm_setzero_si128();
  auto lane = [&](std::size_t l) {
    return first + l < count ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(p[first + l])) : zero;
  };
  __m512i v = _mm512_castsi128_si512(lane(0));
  v = _mm512_inserti32x4(v, lane(1), 1);
  v = _mm512_inserti32x4(v, lane(2), 2);
  return _mm512_inserti32x4(v, lane(3), 3);
}

inline void scatter(__m512i v, Block* const* p, std::size_t first, std::size_t count) {
  if (first + 0 < count) _mm_storeu_si128(reinterpret_cast<__m128i*>(p[first + 0]), _mm512_castsi512_si128(v));
  if (first + 1 < count) _mm_storeu_si128(reinterpret_cast<__m128i*>(p[first + 1]), _mm512_extracti32x4_epi32(v, 1));
  if (first + 2 < count) _mm_storeu_si128(reinterpret_cast<__m128i*>(p[first + 2]), _mm512_extracti32x4_epi32(v, 2));
  if (first + 3 < count) _mm_storeu_si128(reinterpret_cast<__m128i*>(p[first + 3]), _mm512_extracti32x4_epi32(v, 3));
}

template <int G>
void garble_lanes(const Schedule& s, const GarbleConsts& c, const circuits::AndOp* ops, std::size_t count,
                  Block* slots, std::size_t n, Block* tables, __m512i& tweak) {
  std::size_t g = 0, e = 0;
  Lanes lanes;
  Block* tg[16];
  Block* te[16];
  for (;;) {
    next_lanes(ops, count, slots, n, g, e, 4 * G, lanes);
    if (lanes.count == 0) return;
    __m512i a0[G], b0[G], t_g[G], t_e[G], w[G];
    for (int q = 0; q < G; ++q) {
      a0[q] = gather(lanes.a, 4 * q, lanes.count);
      b0[q] = gather(lanes.b, 4 * q, lanes.count);
    }
    garble_core<G>(s, c, a0, b0, tweak, t_g, t_e, w);
    for (std::size_t l = 0; l < lanes.count; ++l) {
      tg[l] = tables + lanes.table[l];
      te[l] = tables + lanes.table[l] + n;
    }
    for (int q = 0; q < G; ++q) {
      scatter(t_g[q], tg, 4 * q, lanes.count);
      scatter(t_e[q], te, 4 * q, lanes.count);
      scatter(w[q], lanes.out, 4 * q, lanes.count);
    }
  }
}

template <int G>
void evaluate_lanes(const Schedule& s, const GarbleConsts& c, const circuits::AndOp* ops, std::size_t count,
                    Block* slots, std::size_t n, const Block* tables, __m512i& tweak) {
  std::size_t g = 0, e = 0;
  Lanes lanes;
  const Block* tg[16];
  const Block* te[16];
  for (;;) {
    next_lanes(ops, count, slots, n, g, e, 4 * G, lanes);
    if (lanes.count == 0) return;
    for (std::size_t l = 0; l < lanes.count; ++l) {
      tg[l] = tables + lanes.table[l];
      te[l] = tables + lanes.table[l] + n;
    }
    __m512i wa[G], wb[G], t_g[G], t_e[G], w[G];
    for (int q = 0; q < G; ++q) {
      wa[q] = gather(lanes.a, 4 * q, lanes.count);
      wb[q] = gather(lanes.b, 4 * q, lanes.count);
      t_g[q] = gather(tg, 4 * q, lanes.count);
      t_e[q] = gather(te, 4 * q, lanes.count);
    }
    evaluate_core<G>(s, c, wa, wb, t_g, t_e, tweak, w);
    for (int q = 0; q < G; ++q) scatter(w[q], lanes.out, 4 * q, lanes.count);
  }
}

// Below this many instances, gates share registers (lanes); from it on, each gate's rows fill them.
constexpr std::size_t kRowInstances = 16;

}  // namespace

void vaes_garble_ands(const circuits::AndOp* ops, std::size_t count, Block* slots, std::size_t n, Block* tables,
                      const Block& delta, std::uint64_t tweak_high, std::uint64_t first) {
  const Schedule& s = schedule();
  const GarbleConsts c = garble_consts(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&delta)));
  __m512i tweak = first_tweaks(tweak_high, first);
  if (n < kRowInstances) {
    garble_lanes<2>(s, c, ops, count, slots, n, tables, tweak);
    return;
  }
  for (std::size_t g = 0; g < count; ++g) {
    // A partial last group advanced the tweaks by four lanes: restart them at the gate.
    tweak = first_tweaks(tweak_high, first + g * n);
    Block* tg = tables + 2 * g * n;
    garble_gate(s, c, slots + static_cast<std::size_t>(ops[g].in0) * n, slots + static_cast<std::size_t>(ops[g].in1) * n,
                slots + static_cast<std::size_t>(ops[g].out) * n, tg, tg + n, n, tweak);
  }
}

void vaes_evaluate_ands(const circuits::AndOp* ops, std::size_t count, Block* slots, std::size_t n,
                        const Block* tables, std::uint64_t tweak_high, std::uint64_t first) {
  const Schedule& s = schedule();
  const GarbleConsts c = garble_consts(_mm_setzero_si128());  // the evaluator has no delta
  __m512i tweak = first_tweaks(tweak_high, first);
  if (n < kRowInstances) {
    evaluate_lanes<4>(s, c, ops, count, slots, n, tables, tweak);
    return;
  }
  for (std::size_t g = 0; g < count; ++g) {
    tweak = first_tweaks(tweak_high, first + g * n);
    const Block* tg = tables + 2 * g * n;
    evaluate_gate(s, c, slots + static_cast<std::size_t>(ops[g].in0) * n,
                  slots + static_cast<std::size_t>(ops[g].in1) * n, slots + static_cast<std::size_t>(ops[g].out) * n,
                  tg, tg + n, n, tweak);
  }
}

}  // namespace mpc::gc2::detail

#else

#include "common/error.hpp"

namespace mpc::gc2::detail {

// Not reached: vaes_supported() is false where this file is built without VAES.
void vaes_garble_ands(const circuits::AndOp*, std::size_t, Block*, std::size_t, Block*, const Block&, std::uint64_t,
                      std::uint64_t) {
  throw Error(Component::Protocol, "garbled circuits: VAES kernel not built for this target");
}
void vaes_evaluate_ands(const circuits::AndOp*, std::size_t, Block*, std::size_t, const Block*, std::uint64_t,
                        std::uint64_t) {
  throw Error(Component::Protocol, "garbled circuits: VAES kernel not built for this target");
}

}  // namespace mpc::gc2::detail

#endif
