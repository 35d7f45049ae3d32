// Cleartext SHA-1 compression (FIPS 180-4, 6.1.2) with the chaining value exposed: the
// key-import dealer computes HMAC states (the chaining value after key ^ ipad and after
// key ^ opad) with it, and the circuit tests use it as their reference. No branches or
// table lookups on data; the caller wipes what it passes in and gets back.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace mpc::circuits {

inline constexpr std::size_t kSha1BlockBytes = 64;
inline constexpr std::size_t kSha1StateBytes = 20;

using Sha1State = std::array<std::uint32_t, 5>;

// H0..H4 of FIPS 180-4 5.3.1.
Sha1State sha1_initial_state();

// Compresses one 64-byte block into `state`.
void sha1_compress(Sha1State& state, std::span<const std::uint8_t, kSha1BlockBytes> block);

// The state as 20 big-endian bytes (H0 first): SHA-1's digest layout.
std::array<std::uint8_t, kSha1StateBytes> sha1_state_bytes(const Sha1State& state);

}  // namespace mpc::circuits
