// AES-128-CTR alpha generation with VAES (see prf_vaes.hpp). This file alone is compiled
// with -maes -mvaes -mavx512f -mavx512bw; it has no external-linkage code except the two
// entry points below, which the caller only reaches after vaes_prf_supported() (defined
// in correlated_randomness.cpp, compiled for the baseline instruction set).
//
// Key expansion: the AES-NI key-schedule sequence of Gueron, "Intel Advanced Encryption
// Standard (AES) New Instructions Set", Intel white paper 323641 (2010), figure 25.
#include "protocol/rss3/prf_vaes.hpp"

#if defined(__VAES__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AES__)
#include <immintrin.h>

namespace mpc::rss3::detail {
namespace {

inline __m128i expand_step(__m128i key, __m128i assist) {
  assist = _mm_shuffle_epi32(assist, 0xff);
  key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
  key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
  key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
  return _mm_xor_si128(key, assist);
}

struct Schedule {
  __m512i k[11];
};

inline void broadcast(const AesRoundKeys& round_keys, Schedule& s) {
  for (int r = 0; r < 11; ++r)
    s.k[r] = _mm512_maskz_broadcast_i32x4(0xffff, _mm_load_si128(reinterpret_cast<const __m128i*>(round_keys.bytes + 16 * r)));
}

// Encrypts four lanes of counter blocks under both keys and XORs the results.
#define MPC_RSS3_AES_ROUNDS(X0, X1, X2, X3, S)  \
  do {                                          \
    X0 = _mm512_xor_si512(X0, S.k[0]);          \
    X1 = _mm512_xor_si512(X1, S.k[0]);          \
    X2 = _mm512_xor_si512(X2, S.k[0]);          \
    X3 = _mm512_xor_si512(X3, S.k[0]);          \
    for (int r = 1; r < 10; ++r) {              \
      X0 = _mm512_aesenc_epi128(X0, S.k[r]);    \
      X1 = _mm512_aesenc_epi128(X1, S.k[r]);    \
      X2 = _mm512_aesenc_epi128(X2, S.k[r]);    \
      X3 = _mm512_aesenc_epi128(X3, S.k[r]);    \
    }                                           \
    X0 = _mm512_aesenclast_epi128(X0, S.k[10]); \
    X1 = _mm512_aesenclast_epi128(X1, S.k[10]); \
    X2 = _mm512_aesenclast_epi128(X2, S.k[10]); \
    X3 = _mm512_aesenclast_epi128(X3, S.k[10]); \
  } while (0)

}  // namespace

void vaes_expand_key(const std::uint8_t key[16], AesRoundKeys& round_keys) {
  __m128i k[11];
  k[0] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key));
  k[1] = expand_step(k[0], _mm_aeskeygenassist_si128(k[0], 0x01));
  k[2] = expand_step(k[1], _mm_aeskeygenassist_si128(k[1], 0x02));
  k[3] = expand_step(k[2], _mm_aeskeygenassist_si128(k[2], 0x04));
  k[4] = expand_step(k[3], _mm_aeskeygenassist_si128(k[3], 0x08));
  k[5] = expand_step(k[4], _mm_aeskeygenassist_si128(k[4], 0x10));
  k[6] = expand_step(k[5], _mm_aeskeygenassist_si128(k[5], 0x20));
  k[7] = expand_step(k[6], _mm_aeskeygenassist_si128(k[6], 0x40));
  k[8] = expand_step(k[7], _mm_aeskeygenassist_si128(k[7], 0x80));
  k[9] = expand_step(k[8], _mm_aeskeygenassist_si128(k[8], 0x1b));
  k[10] = expand_step(k[9], _mm_aeskeygenassist_si128(k[9], 0x36));
  for (int r = 0; r < 11; ++r) _mm_store_si128(reinterpret_cast<__m128i*>(round_keys.bytes + 16 * r), k[r]);
  for (int r = 0; r < 11; ++r) k[r] = _mm_setzero_si128();
  __asm__ __volatile__("" : : "r"(k) : "memory");
}

namespace {

// Counter blocks are kept byte-reversed, so the big-endian 32-bit counter is the low dword of each
// lane and advances with a plain 32-bit add (no carry: the caller keeps counter + blocks <= 2^32);
// a byte shuffle turns them back before encryption.
struct Counters {
  Counters(const std::uint8_t prefix[12], std::uint32_t counter) {
    alignas(16) std::uint8_t reversed[16];
    for (int i = 0; i < 12; ++i) reversed[15 - i] = prefix[i];
    for (int i = 0; i < 4; ++i) reversed[3 - i] = static_cast<std::uint8_t>(counter >> (24 - 8 * i));
    const __m512i base =
        _mm512_maskz_broadcast_i32x4(0xffff, _mm_load_si128(reinterpret_cast<const __m128i*>(reversed)));
    next = _mm512_add_epi32(base, _mm512_set_epi32(0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0));
  }
  // The next four counter blocks, one per lane.
  __m512i take() {
    const __m512i out = _mm512_shuffle_epi8(next, reverse);
    next = _mm512_add_epi32(next, four);
    return out;
  }
  __m512i next;
  const __m512i reverse =
      _mm512_maskz_broadcast_i32x4(0xffff, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  const __m512i four = _mm512_set_epi32(0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4);
};

inline __m512i encrypt(__m512i x, const Schedule& s) {
  x = _mm512_xor_si512(x, s.k[0]);
  for (int r = 1; r < 10; ++r) x = _mm512_aesenc_epi128(x, s.k[r]);
  return _mm512_aesenclast_epi128(x, s.k[10]);
}

inline void store_blocks(std::uint8_t* out, std::size_t left, __m512i v) {
  const __mmask8 mask = left >= 4 ? 0xff : static_cast<__mmask8>((1u << (2 * left)) - 1);
  _mm512_mask_storeu_epi64(out, mask, v);
}

}  // namespace

void vaes_ctr_xor2(const AesRoundKeys& own, const AesRoundKeys& previous, const std::uint8_t prefix[12],
                   std::uint32_t counter, std::uint8_t* out, std::size_t blocks) {
  Schedule a, b;
  broadcast(own, a);
  broadcast(previous, b);
  Counters counters(prefix, counter);
  std::size_t done = 0;
  for (; done + 16 <= blocks; done += 16) {
    __m512i c0 = counters.take(), c1 = counters.take(), c2 = counters.take(), c3 = counters.take();
    __m512i d0 = c0, d1 = c1, d2 = c2, d3 = c3;
    MPC_RSS3_AES_ROUNDS(c0, c1, c2, c3, a);
    MPC_RSS3_AES_ROUNDS(d0, d1, d2, d3, b);
    std::uint8_t* o = out + done * 16;
    _mm512_storeu_si512(o, _mm512_xor_si512(c0, d0));
    _mm512_storeu_si512(o + 64, _mm512_xor_si512(c1, d1));
    _mm512_storeu_si512(o + 128, _mm512_xor_si512(c2, d2));
    _mm512_storeu_si512(o + 192, _mm512_xor_si512(c3, d3));
  }
  for (; done < blocks; done += 4) {
    const __m512i c = counters.take();
    store_blocks(out + done * 16, blocks - done, _mm512_xor_si512(encrypt(c, a), encrypt(c, b)));
  }
  // Expanded keys live in registers and on this stack frame: clear them.
  a = Schedule{};
  b = Schedule{};
  __asm__ __volatile__("" : : "r"(&a), "r"(&b) : "memory");
}

void vaes_ctr(const AesRoundKeys& key, const std::uint8_t prefix[12], std::uint32_t counter, std::uint8_t* out,
              std::size_t blocks) {
  Schedule a;
  broadcast(key, a);
  Counters counters(prefix, counter);
  std::size_t done = 0;
  for (; done + 16 <= blocks; done += 16) {
    __m512i c0 = counters.take(), c1 = counters.take(), c2 = counters.take(), c3 = counters.take();
    MPC_RSS3_AES_ROUNDS(c0, c1, c2, c3, a);
    std::uint8_t* o = out + done * 16;
    _mm512_storeu_si512(o, c0);
    _mm512_storeu_si512(o + 64, c1);
    _mm512_storeu_si512(o + 128, c2);
    _mm512_storeu_si512(o + 192, c3);
  }
  for (; done < blocks; done += 4) store_blocks(out + done * 16, blocks - done, encrypt(counters.take(), a));
  a = Schedule{};
  __asm__ __volatile__("" : : "r"(&a) : "memory");
}

}  // namespace mpc::rss3::detail

#else  // not built with VAES support

namespace mpc::rss3::detail {
void vaes_expand_key(const std::uint8_t*, AesRoundKeys&) {}
void vaes_ctr_xor2(const AesRoundKeys&, const AesRoundKeys&, const std::uint8_t*, std::uint32_t, std::uint8_t*,
                   std::size_t) {}
void vaes_ctr(const AesRoundKeys&, const std::uint8_t*, std::uint32_t, std::uint8_t*, std::size_t) {}
}  // namespace mpc::rss3::detail

#endif
