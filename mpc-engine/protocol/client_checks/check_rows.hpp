// The binary matrix both of the client's checks use (output_pads.hpp, share_checks.hpp): R, of
// kCheckBits rows over n bits, drawn from a seed, and c = R v ^ t for a vector v of n bits and
// kCheckBits more t. For a change (d, e) of (v, t) fixed before R is known, R d = e holds with
// probability 2^-64 (d != 0), never for d = 0, e != 0; and with t uniform, c tells nothing of v.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mpc::client_checks {

inline constexpr std::size_t kCheckBits = 64;
inline constexpr std::size_t kSeedBytes = 32;
using CheckSeed = std::array<std::uint8_t, kSeedBytes>;
using CheckBits = std::array<std::uint8_t, kCheckBits / 8>;

class CheckRows {
 public:
  CheckRows(const CheckSeed& seed, std::size_t columns);
  std::size_t columns() const { return columns_; }
  // Whether column i enters check bit k.
  bool bit(std::size_t k, std::size_t i) const { return ((rows_[k * stride_ + i / 8] >> (i % 8)) & 1) != 0; }
  // R v ^ t, packed, for `bits` = v (columns() bits) then t (kCheckBits bits), 0/1 bytes.
  CheckBits check(std::span<const std::uint8_t> bits) const;

 private:
  std::size_t columns_, stride_;
  std::vector<std::uint8_t> rows_;
};

}  // namespace mpc::client_checks
