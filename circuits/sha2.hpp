// SHA-256 and SHA-512 compression (FIPS 180-4, 6.2.2 and 6.4.2) as circuits with a secret
// chaining value and a secret or public message block, built for few AND layers (see
// sha2.cpp). SHA-384 uses the SHA-512 compression (its own initial value, a truncated digest).
// One compression from fresh inputs: SHA-256 50,121 AND gates at AND-depth 451 (7 layers per
// round), SHA-512 144,077 AND gates at AND-depth 643 (8 layers per round).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/adder.hpp"
#include "circuits/circuit.hpp"

namespace mpc::circuits {

inline constexpr std::uint32_t kSha256StateBits = 256;
inline constexpr std::uint32_t kSha256BlockBits = 512;
inline constexpr std::uint32_t kSha512StateBits = 512;
inline constexpr std::uint32_t kSha512BlockBits = 1024;

// Inputs: group 0 the chaining value H0..H7 as big-endian words (32 bytes for SHA-256, 64 for
// SHA-512), group 1 the block (64 or 128 bytes). Output: the new chaining value, same layout.
// (Byte b bit k is wire b * 8 + k of its group.)
Circuit build_sha256_compress_circuit();
Circuit build_sha512_compress_circuit();

namespace detail {

using Sha256Words = std::array<Word32, 8>;
using Sha256Block = std::array<Word32, 16>;
using Sha512Words = std::array<Word64, 8>;
using Sha512Block = std::array<Word64, 16>;

// Wires in the big-endian layouts above, and back. Throw FormatError(Component::Circuit) for a
// wrong number of wires.
Sha256Words sha256_words_from_bits(std::span<const std::uint32_t> bits);
Sha512Words sha512_words_from_bits(std::span<const std::uint32_t> bits);
std::vector<std::uint32_t> bits_from_sha2_words(const Sha256Words& words);
std::vector<std::uint32_t> bits_from_sha2_words(const Sha512Words& words);
Sha256Block sha256_block_from_bits(std::span<const std::uint32_t> bits);
Sha512Block sha512_block_from_bits(std::span<const std::uint32_t> bits);

// One compression: returns the new chaining value (the feed-forward additions included).
Sha256Words sha256_compress(WordGates& gates, const Sha256Words& state, const Sha256Block& block);
Sha512Words sha512_compress(WordGates& gates, const Sha512Words& state, const Sha512Block& block);

}  // namespace detail
}  // namespace mpc::circuits
