// Circuits for the Kerberos AES enctypes of RFC 8009 (aes128-cts-hmac-sha256-128 and
// aes256-cts-hmac-sha384-192) with shared derived keys: CBC with ciphertext stealing under Ke
// (the same CBC-CS3 as RFC 3962, zero IV), and HMAC-SHA256 truncated to 16 bytes (aes128) or
// HMAC-SHA384 truncated to 24 bytes (aes256) under Ki or Kc, from precomputed HMAC states.
// Unlike RFC 3962, the encryption MAC covers the cipher state and the ciphertext, not the
// plaintext (RFC 8009 section 5): H = HMAC(Ki, IV || C) with IV = 16 zero bytes.
//
// Bit order everywhere: byte b, bit k (least significant first) is wire b * 8 + k of its
// group. An HMAC state group is the chaining value after the key ^ ipad block, then after the
// key ^ opad block, each H0..H7 as big-endian words: 2 * 32 bytes (512 bits) for SHA-256,
// 2 * 64 bytes (1024 bits) for SHA-384 (the full SHA-512-sized chaining value, not the 48-byte
// digest). Round keys are the expanded AES encryption round keys (circuits/aes.hpp);
// decryption uses the same round keys. Ki and Kc are 16 (aes128) or 24 (aes256) bytes, Ke
// 16 or 32; only their HMAC states and round keys enter the circuits.
//
// Encryption chains the two jobs: the MAC reads the ciphertext, so the HMAC cannot run beside
// the CBC chain as in RFC 3962. It does not wait for all of it either: each message word of a
// hash block is needed only in its own round, so the HMAC takes ciphertext blocks as CBC
// produces them (one per 40 AND layers for AES-128, 56 for AES-256), and the encryption depth
// is the MAC's depth plus the cipher's lead over the hash rounds, at most the sum of the two.
// Measured (depth-4 S-box; the MAC alone is the checksum circuit over IV || C):
//   aes128-sha256, 40 bytes: 1,412 layers (MAC alone 1,349); 300 bytes: 3,176 (3,141);
//   aes256-sha384, 40 bytes: 1,420 layers (MAC alone 1,285); 300 bytes: 2,844 (2,565).
// The ciphertext is opened anyway, so a server may instead encrypt in one circuit, open the
// ciphertext, and compute the MAC in a second one: the checksum circuit below over the
// public message IV || C (16 zero bytes, then the ciphertext) with the Ki state gives exactly
// the MAC of the encryption circuit (kerberos_sha2_circuit_test checks this). Two circuits
// cost the cipher's whole depth plus the MAC's, but release the ciphertext early and keep the
// secret message out of the MAC circuit. In decryption the MAC is over public data, so it runs
// beside the CBC-CTS decryption and the circuit's depth is the MAC's plus the comparison and
// the release AND.
#pragma once

#include <cstddef>
#include <cstdint>

#include "circuits/aes_options.hpp"
#include "circuits/circuit.hpp"

namespace mpc::circuits {

enum class KrbSha2Hash {
  Sha256,  // HMAC-SHA256-128: aes128-cts-hmac-sha256-128
  Sha384,  // HMAC-SHA384-192: aes256-cts-hmac-sha384-192
};

inline constexpr std::size_t kKrbSha2ConfounderBytes = 16;
inline constexpr std::uint32_t kKrbSha256StateBits = 512;
inline constexpr std::uint32_t kKrbSha384StateBits = 1024;

// The hash RFC 8009 pairs with an AES key size.
KrbSha2Hash krb_sha2_hash_for(AesKeySize size) noexcept;
// 16 for SHA256, 24 for SHA384.
std::size_t krb_sha2_mac_bytes(KrbSha2Hash hash) noexcept;
// 512 for SHA256, 1024 for SHA384.
std::uint32_t krb_sha2_hmac_state_bits(KrbSha2Hash hash) noexcept;

// Encryption of `message_bytes` (>= 16: confounder || plaintext).
// Inputs: group 0 the round keys of Ke, group 1 the HMAC state of Ki (512 or 1024 bits),
// group 2 the message.
// Outputs: group 0 the CBC-CTS ciphertext C (message_bytes bytes: zero IV, the last two blocks
// swapped and the last one truncated; a single block is plain CBC), group 1 the first 16
// (aes128) or 24 (aes256) bytes of HMAC(Ki, 16 zero bytes || C).
// Throws FormatError(Component::Circuit) for message_bytes < 16.
Circuit build_krb_sha2_encrypt_circuit(AesKeySize size, std::size_t message_bytes,
                                       CircuitCost cost = CircuitCost::FewestLayers);

// Decryption and check of `ciphertext_bytes` (>= 16) of CBC-CTS ciphertext with its MAC.
// Inputs: group 0 the round keys of Ke, group 1 the HMAC state of Ki, group 2 the ciphertext
// (public), group 3 the received MAC (16 or 24 bytes, public).
// Outputs: group 0 the plaintext (confounder included, ciphertext_bytes bytes) ANDed bit by
// bit with the verdict, group 1 one bit: 1 iff the truncated HMAC(Ki, 16 zero bytes ||
// ciphertext) equals the received MAC.
// Throws FormatError(Component::Circuit) for ciphertext_bytes < 16.
Circuit build_krb_sha2_decrypt_circuit(AesKeySize size, std::size_t ciphertext_bytes,
                                       CircuitCost cost = CircuitCost::FewestLayers);

// Keyed checksum (RFC 8009 section 5, get_mic). Inputs: group 0 the HMAC state of Kc (512 or
// 1024 bits), group 1 the message (any length, including 0). Output: the first 16 (SHA256) or
// 24 (SHA384) bytes of HMAC(Kc, message). Circuits have no empty groups, so for
// message_bytes == 0 the circuit has group 0 only.
Circuit build_krb_sha2_checksum_circuit(KrbSha2Hash hash, std::size_t message_bytes,
                                        CircuitCost cost = CircuitCost::FewestLayers);

// 32 for SHA256, 48 for SHA384: the PRF output (the whole HMAC digest).
std::size_t krb_sha2_prf_bytes(KrbSha2Hash hash) noexcept;

// PRF (RFC 8009 section 5): KDF-HMAC-SHA2(key, "prf", input) = HMAC(key, 00000001 | "prf" |
// 00 | input | k) with k = 256 (SHA256) or 384 (SHA384) as 4 big-endian bytes; the label
// and the length are constants of the circuit. Inputs: group 0 the HMAC state of the protocol
// key (512 or 1024 bits), group 1 the input (any length; absent for input_bytes == 0).
// Output: the whole digest, 32 or 48 bytes.
Circuit build_krb_sha2_prf_circuit(KrbSha2Hash hash, std::size_t input_bytes,
                                   CircuitCost cost = CircuitCost::FewestLayers);

}  // namespace mpc::circuits
