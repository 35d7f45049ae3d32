// How keys are named everywhere: name + version (kvno) + algorithm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "keys/key_algorithms.h"

namespace mpc::wire {

// What a stored key is. The values are the ids of keys/key_algorithms.h, whose rows hold
// every fact about each algorithm (lengths, enctype, share-material layout); the functions
// below read them.
enum class KeyAlgorithm : std::uint8_t {
  Aes128 = 1,
  Aes256 = 2,
  Aes256Gcm = 3,            // serves only the GCM requests
  Aes128CtsHmacSha1 = 4,    // RFC 3962, enctype 17: only the Krb requests
  Aes256CtsHmacSha1 = 5,    // RFC 3962, enctype 18
  Aes128CtsHmacSha256 = 6,  // RFC 8009, enctype 19
  Aes256CtsHmacSha384 = 7,  // RFC 8009, enctype 20
};
static_assert(MPC_KEY_ALGORITHM_COUNT == 7, "an algorithm added to the table needs its enumerator");

// The table's row of an algorithm the enum names (usable in constant expressions).
constexpr const mpc_key_algorithm_info& algorithm_row(KeyAlgorithm algorithm) {
  const mpc_key_algorithm_info* row = mpc_key_algorithm_by_id(static_cast<int>(algorithm));
  if (row == nullptr) throw "unknown key algorithm";
  return *row;
}
static_assert(algorithm_row(KeyAlgorithm::Aes256CtsHmacSha384).enctype == 20);

// Key usages whose derived keys a Kerberos key's material holds (the table's list).
inline constexpr const std::uint32_t (&kKrbUsages)[MPC_KEY_USAGE_COUNT] = mpc_key_usages;
inline constexpr std::size_t kKrbUsageCount = MPC_KEY_USAGE_COUNT;
inline constexpr std::size_t kKrbConfounderBytes = MPC_KEY_CONFOUNDER_BYTES;
inline constexpr std::size_t kKrbMaxMacBytes = MPC_KEY_MAX_MAC_BYTES;
// The longest data one Krb request may carry (plaintext + confounder, ciphertext + MAC, or
// checksummed message); longer requests are malformed.
inline constexpr std::size_t kKrbMaxDataBytes = 4096;

bool is_krb_algorithm(KeyAlgorithm algorithm) noexcept;        // any of the four Kerberos algorithms
bool is_krb_sha2_algorithm(KeyAlgorithm algorithm) noexcept;   // RFC 8009: Aes128CtsHmacSha256, Aes256CtsHmacSha384
// Per Kerberos algorithm (Error(Wire) for another): HMAC state bytes (40, 64 or 128), MAC
// bytes of an encryption or checksum (12, 16 or 24), PRF output bytes (16, 32 or 48).
std::size_t krb_hmac_state_bytes(KeyAlgorithm algorithm);
std::size_t krb_mac_bytes(KeyAlgorithm algorithm);
std::size_t krb_prf_bytes(KeyAlgorithm algorithm);
// Index of `usage` in kKrbUsages, or nullopt when the material holds no keys for it.
std::optional<std::size_t> krb_usage_index(std::uint32_t usage) noexcept;
// Bytes of one usage block: round keys + 2 * krb_hmac_state_bytes().
std::size_t krb_usage_block_bytes(KeyAlgorithm algorithm);
// Byte offsets into the material of a Kerberos key.
std::size_t krb_ke_offset(KeyAlgorithm algorithm, std::size_t usage_index);  // then Ki right after the round keys
std::size_t krb_ki_offset(KeyAlgorithm algorithm, std::size_t usage_index);
std::size_t krb_kc_offset(KeyAlgorithm algorithm, std::size_t usage_index);
// The PRF key's round keys (RFC 3962) or the protocol key's HMAC state (RFC 8009).
std::size_t krb_prf_offset(KeyAlgorithm algorithm);

// Hash key powers stored with an Aes256Gcm key: the most GHASH input blocks one request may
// need (the C interface's MPC_GCM_MAX_HASH_BLOCKS).
inline constexpr std::size_t kGcmHashPowers = MPC_KEY_GCM_HASH_POWERS;
inline constexpr std::size_t kGcmNonceBytes = 12;
inline constexpr std::size_t kGcmTagBytes = 16;
// Bytes of the expanded AES-256 round keys at the start of Aes256Gcm material.
inline constexpr std::size_t kGcmRoundKeyBytes = 15 * 16;

inline constexpr std::size_t kMaxKeyNameBytes = 255;

struct KeyId {
  std::string name;  // 1..255 bytes of printable ASCII (0x21..0x7e), e.g. "krbtgt/EXAMPLE.COM"
  std::uint32_t version = 0;
  KeyAlgorithm algorithm = KeyAlgorithm::Aes128;
  bool operator==(const KeyId&) const = default;
};

// "aes128", "aes256", "aes256-gcm", "aes128-cts-hmac-sha1-96", "aes256-cts-hmac-sha1-96",
// "aes128-cts-hmac-sha256-128", "aes256-cts-hmac-sha384-192"
const char* algorithm_name(KeyAlgorithm algorithm);
std::optional<KeyAlgorithm> parse_algorithm(std::string_view name);  // inverse of algorithm_name
std::size_t material_bytes(KeyAlgorithm algorithm);  // 176, 240, 16624, 1456, 1840, 1584 or 2608
std::size_t aes_rounds(KeyAlgorithm algorithm);      // 10, 14, 14, 10, 14, 10 or 14
// Bytes of the AES key the material is made from: 16, 32, 32, 16, 32, 16 or 32.
std::size_t key_bytes(KeyAlgorithm algorithm);

// Throws FormatError(Wire) if the name is empty, too long or has a byte outside 0x21..0x7e.
void validate_key_name(std::string_view name);

std::string describe(const KeyId& key);  // "krbtgt/EXAMPLE.COM kvno 2 aes256"

}  // namespace mpc::wire
