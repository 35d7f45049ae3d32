// What the dealer shares for a key: the plaintext share material of each KeyAlgorithm
// (layouts in wire/key_id.hpp), built from the AES key (or Kerberos protocol key) alone.
#pragma once

#include <cstdint>
#include <span>

#include "common/secret.hpp"
#include "wire/key_id.hpp"

namespace mpc::client {

// material_bytes(algorithm) bytes: the expanded AES round keys, and for Aes256Gcm then the
// GHASH key powers H^1..H^kGcmHashPowers with H = AES_K(0^128) (NIST SP 800-38D, 6.4). For
// the Kerberos algorithms, the derived keys of RFC 3961/3962 (krb_derivation.hpp): per usage
// of kKrbUsages the round keys of Ke and the HMAC-SHA1 states of Ki and Kc, then the round
// keys of the PRF key; for the RFC 8009 algorithms the KDF-HMAC-SHA2 keys (Ke round keys, Ki
// and Kc HMAC-SHA256/384 states) and the HMAC state of the protocol key. The protocol key
// itself is not part of it.
// Throws Error(Component::Client) when the key is not key_bytes(algorithm) long. Every
// intermediate is wiped; the caller owns the result.
SecretBytes build_key_material(wire::KeyAlgorithm algorithm, std::span<const std::uint8_t> aes_key);

}  // namespace mpc::client
