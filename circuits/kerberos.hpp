// Circuits for the Kerberos AES enctypes of RFC 3962 (aes128/aes256-cts-hmac-sha1-96) with
// shared derived keys: CBC with ciphertext stealing under Ke, HMAC-SHA1-96 under Ki or Kc
// from precomputed HMAC states, and the check of a received HMAC inside the computation.
//
// Bit order everywhere: byte b, bit k (least significant first) is wire b * 8 + k of its
// group. An HMAC state group is 320 bits: the SHA-1 chaining value after the key ^ ipad
// block, then after the key ^ opad block, each H0..H4 as 20 big-endian bytes
// (wire/key_id.hpp). Round keys are the expanded AES encryption round keys (circuits/aes.hpp);
// decryption uses the same round keys.
//
// These jobs are sequential (CBC chaining, SHA-1 chaining), so by default they are built for
// few AND layers: the AND-depth-4 S-box, and SHA-1 rounds whose additions use carry-save
// adders and one logarithmic-depth adder per round. CircuitCost::FewestAnds builds them for
// garbled circuits instead (aes_options.hpp); inputs and outputs are the same.
#pragma once

#include <cstddef>
#include <cstdint>

#include "circuits/aes_options.hpp"
#include "circuits/circuit.hpp"

namespace mpc::circuits {

inline constexpr std::size_t kKrbBlockBytes = 16;
inline constexpr std::size_t kKrbMacBytes = 12;
inline constexpr std::size_t kKrbHmacStateBits = 320;

// Encryption of `message_bytes` (>= 16: confounder || plaintext).
// Inputs: group 0 the round keys of Ke, group 1 the HMAC state of Ki, group 2 the message.
// Outputs: group 0 the CBC-CTS ciphertext (message_bytes bytes, RFC 3962: zero IV, the last
// two blocks swapped and the last one truncated; a single block is plain CBC), group 1 the
// first 96 bits of HMAC-SHA1(Ki, message).
// Throws FormatError(Component::Circuit) for message_bytes < 16.
Circuit build_krb_encrypt_circuit(AesKeySize size, std::size_t message_bytes,
                                  CircuitCost cost = CircuitCost::FewestLayers);

// Decryption and check of `ciphertext_bytes` (>= 16) of CBC-CTS ciphertext with its 96-bit MAC.
// Inputs: group 0 the round keys of Ke, group 1 the HMAC state of Ki, group 2 the ciphertext,
// group 3 the received MAC (12 bytes).
// Outputs: group 0 the plaintext (confounder included, ciphertext_bytes bytes) ANDed bit by
// bit with the verdict, group 1 one bit: 1 iff HMAC-SHA1-96(Ki, plaintext) equals the MAC.
// Throws FormatError(Component::Circuit) for ciphertext_bytes < 16.
Circuit build_krb_decrypt_circuit(AesKeySize size, std::size_t ciphertext_bytes,
                                  CircuitCost cost = CircuitCost::FewestLayers);

// Keyed checksum. Inputs: group 0 the HMAC state of Kc, group 1 the message (any length,
// including 0). Output: the first 96 bits of HMAC-SHA1(Kc, message). Circuits have no empty
// groups, so for message_bytes == 0 the circuit has group 0 only.
Circuit build_krb_checksum_circuit(std::size_t message_bytes, CircuitCost cost = CircuitCost::FewestLayers);

}  // namespace mpc::circuits
