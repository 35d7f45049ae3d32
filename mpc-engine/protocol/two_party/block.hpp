// A 128-bit value of the two-party protocols: a garbled-circuit label, an OT message or key,
// a hash input. Kept 16-byte aligned so vector code loads it directly.
#pragma once

#include <cstdint>
#include <cstring>

namespace mpc::two_party {

struct alignas(16) Block {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;

  friend Block operator^(Block a, Block b) { return {a.lo ^ b.lo, a.hi ^ b.hi}; }
  Block& operator^=(Block b) {
    lo ^= b.lo;
    hi ^= b.hi;
    return *this;
  }
  friend Block operator&(Block a, Block b) { return {a.lo & b.lo, a.hi & b.hi}; }
  friend Block operator~(Block a) { return {~a.lo, ~a.hi}; }
  bool operator==(const Block&) const = default;
  // The point-and-permute bit of a garbled label.
  bool lsb() const { return (lo & 1) != 0; }
};

// All ones when bit is 1, zero when 0: selects without a branch on secret bits.
inline Block select_mask(bool bit) {
  const std::uint64_t mask = 0 - static_cast<std::uint64_t>(bit);
  return {mask, mask};
}

}  // namespace mpc::two_party
