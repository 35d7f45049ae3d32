#include "engines/three_party/circuit_set.hpp"

#include "circuits/aes.hpp"
#include "common/error.hpp"

namespace mpc::three_party_engine {
namespace {

struct CircuitShape {
  circuits::AesKeySize size;
  circuits::AesDirection direction;
  circuits::SboxVariant sbox;
  bool compare = false;  // encryption plus the equality bit of build_aes_encrypt_equal_circuit
};

CircuitShape shape_of(wire::CircuitId id) {
  using circuits::AesDirection;
  using circuits::AesKeySize;
  using circuits::SboxVariant;
  switch (id) {
    case wire::CircuitId::Aes128EncryptAnd32: return {AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::And32};
    case wire::CircuitId::Aes128EncryptDepth4: return {AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::Depth4};
    case wire::CircuitId::Aes128DecryptAnd32: return {AesKeySize::Aes128, AesDirection::Decrypt, SboxVariant::And32};
    case wire::CircuitId::Aes128DecryptDepth4: return {AesKeySize::Aes128, AesDirection::Decrypt, SboxVariant::Depth4};
    case wire::CircuitId::Aes256EncryptAnd32: return {AesKeySize::Aes256, AesDirection::Encrypt, SboxVariant::And32};
    case wire::CircuitId::Aes256EncryptDepth4: return {AesKeySize::Aes256, AesDirection::Encrypt, SboxVariant::Depth4};
    case wire::CircuitId::Aes256DecryptAnd32: return {AesKeySize::Aes256, AesDirection::Decrypt, SboxVariant::And32};
    case wire::CircuitId::Aes256DecryptDepth4: return {AesKeySize::Aes256, AesDirection::Decrypt, SboxVariant::Depth4};
    case wire::CircuitId::Aes256EncryptEqAnd32:
      return {AesKeySize::Aes256, AesDirection::Encrypt, SboxVariant::And32, true};
    case wire::CircuitId::Aes256EncryptEqDepth4:
      return {AesKeySize::Aes256, AesDirection::Encrypt, SboxVariant::Depth4, true};
    case wire::CircuitId::KrbEncryptAes128:
    case wire::CircuitId::KrbEncryptAes256:
    case wire::CircuitId::KrbDecryptAes128:
    case wire::CircuitId::KrbDecryptAes256:
    case wire::CircuitId::KrbChecksum:
    case wire::CircuitId::KrbSha2EncryptAes128:
    case wire::CircuitId::KrbSha2EncryptAes256:
    case wire::CircuitId::KrbSha2DecryptAes128:
    case wire::CircuitId::KrbSha2DecryptAes256:
    case wire::CircuitId::KrbSha2ChecksumSha256:
    case wire::CircuitId::KrbSha2ChecksumSha384:
    case wire::CircuitId::KrbCf2Encrypt:
    case wire::CircuitId::KrbCf2Decrypt:
    case wire::CircuitId::KrbCf2Checksum:
      throw Error(Component::Server, "Kerberos circuits are compiled per data length (jobs::KrbCircuitCache)");
    case wire::CircuitId::GcmLocalMasks: throw Error(Component::Server, "a batch of local masks runs no circuit");
    case wire::CircuitId::GcmKeyMaterial:
      throw Error(Component::Server,
                  "a key's material is compiled when a generation needs it (jobs::gcm_key_material_program)");
  }
  throw Error(Component::Server, "unknown circuit id");
}

std::size_t index_of(wire::CircuitId id) { return static_cast<std::size_t>(id) - 1; }

}  // namespace

CircuitSet::CircuitSet() {
  for (std::uint8_t value = 1; value <= programs_.size(); ++value) {
    const auto id = static_cast<wire::CircuitId>(value);
    const CircuitShape shape = shape_of(id);
    programs_[index_of(id)] =
        circuits::compile(shape.compare ? circuits::build_aes_encrypt_equal_circuit(shape.size, shape.sbox)
                                        : circuits::build_aes_circuit(shape.size, shape.direction, shape.sbox));
  }
}

const circuits::Program& CircuitSet::program(wire::CircuitId id) const {
  if (!wire::is_valid_circuit_id(static_cast<std::uint8_t>(id))) throw Error(Component::Server, "unknown circuit id");
  if (wire::is_krb_circuit(id))
    throw Error(Component::Server, "Kerberos circuits are compiled per data length (jobs::KrbCircuitCache)");
  if (id == wire::CircuitId::GcmLocalMasks || id == wire::CircuitId::GcmKeyMaterial) (void)shape_of(id);  // throws
  return programs_[index_of(id)];
}

wire::CircuitId CircuitSet::choose(wire::KeyAlgorithm algorithm, bool decrypt, std::uint32_t blocks,
                                   const settings::ServerLimits& limits) {
  // Small batches are bound by round trips: the depth-4 S-box saves a third of the
  // layers for 6% more ANDs. Large batches are bound by computation and bandwidth.
  bool depth4 = false;
  switch (limits.sbox) {
    case settings::SboxChoice::Depth4: depth4 = true; break;
    case settings::SboxChoice::And32: depth4 = false; break;
    case settings::SboxChoice::Auto: depth4 = blocks <= limits.latency_batch_blocks; break;
  }
  // An Aes256Gcm key is an AES-256 key with extra material after its round keys.
  const bool aes256 = algorithm != wire::KeyAlgorithm::Aes128;
  std::uint8_t base = aes256 ? 5 : 1;
  if (decrypt) base += 2;
  if (depth4) base += 1;
  return static_cast<wire::CircuitId>(base);
}

std::size_t CircuitSet::key_rows(wire::CircuitId id) {
  return shape_of(id).size == circuits::AesKeySize::Aes256 ? 15 * 128 : 11 * 128;
}

}  // namespace mpc::three_party_engine
