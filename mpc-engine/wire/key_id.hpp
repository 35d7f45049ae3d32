// How keys are named everywhere: name + version (kvno) + algorithm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mpc::wire {

// What a stored key is; the value fixes the layout of its share material.
enum class KeyAlgorithm : std::uint8_t {
  Aes128 = 1,  // material: the 11 expanded AES-128 round keys, 176 bytes
  Aes256 = 2,  // material: the 15 expanded AES-256 round keys, 240 bytes
  // AES-256-GCM (serves only the GCM requests). Material: the 15 expanded round keys of K
  // (240 bytes), then the GHASH key powers H^1..H^kGcmHashPowers with H = AES_K(0^128), 16 bytes
  // each in GCM's bit order; power k starts at byte 240 + 16 * (k - 1). 16624 bytes.
  Aes256Gcm = 3,
  // Kerberos keys (RFC 3961, RFC 3962): aes128-cts-hmac-sha1-96 (enctype 17) and
  // aes256-cts-hmac-sha1-96 (enctype 18). They serve only the Krb requests. The dealer derives
  // the material from the protocol key; the key itself is never stored:
  //   for each usage u of kKrbUsages, in order, a block of krb_usage_block_bytes():
  //     Ke_u round keys (11 or 15 expanded AES round keys of DK(key, u | 0xAA)),
  //     Ki_u HMAC state (40 bytes), Kc_u HMAC state (40 bytes);
  //   then the round keys of the PRF key DK(key, "prf").
  // An HMAC state is the SHA-1 chaining value after one block of key ^ ipad, then after one
  // block of key ^ opad, each H0..H4 as 20 big-endian bytes (so HMAC of any message needs
  // only compressions of public or computed blocks from these states).
  Aes128CtsHmacSha1 = 4,
  Aes256CtsHmacSha1 = 5,
  // Kerberos keys of RFC 8009: aes128-cts-hmac-sha256-128 (enctype 19) and
  // aes256-cts-hmac-sha384-192 (enctype 20), same use as above. The dealer derives with
  // KDF-HMAC-SHA2 (SHA-256 for 19, SHA-384 for 20); the key itself is never stored:
  //   for each usage u of kKrbUsages, in order, a block of krb_usage_block_bytes():
  //     Ke_u round keys (11 or 15 expanded AES round keys of the 128- or 256-bit
  //     KDF-HMAC-SHA2(key, u | 0xAA)),
  //     Ki_u HMAC state, Kc_u HMAC state (of the 128- or 192-bit KDF outputs for u | 0x55 and
  //     u | 0x99);
  //   then the HMAC state of the protocol key itself (the RFC 8009 PRF is
  //   HMAC(key, 00000001 | "prf" | 00 | input | k)).
  // An HMAC state here is the SHA-256 (64 bytes: H0..H7 after key ^ ipad, then after
  // key ^ opad, big-endian 32-bit words) or SHA-384 chaining value (128 bytes: the full
  // SHA-512-sized H0..H7, big-endian 64-bit words): krb_hmac_state_bytes().
  Aes128CtsHmacSha256 = 6,
  Aes256CtsHmacSha384 = 7,
};

// Key usages whose derived keys a Kerberos key's material holds: preauth timestamp (1),
// tickets (2), AS-REP (3), PAC checksums (17), PA-REQ-ENC-PA-REP checksum (56).
inline constexpr std::uint32_t kKrbUsages[] = {1, 2, 3, 17, 56};
inline constexpr std::size_t kKrbUsageCount = sizeof(kKrbUsages) / sizeof(kKrbUsages[0]);
inline constexpr std::size_t kKrbHmacStateBytes = 40;  // HMAC-SHA1 (RFC 3962 keys)
inline constexpr std::size_t kKrbConfounderBytes = 16;
inline constexpr std::size_t kKrbMacBytes = 12;  // HMAC-SHA1-96 (RFC 3962 keys)
// RFC 8009 keys: HMAC states, MAC (encryption and checksum) and PRF output lengths.
inline constexpr std::size_t kKrbSha256HmacStateBytes = 64;
inline constexpr std::size_t kKrbSha384HmacStateBytes = 128;
inline constexpr std::size_t kKrbSha256MacBytes = 16;  // HMAC-SHA256-128
inline constexpr std::size_t kKrbSha384MacBytes = 24;  // HMAC-SHA384-192
inline constexpr std::size_t kKrbSha256PrfBytes = 32;
inline constexpr std::size_t kKrbSha384PrfBytes = 48;
inline constexpr std::size_t kKrbMaxMacBytes = kKrbSha384MacBytes;
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
inline constexpr std::size_t kGcmHashPowers = 1024;
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
