// GF(2^128) = GF(2)[x] / (x^128 + x^7 + x^2 + x + 1) in polynomial basis: bit k of `lo` is the
// coefficient of x^k, bit k of `hi` that of x^(64+k). (Not GCM's bit-reflected order: the AND
// check of and_check.hpp only needs a field of 2^128 elements, and this order lets PCLMULQDQ
// multiply without reflection.)
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

namespace mpc::rss3 {

struct Gf128 {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  friend bool operator==(const Gf128&, const Gf128&) = default;
};

inline Gf128 operator^(Gf128 a, Gf128 b) { return {a.lo ^ b.lo, a.hi ^ b.hi}; }
inline Gf128& operator^=(Gf128& a, Gf128 b) {
  a.lo ^= b.lo;
  a.hi ^= b.hi;
  return a;
}

// 16 bytes, little-endian `lo` then `hi`.
inline Gf128 gf128_load(const std::uint8_t* bytes) {
  Gf128 v;
  std::memcpy(&v.lo, bytes, 8);
  std::memcpy(&v.hi, bytes + 8, 8);
  return v;
}
inline void gf128_store(Gf128 v, std::uint8_t* bytes) {
  std::memcpy(bytes, &v.lo, 8);
  std::memcpy(bytes + 8, &v.hi, 8);
}

// Constant time (no branch or index depends on the operands); the reference the PCLMULQDQ
// kernels are tested against.
Gf128 gf128_mul_portable(Gf128 a, Gf128 b);

}  // namespace mpc::rss3
