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
};

// Key usages whose derived keys a Kerberos key's material holds: preauth timestamp (1),
// tickets (2), AS-REP (3), PAC checksums (17), PA-REQ-ENC-PA-REP checksum (56).
inline constexpr std::uint32_t kKrbUsages[] = {1, 2, 3, 17, 56};
inline constexpr std::size_t kKrbUsageCount = sizeof(kKrbUsages) / sizeof(kKrbUsages[0]);
inline constexpr std::size_t kKrbHmacStateBytes = 40;
inline constexpr std::size_t kKrbConfounderBytes = 16;
inline constexpr std::size_t kKrbMacBytes = 12;  // HMAC-SHA1-96
// The longest data one Krb request may carry (plaintext + confounder, ciphertext + MAC, or
// checksummed message); longer requests are malformed.
inline constexpr std::size_t kKrbMaxDataBytes = 4096;

bool is_krb_algorithm(KeyAlgorithm algorithm) noexcept;
// Index of `usage` in kKrbUsages, or nullopt when the material holds no keys for it.
std::optional<std::size_t> krb_usage_index(std::uint32_t usage) noexcept;
// Bytes of one usage block: round keys + 2 * kKrbHmacStateBytes.
std::size_t krb_usage_block_bytes(KeyAlgorithm algorithm);
// Byte offsets into the material of a Kerberos key.
std::size_t krb_ke_offset(KeyAlgorithm algorithm, std::size_t usage_index);  // then Ki right after the round keys
std::size_t krb_ki_offset(KeyAlgorithm algorithm, std::size_t usage_index);
std::size_t krb_kc_offset(KeyAlgorithm algorithm, std::size_t usage_index);
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

// "aes128", "aes256", "aes256-gcm", "aes128-cts-hmac-sha1-96", "aes256-cts-hmac-sha1-96"
const char* algorithm_name(KeyAlgorithm algorithm);
std::optional<KeyAlgorithm> parse_algorithm(std::string_view name);  // inverse of algorithm_name
std::size_t material_bytes(KeyAlgorithm algorithm);  // 176, 240, 16624, 1456 or 1840
std::size_t aes_rounds(KeyAlgorithm algorithm);      // 10, 14, 14, 10 or 14
// Bytes of the AES key the material is made from: 16, 32, 32, 16 or 32.
std::size_t key_bytes(KeyAlgorithm algorithm);

// Throws FormatError(Wire) if the name is empty, too long or has a byte outside 0x21..0x7e.
void validate_key_name(std::string_view name);

std::string describe(const KeyId& key);  // "krbtgt/EXAMPLE.COM kvno 2 aes256"

}  // namespace mpc::wire
