// Internal to field_kernels_pclmul.cpp and field_kernels_vpclmul_ymm.cpp: GF(2^128)
// arithmetic one element at a time with PCLMULQDQ, the policy of field_kernels_impl.hpp's
// KernelSet. Internal linkage only, so that each file's copy stays with its own ISA flags.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "protocol/rss3/field_kernels_impl.hpp"

namespace mpc::rss3::detail {
namespace {

struct PclmulField {
  using Value = __m128i;
  // A product before reduction: lo + mid x^64 + hi x^128 (mid is the sum of the two cross terms).
  struct Wide {
    __m128i lo, mid, hi;
  };
  static Value load(Gf128 v) { return _mm_set_epi64x(static_cast<long long>(v.hi), static_cast<long long>(v.lo)); }
  static Gf128 store(Value v) {
    Gf128 out;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(&out), v);
    return out;
  }
  static Value add(Value a, Value b) { return _mm_xor_si128(a, b); }
  static Wide zero() { return {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()}; }
  static void accumulate(Wide& acc, Value a, Value b) {
    acc.lo = _mm_xor_si128(acc.lo, _mm_clmulepi64_si128(a, b, 0x00));
    acc.hi = _mm_xor_si128(acc.hi, _mm_clmulepi64_si128(a, b, 0x11));
    acc.mid = _mm_xor_si128(acc.mid, _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x01), _mm_clmulepi64_si128(a, b, 0x10)));
  }
  // acc += a * b, both read as elements of degree < 64: one product of degree < 127.
  static void accumulate_words(Wide& acc, std::uint64_t a, std::uint64_t b) {
    acc.lo = _mm_xor_si128(acc.lo, _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<long long>(a)),
                                                        _mm_cvtsi64_si128(static_cast<long long>(b)), 0x00));
  }
  static Wide product(Value a, Value b) {
    Wide w = zero();
    accumulate(w, a, b);
    return w;
  }
  // x^128 = x^7 + x^2 + x + 1: fold the top 128 bits down in two 64-bit steps.
  static Gf128 reduce(Wide w) {
    const __m128i poly = _mm_set_epi64x(0, 0x87);
    __m128i low = _mm_xor_si128(w.lo, _mm_slli_si128(w.mid, 8));
    __m128i high = _mm_xor_si128(w.hi, _mm_srli_si128(w.mid, 8));
    const __m128i top = _mm_clmulepi64_si128(high, poly, 0x01);  // bits 192..255 times x^128
    high = _mm_xor_si128(high, _mm_srli_si128(top, 8));
    low = _mm_xor_si128(low, _mm_slli_si128(top, 8));
    low = _mm_xor_si128(low, _mm_clmulepi64_si128(high, poly, 0x00));  // bits 128..191
    return store(low);
  }
};

}  // namespace
}  // namespace mpc::rss3::detail
