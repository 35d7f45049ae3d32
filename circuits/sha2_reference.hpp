// Cleartext SHA-256 and SHA-512 compression (FIPS 180-4, 6.2.2 and 6.4.2) with the chaining
// value exposed: the key-import dealer computes HMAC-SHA256/384 states (the chaining value
// after key ^ ipad and after key ^ opad) with it, and the circuit tests use it as their
// reference. SHA-384 is SHA-512 compression from its own initial value. No branches or table
// lookups on data; the caller wipes what it passes in and gets back.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace mpc::circuits {

inline constexpr std::size_t kSha256BlockBytes = 64;
inline constexpr std::size_t kSha256StateBytes = 32;
inline constexpr std::size_t kSha512BlockBytes = 128;
inline constexpr std::size_t kSha512StateBytes = 64;

using Sha256State = std::array<std::uint32_t, 8>;
using Sha512State = std::array<std::uint64_t, 8>;

// H(0) of FIPS 180-4 5.3.3, 5.3.4 (SHA-384) and 5.3.5 (SHA-512).
Sha256State sha256_initial_state();
Sha512State sha384_initial_state();
Sha512State sha512_initial_state();

// Compresses one block into `state`.
void sha256_compress(Sha256State& state, std::span<const std::uint8_t, kSha256BlockBytes> block);
void sha512_compress(Sha512State& state, std::span<const std::uint8_t, kSha512BlockBytes> block);

// The state as big-endian bytes, H0 first (the digest layout before truncation).
std::array<std::uint8_t, kSha256StateBytes> sha256_state_bytes(const Sha256State& state);
std::array<std::uint8_t, kSha512StateBytes> sha512_state_bytes(const Sha512State& state);

}  // namespace mpc::circuits
