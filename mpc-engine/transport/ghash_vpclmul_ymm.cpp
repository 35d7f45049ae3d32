// GHASH with VPCLMULQDQ on 256-bit registers (ghash_vpclmul.hpp), for CPUs with VPCLMULQDQ and
// AVX2 but no AVX-512: the same sums as ghash_vpclmul.cpp, two blocks per instruction. Built
// with -mvpclmulqdq -mavx2 on x86-64; called only where ghash_vpclmul_kernels(256)
// (kernel_support.cpp) says the CPU has them. Constant time: no branch or memory address
// depends on the key or the data.
#include "transport/ghash_vpclmul.hpp"

#if defined(__VPCLMULQDQ__) && defined(__PCLMUL__) && defined(__AVX2__)

#include <immintrin.h>

#include <cstring>

#include "transport/polyval_kernels.hpp"

namespace mpc::transport::detail {
namespace {

__m256i reverse_lane_bytes(__m256i x) {
  const __m256i mask = _mm256_broadcastsi128_si256(_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  return _mm256_shuffle_epi8(x, mask);
}

__m128i fold_lanes(__m256i x) { return _mm_xor_si128(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1)); }

void absorb256(const GhashPowers& powers, std::uint8_t state[16], const std::uint8_t* data, std::size_t bytes) {
  constexpr std::size_t kRun = 16 * kGhashAggregate;
  __m128i sum = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
  if (bytes >= kRun) {
    // Block j of a run meets power 16 - j, in slot j: pairs of slots are pairs of blocks.
    const auto* pairs = reinterpret_cast<const __m256i*>(powers.words);
    const auto* halves_sums = reinterpret_cast<const __m256i*>(powers.halves_sum);
    const __m128i top_power = _mm_load_si128(reinterpret_cast<const __m128i*>(powers.words));
    for (; bytes >= kRun; bytes -= kRun, data += kRun) {
      __m256i low = _mm256_setzero_si256();
      __m256i high = _mm256_setzero_si256();
      __m256i middle = _mm256_setzero_si256();
      for (std::size_t g = 0; g < kGhashAggregate / 2; ++g) {
        const __m256i x = reverse_lane_bytes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + 32 * g)));
        const __m256i power = _mm256_load_si256(pairs + g);
        low = _mm256_xor_si256(low, _mm256_clmulepi64_epi128(x, power, 0x00));
        high = _mm256_xor_si256(high, _mm256_clmulepi64_epi128(x, power, 0x11));
        const __m256i x_halves = _mm256_xor_si256(x, _mm256_shuffle_epi32(x, 0x4e));
        middle = _mm256_xor_si256(middle, _mm256_clmulepi64_epi128(x_halves, _mm256_load_si256(halves_sums + g), 0x00));
      }
      __m128i run_low = fold_lanes(low);
      __m128i run_high = fold_lanes(high);
      __m128i run_middle = _mm_xor_si128(_mm_xor_si128(fold_lanes(middle), run_low), run_high);
      // The sum so far times H^16, with four products (it is one block, not a run).
      run_low = _mm_xor_si128(run_low, _mm_clmulepi64_si128(sum, top_power, 0x00));
      run_high = _mm_xor_si128(run_high, _mm_clmulepi64_si128(sum, top_power, 0x11));
      run_middle = _mm_xor_si128(run_middle, _mm_xor_si128(_mm_clmulepi64_si128(sum, top_power, 0x01),
                                                           _mm_clmulepi64_si128(sum, top_power, 0x10)));
      sum = reduce_parts(run_low, run_middle, run_high);
    }
  }
  // The last k < 16 blocks, the last one zero-padded, with one reduction: block i meets
  // H^(k - i), in slot 16 - k + i. A block at a time, from a zero-padded copy of the last one.
  if (bytes != 0) {
    const std::size_t blocks = (bytes + 15) / 16;
    const std::uint64_t* tail_powers = powers.words + 2 * (kGhashAggregate - blocks);
    __m128i low = _mm_setzero_si128();
    __m128i high = _mm_setzero_si128();
    __m128i middle = _mm_setzero_si128();
    alignas(16) std::uint8_t last[16] = {};
    for (std::size_t i = 0; i < blocks; ++i) {
      const std::size_t left = bytes - 16 * i;
      const std::uint8_t* block = data + 16 * i;
      if (left < 16) {
        std::memcpy(last, block, left);
        block = last;
      }
      __m128i x = reverse_bytes(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block)));
      if (i == 0) x = _mm_xor_si128(x, sum);
      const __m128i power = _mm_load_si128(reinterpret_cast<const __m128i*>(tail_powers + 2 * i));
      low = _mm_xor_si128(low, _mm_clmulepi64_si128(x, power, 0x00));
      high = _mm_xor_si128(high, _mm_clmulepi64_si128(x, power, 0x11));
      middle = _mm_xor_si128(middle, _mm_xor_si128(_mm_clmulepi64_si128(x, power, 0x01),
                                                   _mm_clmulepi64_si128(x, power, 0x10)));
    }
    std::memset(last, 0, sizeof last);
    __asm__ __volatile__("" : : "r"(last) : "memory");
    sum = reduce_parts(low, middle, high);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), sum);
}

}  // namespace

const GhashKernels kGhashVpclmul256 = {&polyval_powers, &absorb256, &polyval_value};

}  // namespace mpc::transport::detail

#else

// Not reached: ghash_vpclmul_kernels(256) is null where this file is built without the
// instructions.
namespace mpc::transport::detail {
const GhashKernels kGhashVpclmul256 = {nullptr, nullptr, nullptr};
}  // namespace mpc::transport::detail

#endif
