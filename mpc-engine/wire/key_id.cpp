// mpc-engine/wire/key_id.cpp: key id names, algorithms and their encoding.
#include "wire/key_id.hpp"

#include "common/error.hpp"
#include "wire/codec.hpp"

namespace mpc::wire {

const char* algorithm_name(KeyAlgorithm algorithm) {
  switch (algorithm) {
    case KeyAlgorithm::Aes128: return "aes128";
    case KeyAlgorithm::Aes256: return "aes256";
    case KeyAlgorithm::Aes256Gcm: return "aes256-gcm";
    case KeyAlgorithm::Aes128CtsHmacSha1: return "aes128-cts-hmac-sha1-96";
    case KeyAlgorithm::Aes256CtsHmacSha1: return "aes256-cts-hmac-sha1-96";
    case KeyAlgorithm::Aes128CtsHmacSha256: return "aes128-cts-hmac-sha256-128";
    case KeyAlgorithm::Aes256CtsHmacSha384: return "aes256-cts-hmac-sha384-192";
  }
  return "unknown";
}

std::optional<KeyAlgorithm> parse_algorithm(std::string_view name) {
  if (name == "aes128") return KeyAlgorithm::Aes128;
  if (name == "aes256") return KeyAlgorithm::Aes256;
  if (name == "aes256-gcm") return KeyAlgorithm::Aes256Gcm;
  if (name == "aes128-cts-hmac-sha1-96") return KeyAlgorithm::Aes128CtsHmacSha1;
  if (name == "aes256-cts-hmac-sha1-96") return KeyAlgorithm::Aes256CtsHmacSha1;
  if (name == "aes128-cts-hmac-sha256-128") return KeyAlgorithm::Aes128CtsHmacSha256;
  if (name == "aes256-cts-hmac-sha384-192") return KeyAlgorithm::Aes256CtsHmacSha384;
  return std::nullopt;
}

std::size_t material_bytes(KeyAlgorithm algorithm) {
  switch (algorithm) {
    case KeyAlgorithm::Aes128: return 11 * 16;
    case KeyAlgorithm::Aes256: return 15 * 16;
    case KeyAlgorithm::Aes256Gcm: return kGcmRoundKeyBytes + kGcmHashPowers * 16;
    case KeyAlgorithm::Aes128CtsHmacSha1:
    case KeyAlgorithm::Aes256CtsHmacSha1:
      return kKrbUsageCount * krb_usage_block_bytes(algorithm) + (aes_rounds(algorithm) + 1) * 16;
    case KeyAlgorithm::Aes128CtsHmacSha256:
    case KeyAlgorithm::Aes256CtsHmacSha384:
      return kKrbUsageCount * krb_usage_block_bytes(algorithm) + krb_hmac_state_bytes(algorithm);
  }
  throw FormatError(Component::Wire, "unknown key algorithm " + std::to_string(static_cast<unsigned>(algorithm)));
}

std::size_t aes_rounds(KeyAlgorithm algorithm) {
  switch (algorithm) {
    case KeyAlgorithm::Aes128: return 10;
    case KeyAlgorithm::Aes256: return 14;
    case KeyAlgorithm::Aes256Gcm: return 14;
    case KeyAlgorithm::Aes128CtsHmacSha1: return 10;
    case KeyAlgorithm::Aes256CtsHmacSha1: return 14;
    case KeyAlgorithm::Aes128CtsHmacSha256: return 10;
    case KeyAlgorithm::Aes256CtsHmacSha384: return 14;
  }
  throw FormatError(Component::Wire, "unknown key algorithm " + std::to_string(static_cast<unsigned>(algorithm)));
}

std::size_t key_bytes(KeyAlgorithm algorithm) {
  switch (algorithm) {
    case KeyAlgorithm::Aes128: return 16;
    case KeyAlgorithm::Aes256: return 32;
    case KeyAlgorithm::Aes256Gcm: return 32;
    case KeyAlgorithm::Aes128CtsHmacSha1: return 16;
    case KeyAlgorithm::Aes256CtsHmacSha1: return 32;
    case KeyAlgorithm::Aes128CtsHmacSha256: return 16;
    case KeyAlgorithm::Aes256CtsHmacSha384: return 32;
  }
  throw FormatError(Component::Wire, "unknown key algorithm " + std::to_string(static_cast<unsigned>(algorithm)));
}

bool is_krb_algorithm(KeyAlgorithm algorithm) noexcept {
  return algorithm == KeyAlgorithm::Aes128CtsHmacSha1 || algorithm == KeyAlgorithm::Aes256CtsHmacSha1 ||
         is_krb_sha2_algorithm(algorithm);
}

bool is_krb_sha2_algorithm(KeyAlgorithm algorithm) noexcept {
  return algorithm == KeyAlgorithm::Aes128CtsHmacSha256 || algorithm == KeyAlgorithm::Aes256CtsHmacSha384;
}

std::optional<std::size_t> krb_usage_index(std::uint32_t usage) noexcept {
  for (std::size_t i = 0; i < kKrbUsageCount; ++i)
    if (kKrbUsages[i] == usage) return i;
  return std::nullopt;
}

namespace {
void require_krb(KeyAlgorithm algorithm) {
  if (!is_krb_algorithm(algorithm))
    throw FormatError(Component::Wire, std::string(algorithm_name(algorithm)) + " is not a Kerberos key algorithm");
}
void require_usage_index(std::size_t usage_index) {
  if (usage_index >= kKrbUsageCount)
    throw FormatError(Component::Wire, "usage index " + std::to_string(usage_index) + " out of range");
}
}  // namespace

std::size_t krb_hmac_state_bytes(KeyAlgorithm algorithm) {
  require_krb(algorithm);
  if (algorithm == KeyAlgorithm::Aes128CtsHmacSha256) return kKrbSha256HmacStateBytes;
  if (algorithm == KeyAlgorithm::Aes256CtsHmacSha384) return kKrbSha384HmacStateBytes;
  return kKrbHmacStateBytes;
}

std::size_t krb_mac_bytes(KeyAlgorithm algorithm) {
  require_krb(algorithm);
  if (algorithm == KeyAlgorithm::Aes128CtsHmacSha256) return kKrbSha256MacBytes;
  if (algorithm == KeyAlgorithm::Aes256CtsHmacSha384) return kKrbSha384MacBytes;
  return kKrbMacBytes;
}

std::size_t krb_prf_bytes(KeyAlgorithm algorithm) {
  require_krb(algorithm);
  if (algorithm == KeyAlgorithm::Aes128CtsHmacSha256) return kKrbSha256PrfBytes;
  if (algorithm == KeyAlgorithm::Aes256CtsHmacSha384) return kKrbSha384PrfBytes;
  return 16;  // one AES block
}

std::size_t krb_usage_block_bytes(KeyAlgorithm algorithm) {
  require_krb(algorithm);
  return (aes_rounds(algorithm) + 1) * 16 + 2 * krb_hmac_state_bytes(algorithm);
}

std::size_t krb_ke_offset(KeyAlgorithm algorithm, std::size_t usage_index) {
  require_usage_index(usage_index);
  return usage_index * krb_usage_block_bytes(algorithm);
}

std::size_t krb_ki_offset(KeyAlgorithm algorithm, std::size_t usage_index) {
  return krb_ke_offset(algorithm, usage_index) + (aes_rounds(algorithm) + 1) * 16;
}

std::size_t krb_kc_offset(KeyAlgorithm algorithm, std::size_t usage_index) {
  return krb_ki_offset(algorithm, usage_index) + krb_hmac_state_bytes(algorithm);
}

std::size_t krb_prf_offset(KeyAlgorithm algorithm) { return kKrbUsageCount * krb_usage_block_bytes(algorithm); }

void validate_key_name(std::string_view name) {
  if (name.empty()) throw FormatError(Component::Wire, "empty key name");
  if (name.size() > kMaxKeyNameBytes)
    throw FormatError(Component::Wire, "key name of " + std::to_string(name.size()) + " bytes exceeds " +
                                           std::to_string(kMaxKeyNameBytes));
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x21 || c > 0x7e)
      throw FormatError(Component::Wire, "key name has a byte outside printable ASCII at offset " + std::to_string(i));
  }
}

std::string describe(const KeyId& key) {
  return key.name + " kvno " + std::to_string(key.version) + " " + algorithm_name(key.algorithm);
}

KeyAlgorithm checked_algorithm(std::uint8_t value) {
  switch (value) {
    case static_cast<std::uint8_t>(KeyAlgorithm::Aes128): return KeyAlgorithm::Aes128;
    case static_cast<std::uint8_t>(KeyAlgorithm::Aes256): return KeyAlgorithm::Aes256;
    case static_cast<std::uint8_t>(KeyAlgorithm::Aes256Gcm): return KeyAlgorithm::Aes256Gcm;
    case static_cast<std::uint8_t>(KeyAlgorithm::Aes128CtsHmacSha1): return KeyAlgorithm::Aes128CtsHmacSha1;
    case static_cast<std::uint8_t>(KeyAlgorithm::Aes256CtsHmacSha1): return KeyAlgorithm::Aes256CtsHmacSha1;
    case static_cast<std::uint8_t>(KeyAlgorithm::Aes128CtsHmacSha256): return KeyAlgorithm::Aes128CtsHmacSha256;
    case static_cast<std::uint8_t>(KeyAlgorithm::Aes256CtsHmacSha384): return KeyAlgorithm::Aes256CtsHmacSha384;
  }
  throw FormatError(Component::Wire, "unknown key algorithm " + std::to_string(value));
}

void write_key_id(ByteWriter& writer, const KeyId& key) {
  validate_key_name(key.name);
  checked_algorithm(static_cast<std::uint8_t>(key.algorithm));
  writer.short_string(key.name);
  writer.u32(key.version);
  writer.u8(static_cast<std::uint8_t>(key.algorithm));
}

KeyId read_key_id(ByteReader& reader) {
  KeyId key;
  key.name = reader.short_string(kMaxKeyNameBytes);
  validate_key_name(key.name);
  key.version = reader.u32();
  key.algorithm = checked_algorithm(reader.u8());
  return key;
}

std::size_t encoded_key_id_bytes(const KeyId& key) noexcept { return 2 + key.name.size() + 4 + 1; }

}  // namespace mpc::wire
