#include "jobs/krb_jobs.hpp"

#include <openssl/sha.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "circuits/kerberos.hpp"
#include "circuits/kerberos_cf2.hpp"
#include "circuits/kerberos_sha2.hpp"
#include "circuits/masked_inputs.hpp"
#include "common/error.hpp"

namespace mpc::jobs {
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
  }
  throw Error(Component::Server, "unknown Kerberos operation " + std::to_string(static_cast<unsigned>(operation)));
}

circuits::KrbEnctype enctype_of(wire::KeyAlgorithm algorithm) {
  switch (algorithm) {
    case wire::KeyAlgorithm::Aes128CtsHmacSha1: return circuits::KrbEnctype::Aes128Sha1;
    case wire::KeyAlgorithm::Aes256CtsHmacSha1: return circuits::KrbEnctype::Aes256Sha1;
    case wire::KeyAlgorithm::Aes128CtsHmacSha256: return circuits::KrbEnctype::Aes128Sha256;
    case wire::KeyAlgorithm::Aes256CtsHmacSha384: return circuits::KrbEnctype::Aes256Sha384;
    default: break;
  }
  throw Error(Component::Server, std::string(wire::algorithm_name(algorithm)) + " is not a Kerberos key algorithm");
}

// The stored key's PRF material: the PRF key's round keys (RFC 3962) or the protocol key's
// HMAC state (RFC 8009).
KrbSecretRange prf_range(wire::KeyAlgorithm algorithm) {
  require_krb(algorithm);
  const std::size_t bytes = wire::is_krb_sha2_algorithm(algorithm) ? wire::krb_hmac_state_bytes(algorithm)
                                                                    : round_key_bytes(is_aes256(algorithm));
  return {wire::krb_prf_offset(algorithm), bytes};
}

std::size_t prf_input_bytes(const wire::KrbCombineShape& shape) {
  return circuits::krb_cf2_prf_input_bytes(enctype_of(shape.stored), enctype_of(shape.combined), shape.pepper_bytes);
}

// The PRF inputs of PRF+(key, pepper) (RFC 6113 5.1: PRF(i || pepper), i = 1, 2, ...): the
// blocks SHA-1(i || pepper)[0..16) the RFC 3962 PRF encrypts, or 1 || pepper for RFC 8009,
// whose one PRF output covers any AES key.
std::vector<std::uint8_t> prf_inputs(const wire::KrbCombineShape& shape, const std::string& pepper) {
  std::vector<std::uint8_t> out;
  if (wire::is_krb_sha2_algorithm(shape.stored)) {
    out.push_back(1);
    out.insert(out.end(), pepper.begin(), pepper.end());
    return out;
  }
  const std::size_t blocks = circuits::krb_cf2_prf_blocks(enctype_of(shape.stored), enctype_of(shape.combined));
  for (std::size_t i = 1; i <= blocks; ++i) {
    std::vector<std::uint8_t> input(1, static_cast<std::uint8_t>(i));
    input.insert(input.end(), pepper.begin(), pepper.end());
    std::uint8_t digest[SHA_DIGEST_LENGTH];
    SHA1(input.data(), input.size(), digest);
    out.insert(out.end(), digest, digest + 16);
  }
  return out;
}

circuits::KrbCf2Use cf2_use(wire::KrbOperation operation) {
  switch (operation) {
    case wire::KrbOperation::Encrypt: return circuits::KrbCf2Use::Encrypt;
    case wire::KrbOperation::Decrypt: return circuits::KrbCf2Use::Decrypt;
    case wire::KrbOperation::Checksum: return circuits::KrbCf2Use::Checksum;
  }
  throw Error(Component::Server, "unknown Kerberos operation " + std::to_string(static_cast<unsigned>(operation)));
}

}  // namespace

std::uint32_t max_krb_batch_jobs(std::uint32_t data_bytes) {
  // A checksum of an empty message still has inputs and outputs: count at least a block.
  const std::size_t per_job = std::max<std::size_t>(data_bytes, 16);
  return static_cast<std::uint32_t>(std::max<std::size_t>(1, kMaxKrbBatchDataBytes / per_job));
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
  }
  throw Error(Component::Server, "unknown Kerberos operation " + std::to_string(static_cast<unsigned>(operation)));
}

std::size_t krb_secret_bytes(wire::CircuitId id, std::uint32_t combine) {
  if (!wire::is_krb_circuit(id))
    throw Error(Component::Server,
                "circuit id " + std::to_string(static_cast<unsigned>(id)) + " is not a Kerberos circuit");
  if (wire::is_krb_cf2_circuit(id)) return prf_range(wire::unpack_krb_combine(combine).stored).bytes;
  const wire::KeyAlgorithm algorithm = wire::krb_algorithm_of(id);
  const std::size_t state = wire::krb_hmac_state_bytes(algorithm);
  switch (wire::krb_operation_of(id)) {
    case wire::KrbOperation::Encrypt:
    case wire::KrbOperation::Decrypt: return round_key_bytes(is_aes256(algorithm)) + state;
    default: return state;
  }
}

KrbMaskedRange krb_masked_range(const KrbCircuitKey& circuit) {
  const wire::KrbOperation operation = wire::krb_operation_of(circuit.id);
  const std::size_t data = operation == wire::KrbOperation::Decrypt ? 0 : circuit.data_bytes;
  if (!wire::is_krb_cf2_circuit(circuit.id)) return {0, data};
  const wire::KrbCombineShape shape = wire::unpack_krb_combine(circuit.combine);
  return {prf_input_bytes(shape), wire::key_bytes(shape.combined) + data};
}

KrbBatchLayout krb_batch_layout(wire::CircuitId id, std::uint32_t data_bytes, std::uint32_t combine) {
  KrbBatchLayout layout;
  layout.mask_rows = 8 * krb_masked_range(KrbCircuitKey{id, data_bytes, combine}).bytes;
  layout.key_rows = 8 * krb_secret_bytes(id, combine) + layout.mask_rows;
  const wire::KrbOperation operation = wire::krb_operation_of(id);
  if (wire::is_krb_cf2_circuit(id)) {
    const wire::KrbCombineShape shape = wire::unpack_krb_combine(combine);
    layout.public_bytes = prf_input_bytes(shape) + wire::key_bytes(shape.combined) + data_bytes;
    layout.output_bytes = wire::krb_result_bytes(operation, shape.combined, data_bytes);
  } else {
    layout.public_bytes = data_bytes;
    layout.output_bytes = wire::krb_result_bytes(operation, wire::krb_algorithm_of(id), data_bytes);
  }
  return layout;
}

KrbSecretRange krb_secret_range(wire::KeyAlgorithm algorithm, wire::KrbOperation operation, std::uint32_t usage) {
  require_krb(algorithm);
  const std::size_t round_keys = round_key_bytes(is_aes256(algorithm));
  const std::size_t state = wire::krb_hmac_state_bytes(algorithm);
  const auto index = wire::krb_usage_index(usage);
  if (!index) throw Error(Component::Server, "no derived keys are stored for usage " + std::to_string(usage));
  switch (operation) {
    case wire::KrbOperation::Encrypt:
    case wire::KrbOperation::Decrypt:
      // Ke's round keys and Ki's HMAC state lie back to back: groups 0 and 1 of the circuit.
      return {wire::krb_ke_offset(algorithm, *index), round_keys + state};
    case wire::KrbOperation::Checksum: return {wire::krb_kc_offset(algorithm, *index), state};
  }
  throw Error(Component::Server, "unknown Kerberos operation " + std::to_string(static_cast<unsigned>(operation)));
}

KrbJobPlan plan_krb_job(const wire::KrbRequest& request) {
  require_krb(request.key.algorithm);
  const auto data_bytes = static_cast<std::uint32_t>(request.data.size());
  KrbJobPlan plan;
  plan.result_bytes = wire::krb_result_bytes(request.operation, wire::krb_job_algorithm(request), data_bytes);
  if (!request.combine) {
    plan.circuit = {krb_circuit_id(request.operation, request.key.algorithm), data_bytes, 0};
    plan.secret = krb_secret_range(request.key.algorithm, request.operation, request.usage);
    plan.public_record = request.data;
    plan.mask_bytes = krb_masked_range(plan.circuit).bytes;
    return plan;
  }
  if (auto refusal = wire::krb_combine_refusal(request.operation, request.usage, *request.combine))
    throw FormatError(Component::Wire, *refusal);
  const wire::KrbCombineShape shape{request.key.algorithm, request.combine->combined, request.usage,
                                    static_cast<std::uint32_t>(request.combine->pepper.size())};
  plan.circuit = {wire::krb_cf2_circuit(request.operation), data_bytes, wire::pack_krb_combine(shape)};
  plan.secret = prf_range(request.key.algorithm);
  plan.public_record = prf_inputs(shape, request.combine->pepper);
  plan.public_record.insert(plan.public_record.end(), request.combine->mask.begin(), request.combine->mask.end());
  plan.public_record.insert(plan.public_record.end(), request.data.begin(), request.data.end());
  plan.mask_bytes = krb_masked_range(plan.circuit).bytes;
  return plan;
}

SecretBytes krb_secret_rows(const SecretBytes& share, wire::KeyAlgorithm algorithm, const KrbSecretRange& range) {
  require_krb(algorithm);
  const std::size_t material = wire::material_bytes(algorithm);
  if (share.size() != 2 * material)
    throw Error(Component::Server, "share of " + std::to_string(share.size()) + " bytes for " +
                                       wire::algorithm_name(algorithm) + " material of " + std::to_string(material));
  if (range.offset + range.bytes > material) throw Error(Component::Server, "secret rows outside the material");
  SecretBytes out(2 * range.bytes);
  std::memcpy(out.data(), share.data() + range.offset, range.bytes);
  std::memcpy(out.data() + range.bytes, share.data() + material + range.offset, range.bytes);
  return out;
}

SecretBytes krb_secret_rows(const SecretBytes& share, wire::KeyAlgorithm algorithm, const KrbSecretRange& range,
                            const SecretBytes& mask) {
  const SecretBytes key = krb_secret_rows(share, algorithm, range);
  if (mask.size() % 2 != 0) throw Error(Component::Server, "a record mask share of an odd length");
  const std::size_t key_bytes = range.bytes;
  const std::size_t mask_bytes = mask.size() / 2;
  SecretBytes out(2 * (key_bytes + mask_bytes));
  std::memcpy(out.data(), key.data(), key_bytes);
  if (mask_bytes != 0) std::memcpy(out.data() + key_bytes, mask.data(), mask_bytes);
  std::memcpy(out.data() + key_bytes + mask_bytes, key.data() + key_bytes, key_bytes);
  if (mask_bytes != 0) std::memcpy(out.data() + 2 * key_bytes + mask_bytes, mask.data() + mask_bytes, mask_bytes);
  return out;
}

SecretBytes krb_secret_rows(const SecretBytes& share, wire::KeyAlgorithm algorithm, wire::KrbOperation operation,
                            std::uint32_t usage) {
  return krb_secret_rows(share, algorithm, krb_secret_range(algorithm, operation, usage));
}

namespace {

circuits::Circuit build_unmasked_krb_circuit(const KrbCircuitKey& key, circuits::CircuitCost cost) {
  const wire::KrbOperation operation = wire::krb_operation_of(key.id);
  if (wire::is_krb_cf2_circuit(key.id)) {
    const wire::KrbCombineShape shape = wire::unpack_krb_combine(key.combine);
    const std::size_t mac_bytes = wire::krb_mac_bytes(shape.combined);
    (void)wire::krb_result_bytes(operation, shape.combined, key.data_bytes);
    circuits::KrbCf2Shape circuit;
    circuit.protected_key = enctype_of(shape.stored);
    circuit.combined = enctype_of(shape.combined);
    circuit.use = cf2_use(operation);
    circuit.usage = shape.usage;
    circuit.prf_input_bytes = prf_input_bytes(shape);
    circuit.data_bytes = operation == wire::KrbOperation::Decrypt ? key.data_bytes - mac_bytes : key.data_bytes;
    return circuits::build_krb_cf2_circuit(circuit, cost);
  }
  const wire::KeyAlgorithm algorithm = wire::krb_algorithm_of(key.id);
  (void)wire::krb_result_bytes(operation, algorithm, key.data_bytes);
  const circuits::AesKeySize size = is_aes256(algorithm) ? circuits::AesKeySize::Aes256 : circuits::AesKeySize::Aes128;
  const std::size_t mac_bytes = wire::krb_mac_bytes(algorithm);
  const std::uint32_t data_bytes = key.data_bytes;
  if (wire::is_krb_sha2_algorithm(algorithm)) {
    const circuits::KrbSha2Hash hash = circuits::krb_sha2_hash_for(size);
    switch (operation) {
      case wire::KrbOperation::Encrypt: return circuits::build_krb_sha2_encrypt_circuit(size, data_bytes, cost);
      case wire::KrbOperation::Decrypt:
        return circuits::build_krb_sha2_decrypt_circuit(size, data_bytes - mac_bytes, cost);
      case wire::KrbOperation::Checksum: return circuits::build_krb_sha2_checksum_circuit(hash, data_bytes, cost);
    }
  }
  switch (operation) {
    case wire::KrbOperation::Encrypt: return circuits::build_krb_encrypt_circuit(size, data_bytes, cost);
    case wire::KrbOperation::Decrypt: return circuits::build_krb_decrypt_circuit(size, data_bytes - mac_bytes, cost);
    default: return circuits::build_krb_checksum_circuit(data_bytes, cost);
  }
}

}  // namespace

circuits::Circuit build_krb_circuit(const KrbCircuitKey& key, circuits::CircuitCost cost) {
  const KrbMaskedRange masked = krb_masked_range(key);
  return circuits::with_masked_inputs(build_unmasked_krb_circuit(key, cost),
                                      static_cast<std::uint32_t>(8 * krb_secret_bytes(key.id, key.combine)),
                                      static_cast<std::uint32_t>(8 * masked.offset),
                                      static_cast<std::uint32_t>(8 * masked.bytes));
}

circuits::Circuit build_krb_circuit(wire::CircuitId id, std::uint32_t data_bytes, circuits::CircuitCost cost) {
  if (wire::is_krb_cf2_circuit(id))
    throw Error(Component::Server, "a KRB-FX-CF2 circuit needs its combine shape");
  return build_krb_circuit(KrbCircuitKey{id, data_bytes, 0}, cost);
}

}  // namespace mpc::jobs
