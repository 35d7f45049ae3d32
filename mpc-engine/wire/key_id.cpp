// mpc-engine/wire/key_id.cpp: key id names, algorithms and their encoding.
#include "wire/key_id.hpp"

#include "common/error.hpp"
#include "wire/codec.hpp"

namespace mpc::wire {

namespace {

// The table's row of an algorithm; FormatError(Wire) for a value the enum does not name.
const mpc_key_algorithm_info& row_of(KeyAlgorithm algorithm) {
  const mpc_key_algorithm_info* row = mpc_key_algorithm_by_id(static_cast<int>(algorithm));
  if (row == nullptr)
    throw FormatError(Component::Wire, "unknown key algorithm " + std::to_string(static_cast<unsigned>(algorithm)));
  return *row;
}

}  // namespace

const char* algorithm_name(KeyAlgorithm algorithm) {
  const mpc_key_algorithm_info* row = mpc_key_algorithm_by_id(static_cast<int>(algorithm));
  return row == nullptr ? "unknown" : row->name;
}

std::optional<KeyAlgorithm> parse_algorithm(std::string_view name) {
  const mpc_key_algorithm_info* row = mpc_key_algorithm_by_name(std::string(name).c_str());
  if (row == nullptr) return std::nullopt;
  return static_cast<KeyAlgorithm>(row->id);
}

std::size_t material_bytes(KeyAlgorithm algorithm) { return row_of(algorithm).material_bytes; }
std::size_t aes_rounds(KeyAlgorithm algorithm) { return row_of(algorithm).aes_rounds; }
std::size_t key_bytes(KeyAlgorithm algorithm) { return row_of(algorithm).key_bytes; }

bool is_krb_algorithm(KeyAlgorithm algorithm) noexcept {
  return mpc_key_is_kerberos(mpc_key_algorithm_by_id(static_cast<int>(algorithm))) != 0;
}

bool is_krb_sha2_algorithm(KeyAlgorithm algorithm) noexcept {
  const mpc_key_algorithm_info* row = mpc_key_algorithm_by_id(static_cast<int>(algorithm));
  return row != nullptr && row->family == MPC_KEY_FAMILY_RFC8009;
}

std::optional<std::size_t> krb_usage_index(std::uint32_t usage) noexcept {
  const int index = mpc_key_usage_index(usage);
  if (index < 0) return std::nullopt;
  return static_cast<std::size_t>(index);
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
  return row_of(algorithm).hmac_state_bytes;
}

std::size_t krb_mac_bytes(KeyAlgorithm algorithm) {
  require_krb(algorithm);
  return row_of(algorithm).mac_bytes;
}

std::size_t krb_prf_bytes(KeyAlgorithm algorithm) {
  require_krb(algorithm);
  return row_of(algorithm).prf_bytes;
}

std::size_t krb_usage_block_bytes(KeyAlgorithm algorithm) {
  require_krb(algorithm);
  return mpc_key_round_key_bytes(&row_of(algorithm)) + 2 * krb_hmac_state_bytes(algorithm);
}

std::size_t krb_ke_offset(KeyAlgorithm algorithm, std::size_t usage_index) {
  require_usage_index(usage_index);
  return usage_index * krb_usage_block_bytes(algorithm);
}

std::size_t krb_ki_offset(KeyAlgorithm algorithm, std::size_t usage_index) {
  return krb_ke_offset(algorithm, usage_index) + mpc_key_round_key_bytes(&row_of(algorithm));
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
  if (mpc_key_algorithm_by_id(value) == nullptr)
    throw FormatError(Component::Wire, "unknown key algorithm " + std::to_string(value));
  return static_cast<KeyAlgorithm>(value);
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
