#include "server/krb_jobs.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "circuits/kerberos.hpp"
#include "circuits/kerberos_sha2.hpp"
#include "common/error.hpp"

namespace mpc::server {
namespace {

bool is_aes256(wire::KeyAlgorithm algorithm) {
  return algorithm == wire::KeyAlgorithm::Aes256CtsHmacSha1 || algorithm == wire::KeyAlgorithm::Aes256CtsHmacSha384;
}

std::size_t round_key_bytes(bool aes256) { return (aes256 ? 15 : 11) * 16; }

void require_krb(wire::KeyAlgorithm algorithm) {
  if (!wire::is_krb_algorithm(algorithm))
    throw Error(Component::Server, std::string(wire::algorithm_name(algorithm)) + " is not a Kerberos key algorithm");
}

wire::CircuitId sha2_circuit_id(wire::KrbOperation operation, bool aes256) {
  switch (operation) {
    case wire::KrbOperation::Encrypt:
      return aes256 ? wire::CircuitId::KrbSha2EncryptAes256 : wire::CircuitId::KrbSha2EncryptAes128;
    case wire::KrbOperation::Decrypt:
      return aes256 ? wire::CircuitId::KrbSha2DecryptAes256 : wire::CircuitId::KrbSha2DecryptAes128;
    case wire::KrbOperation::Checksum:
      return aes256 ? wire::CircuitId::KrbSha2ChecksumSha384 : wire::CircuitId::KrbSha2ChecksumSha256;
    case wire::KrbOperation::Prf: return aes256 ? wire::CircuitId::KrbSha2PrfSha384 : wire::CircuitId::KrbSha2PrfSha256;
  }
  throw Error(Component::Server, "unknown Kerberos operation " + std::to_string(static_cast<unsigned>(operation)));
}

}  // namespace

std::uint32_t max_krb_batch_jobs(std::uint32_t data_bytes) {
  // A checksum of an empty message still has inputs and outputs: count at least a block.
  const std::size_t per_job = std::max<std::size_t>(data_bytes, 16);
  return static_cast<std::uint32_t>(std::max<std::size_t>(1, kMaxKrbBatchDataBytes / per_job));
}

bool krb_prf_runs_aes(wire::KeyAlgorithm algorithm) {
  require_krb(algorithm);
  return !wire::is_krb_sha2_algorithm(algorithm);
}

wire::CircuitId krb_circuit_id(wire::KrbOperation operation, wire::KeyAlgorithm algorithm) {
  require_krb(algorithm);
  const bool aes256 = is_aes256(algorithm);
  if (wire::is_krb_sha2_algorithm(algorithm)) return sha2_circuit_id(operation, aes256);
  switch (operation) {
    case wire::KrbOperation::Encrypt:
      return aes256 ? wire::CircuitId::KrbEncryptAes256 : wire::CircuitId::KrbEncryptAes128;
    case wire::KrbOperation::Decrypt:
      return aes256 ? wire::CircuitId::KrbDecryptAes256 : wire::CircuitId::KrbDecryptAes128;
    case wire::KrbOperation::Checksum: return wire::CircuitId::KrbChecksum;
    case wire::KrbOperation::Prf: break;
  }
  throw Error(Component::Server, "a Kerberos PRF runs an AES circuit, not a Kerberos one");
}

wire::KeyAlgorithm krb_aes_algorithm(wire::KeyAlgorithm algorithm) {
  require_krb(algorithm);
  return is_aes256(algorithm) ? wire::KeyAlgorithm::Aes256 : wire::KeyAlgorithm::Aes128;
}

std::size_t krb_secret_bytes(wire::CircuitId id) {
  if (!wire::is_krb_circuit(id))
    throw Error(Component::Server,
                "circuit id " + std::to_string(static_cast<unsigned>(id)) + " is not a Kerberos circuit");
  const wire::KeyAlgorithm algorithm = wire::krb_algorithm_of(id);
  const std::size_t state = wire::krb_hmac_state_bytes(algorithm);
  switch (wire::krb_operation_of(id)) {
    case wire::KrbOperation::Encrypt:
    case wire::KrbOperation::Decrypt: return round_key_bytes(is_aes256(algorithm)) + state;
    default: return state;
  }
}

KrbBatchLayout krb_batch_layout(wire::CircuitId id, std::uint32_t data_bytes) {
  KrbBatchLayout layout;
  layout.key_rows = 8 * krb_secret_bytes(id);
  layout.public_bytes = data_bytes;
  layout.output_bytes = wire::krb_result_bytes(wire::krb_operation_of(id), wire::krb_algorithm_of(id), data_bytes);
  return layout;
}

KrbSecretRange krb_secret_range(wire::KeyAlgorithm algorithm, wire::KrbOperation operation, std::uint32_t usage) {
  require_krb(algorithm);
  const std::size_t round_keys = round_key_bytes(is_aes256(algorithm));
  const std::size_t state = wire::krb_hmac_state_bytes(algorithm);
  if (operation == wire::KrbOperation::Prf) {
    // RFC 3962: the PRF key's round keys; RFC 8009: the protocol key's HMAC state.
    return {wire::krb_prf_offset(algorithm), krb_prf_runs_aes(algorithm) ? round_keys : state};
  }
  const auto index = wire::krb_usage_index(usage);
  if (!index) throw Error(Component::Server, "no derived keys are stored for usage " + std::to_string(usage));
  switch (operation) {
    case wire::KrbOperation::Encrypt:
    case wire::KrbOperation::Decrypt:
      // Ke's round keys and Ki's HMAC state lie back to back: groups 0 and 1 of the circuit.
      return {wire::krb_ke_offset(algorithm, *index), round_keys + state};
    case wire::KrbOperation::Checksum: return {wire::krb_kc_offset(algorithm, *index), state};
    default: break;
  }
  throw Error(Component::Server, "unknown Kerberos operation " + std::to_string(static_cast<unsigned>(operation)));
}

SecretBytes krb_secret_rows(const SecretBytes& share, wire::KeyAlgorithm algorithm, wire::KrbOperation operation,
                            std::uint32_t usage) {
  require_krb(algorithm);
  const std::size_t material = wire::material_bytes(algorithm);
  if (share.size() != 2 * material)
    throw Error(Component::Server, "share of " + std::to_string(share.size()) + " bytes for " +
                                       wire::algorithm_name(algorithm) + " material of " + std::to_string(material));
  const KrbSecretRange range = krb_secret_range(algorithm, operation, usage);
  SecretBytes out(2 * range.bytes);
  std::memcpy(out.data(), share.data() + range.offset, range.bytes);
  std::memcpy(out.data() + range.bytes, share.data() + material + range.offset, range.bytes);
  return out;
}

circuits::Circuit build_krb_circuit(wire::CircuitId id, std::uint32_t data_bytes, circuits::CircuitCost cost) {
  const wire::KrbOperation operation = wire::krb_operation_of(id);
  const wire::KeyAlgorithm algorithm = wire::krb_algorithm_of(id);
  (void)wire::krb_result_bytes(operation, algorithm, data_bytes);
  const circuits::AesKeySize size = is_aes256(algorithm) ? circuits::AesKeySize::Aes256 : circuits::AesKeySize::Aes128;
  const std::size_t mac_bytes = wire::krb_mac_bytes(algorithm);
  if (wire::is_krb_sha2_algorithm(algorithm)) {
    const circuits::KrbSha2Hash hash = circuits::krb_sha2_hash_for(size);
    switch (operation) {
      case wire::KrbOperation::Encrypt: return circuits::build_krb_sha2_encrypt_circuit(size, data_bytes, cost);
      case wire::KrbOperation::Decrypt:
        return circuits::build_krb_sha2_decrypt_circuit(size, data_bytes - mac_bytes, cost);
      case wire::KrbOperation::Checksum: return circuits::build_krb_sha2_checksum_circuit(hash, data_bytes, cost);
      case wire::KrbOperation::Prf: return circuits::build_krb_sha2_prf_circuit(hash, data_bytes, cost);
    }
  }
  switch (operation) {
    case wire::KrbOperation::Encrypt: return circuits::build_krb_encrypt_circuit(size, data_bytes, cost);
    case wire::KrbOperation::Decrypt: return circuits::build_krb_decrypt_circuit(size, data_bytes - mac_bytes, cost);
    default: return circuits::build_krb_checksum_circuit(data_bytes, cost);
  }
}

}  // namespace mpc::server
