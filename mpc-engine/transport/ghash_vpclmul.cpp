// GHASH with VPCLMULQDQ on 512-bit registers (ghash_vpclmul.hpp). Built with -mvpclmulqdq and
// AVX-512 on x86-64; called only where ghash_vpclmul_kernels(512) (kernel_support.cpp) says the
// CPU has them. Constant time: no branch or memory address depends on the key or the data.
#include "transport/ghash_vpclmul.hpp"

#if defined(__VPCLMULQDQ__) && defined(__PCLMUL__) && defined(__AVX512F__) && defined(__AVX512BW__) && \
    defined(__AVX512VL__)

#include <immintrin.h>

#include "transport/polyval_kernels.hpp"

namespace mpc::transport::detail {
namespace {

__m512i reverse_lane_bytes(__m512i x) {
  const __m512i mask = _mm512_broadcast_i32x4(_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  return _mm512_shuffle_epi8(x, mask);
}

__m128i fold_lanes(__m512i x) {
  return _mm_xor_si128(_mm_xor_si128(_mm512_extracti32x4_epi32(x, 0), _mm512_extracti32x4_epi32(x, 1)),
                       _mm_xor_si128(_mm512_extracti32x4_epi32(x, 2), _mm512_extracti32x4_epi32(x, 3)));
}

// Adds the products of `x` and `p` lane by lane to the unreduced (low, middle, high) sums.
void accumulate(__m512i x, __m512i p, __m512i& low, __m512i& middle, __m512i& high) {
  low = _mm512_xor_si512(low, _mm512_clmulepi64_epi128(x, p, 0x00));
  high = _mm512_xor_si512(high, _mm512_clmulepi64_epi128(x, p, 0x11));
  middle = _mm512_ternarylogic_epi64(middle, _mm512_clmulepi64_epi128(x, p, 0x01), _mm512_clmulepi64_epi128(x, p, 0x10),
                                     0x96);
}

__m128i reduce_lanes(__m512i low, __m512i middle, __m512i high) {
  return reduce_parts(fold_lanes(low), fold_lanes(middle), fold_lanes(high));
}

void absorb512(const GhashPowers& powers, std::uint8_t state[16], const std::uint8_t* data, std::size_t bytes) {
  constexpr std::size_t kRun = 16 * kGhashAggregate;
  __m128i sum = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
  const __m512i* groups = reinterpret_cast<const __m512i*>(powers.words);
  if (bytes >= kRun) {
    const __m512i* halves_sums = reinterpret_cast<const __m512i*>(powers.halves_sum);
    const __m128i top_power = _mm_load_si128(reinterpret_cast<const __m128i*>(powers.words));
    for (; bytes >= kRun; bytes -= kRun, data += kRun) {
      __m512i low = _mm512_setzero_si512();
      __m512i high = _mm512_setzero_si512();
      __m512i middle = _mm512_setzero_si512();
      for (std::size_t g = 0; g < 4; ++g) {
        const __m512i x = reverse_lane_bytes(_mm512_loadu_si512(data + 64 * g));
        const __m512i power = _mm512_load_si512(groups + g);
        low = _mm512_xor_si512(low, _mm512_clmulepi64_epi128(x, power, 0x00));
        high = _mm512_xor_si512(high, _mm512_clmulepi64_epi128(x, power, 0x11));
        const __m512i x_halves = _mm512_xor_si512(x, _mm512_shuffle_epi32(x, _MM_PERM_BADC));
        middle = _mm512_xor_si512(middle, _mm512_clmulepi64_epi128(x_halves, _mm512_load_si512(halves_sums + g), 0x00));
      }
      __m128i run_low = fold_lanes(low);
      __m128i run_high = fold_lanes(high);
      __m128i run_middle = _mm_ternarylogic_epi64(fold_lanes(middle), run_low, run_high, 0x96);
      // The sum so far times H^16, with four products (it is one block, not a run).
      run_low = _mm_xor_si128(run_low, _mm_clmulepi64_si128(sum, top_power, 0x00));
      run_high = _mm_xor_si128(run_high, _mm_clmulepi64_si128(sum, top_power, 0x11));
      run_middle = _mm_ternarylogic_epi64(run_middle, _mm_clmulepi64_si128(sum, top_power, 0x01),
                                          _mm_clmulepi64_si128(sum, top_power, 0x10), 0x96);
      sum = reduce_parts(run_low, run_middle, run_high);
    }
  }
  // The last k < 16 blocks, the last one zero-padded, also with one reduction (a table stream's
  // digest adds a few hundred bytes at a time, so the tail is most of the work): block i meets
  // H^(k - i), which lies in slot 16 - k + i, so the tail's powers are the table's slots from
  // 16 - k on, four per group. Masked loads read no byte past the data and give zeros there,
  // in the padding and in the lanes past the tail.
  if (bytes != 0) {
    const std::size_t blocks = (bytes + 15) / 16;
    __m512i low = _mm512_setzero_si512();
    __m512i high = _mm512_setzero_si512();
    __m512i middle = _mm512_setzero_si512();
    const std::uint64_t* tail_powers = powers.words + 2 * (kGhashAggregate - blocks);
    for (std::size_t first = 0; first < blocks; first += 4) {
      const std::size_t lanes = blocks - first < 4 ? blocks - first : 4;
      const std::size_t left = bytes - 16 * first;
      const __mmask64 in_data = left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
      const __mmask8 words = static_cast<__mmask8>((1u << (2 * lanes)) - 1);
      __m512i x = reverse_lane_bytes(_mm512_maskz_loadu_epi8(in_data, data + 16 * first));
      if (first == 0) x = _mm512_xor_si512(x, _mm512_zextsi128_si512(sum));
      accumulate(x, _mm512_maskz_loadu_epi64(words, tail_powers + 2 * first), low, middle, high);
    }
    sum = reduce_lanes(low, middle, high);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), sum);
}

}  // namespace

const GhashKernels kGhashVpclmul512 = {&polyval_powers, &absorb512, &polyval_value};

}  // namespace mpc::transport::detail

#else

// Not reached: ghash_vpclmul_kernels(512) is null where this file is built without the
// instructions.
namespace mpc::transport::detail {
const GhashKernels kGhashVpclmul512 = {nullptr, nullptr, nullptr};
}  // namespace mpc::transport::detail

#endif
