// AES-128 key expansion (FIPS-197 section 5.2) with AES-NI: the key-schedule sequence of
// Gueron, "Intel Advanced Encryption Standard (AES) New Instructions Set", Intel white paper
// 323641 (2010), figure 25.
//
// For files compiled with -maes (and whatever wider ISA flags each needs). Everything here has
// internal linkage, so each such file keeps its own copy built with its own flags, and the
// linker can never pick one built for AVX-512 for code that runs on a CPU without it. The
// caller wipes the round keys it no longer needs.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace mpc::aesni {
namespace {

inline __m128i expand_step(__m128i key, __m128i assist) {
  assist = _mm_shuffle_epi32(assist, 0xff);
  key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
  key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
  key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
  return _mm_xor_si128(key, assist);
}

// round_keys[0] is the key itself, round_keys[10] the last round's.
inline void expand_key_128(const std::uint8_t key[16], __m128i (&round_keys)[11]) {
  __m128i* k = round_keys;
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
}

}  // namespace
}  // namespace mpc::aesni
