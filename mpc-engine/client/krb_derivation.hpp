// Key derivation of the Kerberos AES enctypes, for the dealer: RFC 3961 section 5.1 (n-fold,
// DR, DK) with RFC 3962's parameters (AES encryption of one block with a zero IV, block size
// 16, random-to-key the identity), and the HMAC-SHA1 states (RFC 2104) the servers start from.
//
// Everything runs on the library's cleartext AES and SHA-1 (circuits/aes_reference.hpp,
// circuits/sha1_reference.hpp): no secret-dependent table lookups or branches. Only the
// constants passed to n_fold are public; every key-dependent intermediate is wiped.
//
// The RFC 8009 enctypes (aes128-cts-hmac-sha256-128, aes256-cts-hmac-sha384-192) derive with
// KDF-HMAC-SHA2 (RFC 8009 section 3, the SP 800-108 counter-mode KDF with one iteration):
// OpenSSL's HMAC (SHA-2 has no table lookups); their HMAC states come from the library's
// cleartext SHA-256/SHA-512 compression (circuits/sha2_reference.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "common/secret.hpp"

namespace mpc::client {

// n-fold(input, output_bytes * 8) of RFC 3961 5.1: the input repeated to the least common
// multiple of both lengths, each repetition rotated 13 bits further right, the output-sized
// chunks added with one's-complement addition. For public constants only (not constant-time).
// Throws Error(Client) for an empty input or output.
std::vector<std::uint8_t> n_fold(std::span<const std::uint8_t> input, std::size_t output_bytes);

// The well-known constants: usage (4 bytes big-endian) || 0xAA (Ke), 0x55 (Ki), 0x99 (Kc).
enum class KrbKeyRole : std::uint8_t { Encryption = 0xAA, Integrity = 0x55, Checksum = 0x99 };
std::vector<std::uint8_t> krb_usage_constant(std::uint32_t usage, KrbKeyRole role);
// "prf": the constant of RFC 3962's PRF key.
std::vector<std::uint8_t> krb_prf_constant();

// DK(protocol_key, constant) = random-to-key(DR(protocol_key, constant)) for an AES protocol
// key of 16 or 32 bytes; the result has the protocol key's length. Throws Error(Client) for
// another key length or an empty constant.
SecretBytes krb_derive_key(std::span<const std::uint8_t> protocol_key, std::span<const std::uint8_t> constant);

// The 40-byte HMAC-SHA1 state of `key` (at most 64 bytes): the SHA-1 chaining value after
// compressing (key || zeros) ^ 0x36.. (64 bytes), then after (key || zeros) ^ 0x5c.., each
// H0..H4 big-endian (wire/key_id.hpp). Throws Error(Client) for a key over 64 bytes.
SecretBytes hmac_sha1_state(std::span<const std::uint8_t> key);

// The hash of an RFC 8009 enctype: SHA-256 for aes128-cts-hmac-sha256-128, SHA-384 for
// aes256-cts-hmac-sha384-192.
enum class KrbSha2 : std::uint8_t { Sha256, Sha384 };

// KDF-HMAC-SHA2(key, label, k) of RFC 8009 section 3 without a context: the first
// output_bytes of HMAC-SHA256/384(key, 00000001 | label | 00 | output_bytes * 8 as 4 bytes
// big-endian). output_bytes is 1..32 (SHA-256) or 1..48 (SHA-384). Throws Error(Client) for
// an empty key or label or another output length.
SecretBytes krb_kdf_hmac_sha2(KrbSha2 hash, std::span<const std::uint8_t> key, std::span<const std::uint8_t> label,
                              std::size_t output_bytes);

// The HMAC state of `key` for SHA-256 (64 bytes: two chaining values of 8 big-endian 32-bit
// words) or SHA-384 (128 bytes: two SHA-512-sized chaining values of 8 big-endian 64-bit
// words), after the (key || zeros) ^ 0x36.. block and after the ^ 0x5c.. block of the hash's
// block size (64 or 128 bytes). Throws Error(Client) for a key longer than that block.
SecretBytes hmac_sha2_state(KrbSha2 hash, std::span<const std::uint8_t> key);

}  // namespace mpc::client
