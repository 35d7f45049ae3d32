// AES on several blocks under round keys given as two XOR shares, one per party of a
// two-party computation: C(s_1, s_2, b_1 .. b_n) = AES_{s_1 ^ s_2}(b_1) .. AES_{s_1 ^ s_2}(b_n).
// The shares' XOR is free in a garbled circuit, so the AND gates are those of n ciphers; the
// round keys enter once for all n blocks.
//
// Inputs: group 0 the first share of the round keys, group 1 the second (each in the layout of
// aes.hpp), group 2 the n blocks (block e, byte b, bit k at e * 128 + b * 8 + k). Output: one
// group of n * 128 bits, the same layout.
#pragma once

#include <cstdint>

#include "circuits/aes_options.hpp"
#include "circuits/circuit.hpp"

namespace mpc::circuits {

// Throws FormatError(Circuit) for blocks == 0.
Circuit build_shared_key_aes_circuit(AesKeySize size, AesDirection direction, SboxVariant sbox, std::uint32_t blocks);

}  // namespace mpc::circuits
