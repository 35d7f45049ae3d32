// SHA-1 compression (FIPS 180-4, 6.1.2) as a circuit with a secret chaining value and a
// secret or public message block, built for few AND layers (see sha1.cpp): 6 AND layers per
// round, 482 for one compression from fresh inputs, 21,397 AND gates.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/adder.hpp"
#include "circuits/circuit.hpp"

namespace mpc::circuits {

inline constexpr std::uint32_t kSha1StateBits = 160;
inline constexpr std::uint32_t kSha1BlockBits = 512;

// Inputs: group 0 the chaining value H0..H4 as 20 big-endian bytes, group 1 the 64-byte block.
// Output: the new chaining value, same layout. (Byte b bit k is wire b * 8 + k of its group.)
Circuit build_sha1_compress_circuit();

namespace detail {

using Sha1Words = std::array<Word32, 5>;
using Sha1Block = std::array<Word32, 16>;

// 160 wires in the 20-byte big-endian layout above, and back.
Sha1Words sha1_words_from_bits(std::span<const std::uint32_t> bits);
std::vector<std::uint32_t> bits_from_sha1_words(const Sha1Words& words);
// 512 wires (64 bytes) as the 16 big-endian message words.
Sha1Block sha1_block_from_bits(std::span<const std::uint32_t> bits);

// One compression: returns the new chaining value (the feed-forward additions included).
Sha1Words sha1_compress(WordGates& gates, const Sha1Words& state, const Sha1Block& block);

}  // namespace detail
}  // namespace mpc::circuits
