// AES block cipher and key expansion circuits (FIPS-197).
//
// Cipher inputs: group 0 = (rounds + 1) * 128 expanded round-key bits (round key r,
// byte b, bit k at wire r * 128 + b * 8 + k, least significant bit first); group 1 = the
// 128-bit block (byte b bit k at b * 8 + k). Output: one 128-bit group, same bit order.
// Decrypt is the straightforward inverse cipher (FIPS-197 5.3) with the same
// (encryption) round keys. Round keys are inputs, so the key schedule costs nothing
// per block.
#pragma once

#include <cstdint>

#include "circuits/aes_options.hpp"
#include "circuits/circuit.hpp"

namespace mpc::circuits {

constexpr std::uint32_t aes_rounds(AesKeySize size) { return size == AesKeySize::Aes128 ? 10 : 14; }
constexpr std::uint32_t aes_key_bits(AesKeySize size) { return size == AesKeySize::Aes128 ? 128 : 256; }
constexpr std::uint32_t aes_round_key_bits(AesKeySize size) { return (aes_rounds(size) + 1) * 128; }

Circuit build_aes_circuit(AesKeySize size, AesDirection direction, SboxVariant sbox);

// Encryption whose output is also compared with a secret block G, for checking a GCM tag
// inside the computation without opening the tag mask. Inputs: group 0 the round keys and
// group 1 the block, as above; group 2 the 128-bit G (same bit order). Outputs: group 0 the
// 128 ciphertext bits, group 1 one bit, 1 iff ciphertext == G. The comparison adds 127 AND
// gates at AND-depth 7 after the cipher.
Circuit build_aes_encrypt_equal_circuit(AesKeySize size, SboxVariant sbox);

// Input: the 128- or 256-bit key (byte b bit k at b * 8 + k). Output: the expanded
// round keys in the layout above (FIPS-197 5.2 order).
Circuit build_aes_key_expansion_circuit(AesKeySize size, SboxVariant sbox);

}  // namespace mpc::circuits
