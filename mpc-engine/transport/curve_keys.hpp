// CurveZMQ long-term key pairs (X25519, libsodium) and their files.
//
// Secret key file: one line "secret-key <z85 40 chars>" and one line "public-key <z85>",
// mode 0600 (reading refuses a file that group or others may read or write).
// Public key file: one line "public-key <z85 40 chars>".
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "common/secret.hpp"

namespace mpc::transport {

using PublicKey = std::array<std::uint8_t, 32>;

struct CurveKeyPair {
  PublicKey public_key{};
  SecretBytes secret_key{32};
};

CurveKeyPair generate_curve_key_pair();

std::string z85_encode(std::span<const std::uint8_t, 32> key);
PublicKey z85_decode_public(std::string_view text);  // throws FormatError(Transport)

void write_secret_key_file(const std::filesystem::path& path, const CurveKeyPair& pair);  // creates 0600
void write_public_key_file(const std::filesystem::path& path, const PublicKey& key);
CurveKeyPair read_secret_key_file(const std::filesystem::path& path);  // throws Error(Transport)
PublicKey read_public_key_file(const std::filesystem::path& path);

// A public key given either inline as z85 or as a path to a public key file.
PublicKey parse_public_key_reference(std::string_view z85_or_path);

}  // namespace mpc::transport
