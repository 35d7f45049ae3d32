// AES in CBC mode with ciphertext stealing and a zero IV, as RFC 3962 section 5 specifies it
// for the Kerberos AES enctypes (and MIT libk5crypto implements it): the message is
// CBC-encrypted with its last partial block zero-padded, then the last two ciphertext blocks
// are swapped and the final one is truncated to the length of the partial block (a message
// that is a multiple of 16 bytes still has its last two blocks swapped). A single block is
// plain AES.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "circuits/adder.hpp"
#include "circuits/aes_options.hpp"

namespace mpc::circuits::detail {

// One AES block (128 wires) in `direction` under the expanded round keys; the output wires'
// AND-depth is noted in `gates`: the deepest input wire (block or round key) plus the cipher's.
std::vector<std::uint32_t> aes_block(WordGates& gates, AesKeySize size, SboxVariant sbox, AesDirection direction,
                                     std::span<const std::uint32_t> round_keys, std::span<const std::uint32_t> block);

// Encrypts message_bits (8 wires per byte, at least 16 bytes) under the expanded round keys;
// returns the ciphertext wires (same length). Every AES output wire's AND-depth is noted in
// `gates`. Throws FormatError(Component::Circuit) for fewer than 16 bytes.
std::vector<std::uint32_t> cbc_cts_encrypt(WordGates& gates, AesKeySize size, SboxVariant sbox,
                                           std::span<const std::uint32_t> round_keys,
                                           std::span<const std::uint32_t> message_bits);

// The inverse. Blocks other than the last two decrypt in parallel; the last two take two
// sequential AES decryptions (the stolen bytes come from decrypting the last full block).
std::vector<std::uint32_t> cbc_cts_decrypt(WordGates& gates, AesKeySize size, SboxVariant sbox,
                                           std::span<const std::uint32_t> round_keys,
                                           std::span<const std::uint32_t> ciphertext_bits);

}  // namespace mpc::circuits::detail
