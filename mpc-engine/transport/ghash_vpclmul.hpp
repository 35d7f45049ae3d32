// GHASH (NIST SP 800-38D, section 6.4) of long streams with VPCLMULQDQ, four blocks per
// instruction with AVX-512 (ghash_vpclmul.cpp) or two with AVX2 (ghash_vpclmul_ymm.cpp), and
// sixteen per reduction. The functions below run the widest this CPU has.
//
// GHASH is computed as POLYVAL, its byte-reversed twin (Gueron, Langley, Lindell, RFC 8452,
// appendix A): GHASH_H(X_1..X_n) = rev(POLYVAL_{mulX(rev H)}(rev X_1, ..., rev X_n)). POLYVAL's
// products need no bit reflection: a 256-bit carry-less product reduced modulo
// x^128 + x^127 + x^126 + x^121 + 1 by two multiplications with its low terms (Gueron,
// "AES-GCM-SIV implementations", the reduction of its gfmul). Sums of products are reduced once:
// the reduction is linear. A run's products take three carry-less multiplications each, not
// four (Karatsuba: the middle term is (a0 + a1)(b0 + b1) + a0 b0 + a1 b1, the last two summed
// once per run), and the running sum meets its power only after the run's lanes are summed, so
// that one run's reduction does not hold up the next run's products.
//
// This header must stay free of functions with external linkage that could be emitted in the
// VPCLMULQDQ translation unit (only PODs and declarations).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpc::transport::detail {

inline constexpr std::size_t kGhashAggregate = 16;  // blocks per reduction

// rev(POLYVAL key)^k for k = 1..16 in POLYVAL's arithmetic, as four groups of four 128-bit lanes:
// group g, lane l holds power 16 - 4g - l, so that block 4g + l of a run of sixteen meets it.
// `halves_sum`: the same lanes with the sum of each power's two 64-bit halves in both halves
// (Karatsuba's middle factor).
struct GhashPowers {
  alignas(64) std::uint64_t words[2 * kGhashAggregate];
  alignas(64) std::uint64_t halves_sum[2 * kGhashAggregate];
};

// True when this CPU (and OS) has VPCLMULQDQ with AVX-512 F, BW and VL, or with AVX2.
bool ghash_vpclmul_supported();

// One register width's kernels, the functions below.
struct GhashKernels {
  void (*powers)(const std::uint8_t h[16], GhashPowers& powers);
  void (*absorb)(const GhashPowers& powers, std::uint8_t state[16], const std::uint8_t* data, std::size_t bytes);
  void (*value)(const std::uint8_t state[16], std::uint8_t out[16]);
};
extern const GhashKernels kGhashVpclmul512;  // AVX-512 F, BW, VL
extern const GhashKernels kGhashVpclmul256;  // AVX2

// The kernels of `width` (512 or 256) where this CPU runs them, else null; width 0: the widest.
const GhashKernels* ghash_vpclmul_kernels(int width = 0);

// The powers of the POLYVAL key for GCM hash key `h` (16 bytes, as AES_k(0^128) gives it).
// Only call when ghash_vpclmul_supported().
void ghash_vpclmul_powers(const std::uint8_t h[16], GhashPowers& powers);

// state (POLYVAL's, 16 bytes) absorbs the GCM blocks of `bytes` bytes of `data` (in GCM's byte
// order), the last one zero-padded to 16 bytes as GCM pads its inputs. A stream split across
// calls must therefore be split at block boundaries. Only call when ghash_vpclmul_supported().
void ghash_vpclmul_absorb(const GhashPowers& powers, std::uint8_t state[16], const std::uint8_t* data,
                          std::size_t bytes);

// GHASH's value (GCM byte order) from POLYVAL's state.
void ghash_vpclmul_value(const std::uint8_t state[16], std::uint8_t out[16]);

}  // namespace mpc::transport::detail
