// AES-128 and AES-256 key expansion (FIPS-197 section 5.2) with AES-NI: the key-schedule
// sequences of Gueron, "Intel Advanced Encryption Standard (AES) New Instructions Set", Intel
// white paper 323641 (2010), figures 25 and 27.
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

// One step of AES-256's schedule: a word of the previous pair XORed across, then `assist`'s
// broadcast word (taken by the caller from aeskeygenassist).
inline __m128i expand_step_256(__m128i previous, __m128i assist) {
  previous = _mm_xor_si128(previous, _mm_slli_si128(previous, 4));
  previous = _mm_xor_si128(previous, _mm_slli_si128(previous, 4));
  previous = _mm_xor_si128(previous, _mm_slli_si128(previous, 4));
  return _mm_xor_si128(previous, assist);
}

template <int Rcon>
inline void expand_pair_256(__m128i& even, __m128i& odd, __m128i* out) {
  even = expand_step_256(even, _mm_shuffle_epi32(_mm_aeskeygenassist_si128(odd, Rcon), 0xff));
  out[0] = even;
  odd = expand_step_256(odd, _mm_shuffle_epi32(_mm_aeskeygenassist_si128(even, 0), 0xaa));
  out[1] = odd;
}

// round_keys[0] and [1] are the key's halves, round_keys[14] the last round's.
inline void expand_key_256(const std::uint8_t key[32], __m128i (&round_keys)[15]) {
  __m128i even = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key));
  __m128i odd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key + 16));
  round_keys[0] = even;
  round_keys[1] = odd;
  expand_pair_256<0x01>(even, odd, round_keys + 2);
  expand_pair_256<0x02>(even, odd, round_keys + 4);
  expand_pair_256<0x04>(even, odd, round_keys + 6);
  expand_pair_256<0x08>(even, odd, round_keys + 8);
  expand_pair_256<0x10>(even, odd, round_keys + 10);
  expand_pair_256<0x20>(even, odd, round_keys + 12);
  round_keys[14] = expand_step_256(even, _mm_shuffle_epi32(_mm_aeskeygenassist_si128(odd, 0x40), 0xff));
  even = odd = _mm_setzero_si128();
}

}  // namespace
}  // namespace mpc::aesni
