// Internal to ghash_vpclmul.cpp and ghash_vpclmul_ymm.cpp: POLYVAL's 128-bit arithmetic with
// PCLMULQDQ (the reduction, one product, the key's powers), written once for both widths. Each
// includer is built with its own ISA flags, so everything here has internal linkage: no copy
// built for AVX-512 can be picked by the linker for a CPU without it.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "transport/ghash_vpclmul.hpp"

namespace mpc::transport::detail {
namespace {

// x^128 = x^127 + x^126 + x^121 + 1: the reduction constant's high word, and the low word's 1.
constexpr std::uint64_t kPolyHigh = 0xc200000000000000ull;

inline __m128i reverse_bytes(__m128i x) {
  return _mm_shuffle_epi8(x, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

// (high, low) * x^-128 modulo POLYVAL's polynomial.
inline __m128i reduce(__m128i low, __m128i high) {
  const __m128i poly = _mm_set_epi64x(static_cast<long long>(kPolyHigh), 1);
  __m128i folded = _mm_xor_si128(_mm_shuffle_epi32(low, 0x4e), _mm_clmulepi64_si128(low, poly, 0x10));
  folded = _mm_xor_si128(_mm_shuffle_epi32(folded, 0x4e), _mm_clmulepi64_si128(folded, poly, 0x10));
  return _mm_xor_si128(high, folded);
}

// A 256-bit product given as its low, middle (the cross terms, at 64 bits) and high parts,
// reduced.
inline __m128i reduce_parts(__m128i low, __m128i middle, __m128i high) {
  return reduce(_mm_xor_si128(low, _mm_slli_si128(middle, 8)), _mm_xor_si128(high, _mm_srli_si128(middle, 8)));
}

// POLYVAL's dot product a * b * x^-128.
inline __m128i dot(__m128i a, __m128i b) {
  const __m128i middle = _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x01), _mm_clmulepi64_si128(a, b, 0x10));
  return reduce_parts(_mm_clmulepi64_si128(a, b, 0x00), middle, _mm_clmulepi64_si128(a, b, 0x11));
}

inline void polyval_powers(const std::uint8_t h[16], GhashPowers& powers) {
  // The POLYVAL key is mulX(rev H): a shift by one with the reduction folded in, without a
  // branch on the key's top bit.
  const __m128i reversed = reverse_bytes(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h)));
  std::uint64_t words[2];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(words), reversed);
  const std::uint64_t carry = 0 - (words[1] >> 63);
  const std::uint64_t high = (words[1] << 1) | (words[0] >> 63);
  const std::uint64_t low = words[0] << 1;
  const __m128i key = _mm_set_epi64x(static_cast<long long>(high ^ (carry & kPolyHigh)),
                                     static_cast<long long>(low ^ (carry & 1)));
  __m128i current = key;
  for (std::size_t k = 1; k <= kGhashAggregate; ++k) {
    const std::size_t slot = 2 * (kGhashAggregate - k);
    _mm_store_si128(reinterpret_cast<__m128i*>(powers.words + slot), current);
    _mm_store_si128(reinterpret_cast<__m128i*>(powers.halves_sum + slot),
                    _mm_xor_si128(current, _mm_shuffle_epi32(current, 0x4e)));
    current = dot(current, key);
  }
  words[0] = words[1] = 0;
  __asm__ __volatile__("" : : "r"(words) : "memory");
}

// GHASH's value (GCM byte order) from POLYVAL's state.
inline void polyval_value(const std::uint8_t state[16], std::uint8_t out[16]) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   reverse_bytes(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state))));
}

}  // namespace
}  // namespace mpc::transport::detail
