// How keys are named everywhere: name + version (kvno) + algorithm.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mpc::wire {

// What a stored key is; the value fixes the layout of its share material.
enum class KeyAlgorithm : std::uint8_t {
  Aes128 = 1,  // material: the 11 expanded AES-128 round keys, 176 bytes
  Aes256 = 2,  // material: the 15 expanded AES-256 round keys, 240 bytes
};

inline constexpr std::size_t kMaxKeyNameBytes = 255;

struct KeyId {
  std::string name;  // 1..255 bytes of printable ASCII (0x21..0x7e), e.g. "krbtgt/EXAMPLE.COM"
  std::uint32_t version = 0;
  KeyAlgorithm algorithm = KeyAlgorithm::Aes128;
  bool operator==(const KeyId&) const = default;
};

const char* algorithm_name(KeyAlgorithm algorithm);                 // "aes128", "aes256"
std::optional<KeyAlgorithm> parse_algorithm(std::string_view name);  // inverse of algorithm_name
std::size_t material_bytes(KeyAlgorithm algorithm);                  // 176 or 240
std::size_t aes_rounds(KeyAlgorithm algorithm);                      // 10 or 14

// Throws FormatError(Wire) if the name is empty, too long or has a byte outside 0x21..0x7e.
void validate_key_name(std::string_view name);

std::string describe(const KeyId& key);  // "krbtgt/EXAMPLE.COM kvno 2 aes256"

}  // namespace mpc::wire
