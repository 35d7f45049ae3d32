// Byte helpers of the two-server tests: reproducible random strings and XOR of shares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace mpc::two_party_engine::test {

using Bytes = std::vector<std::uint8_t>;

inline Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

inline Bytes xor_of(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  Bytes out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = static_cast<std::uint8_t>(a[i] ^ b[i]);
  return out;
}

}  // namespace mpc::two_party_engine::test
