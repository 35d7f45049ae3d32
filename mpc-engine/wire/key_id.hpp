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
};

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

const char* algorithm_name(KeyAlgorithm algorithm);                 // "aes128", "aes256", "aes256-gcm"
std::optional<KeyAlgorithm> parse_algorithm(std::string_view name);  // inverse of algorithm_name
std::size_t material_bytes(KeyAlgorithm algorithm);                  // 176, 240 or 16624
std::size_t aes_rounds(KeyAlgorithm algorithm);                      // 10, 14 or 14
// Bytes of the AES key the material is made from: 16, 32 or 32.
std::size_t key_bytes(KeyAlgorithm algorithm);

// Throws FormatError(Wire) if the name is empty, too long or has a byte outside 0x21..0x7e.
void validate_key_name(std::string_view name);

std::string describe(const KeyId& key);  // "krbtgt/EXAMPLE.COM kvno 2 aes256"

}  // namespace mpc::wire
