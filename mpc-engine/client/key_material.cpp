// mpc-engine/client/key_material.cpp: plaintext share material of a key, for the dealer.
//
// H is computed with the library's own cleartext AES rather than a general-purpose one: it
// has no secret-dependent table lookups on any CPU, and it wipes its temporaries.
#include "client/key_material.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "circuits/aes_reference.hpp"
#include "client/krb_derivation.hpp"
#include "common/error.hpp"
#include "protocol/rss3/ghash.hpp"

namespace mpc::client {
namespace {

// Wipes a container of secret bytes when the scope ends, however it ends.
template <typename Container>
class WipeOnExit {
 public:
  explicit WipeOnExit(Container& container) : container_(container) {}
  WipeOnExit(const WipeOnExit&) = delete;
  WipeOnExit& operator=(const WipeOnExit&) = delete;
  ~WipeOnExit() { wipe(container_.data(), container_.size() * sizeof(container_[0])); }

 private:
  Container& container_;
};

// The Kerberos layout of wire/key_id.hpp: per usage the round keys of Ke and the HMAC states
// of Ki and Kc, then the round keys of the PRF key. The protocol key itself is not stored.
void fill_krb_material(wire::KeyAlgorithm algorithm, std::span<const std::uint8_t> protocol_key,
                       SecretBytes& material) {
  const auto put = [&](std::size_t offset, std::span<const std::uint8_t> bytes) {
    std::copy(bytes.begin(), bytes.end(), material.data() + offset);
  };
  const auto put_round_keys = [&](std::size_t offset, const SecretBytes& key) {
    std::vector<std::uint8_t> round_keys = circuits::aes_expand_key(key.span());
    const WipeOnExit wipe_round_keys(round_keys);
    put(offset, round_keys);
  };
  for (std::size_t index = 0; index < wire::kKrbUsageCount; ++index) {
    const std::uint32_t usage = wire::kKrbUsages[index];
    const SecretBytes ke = krb_derive_key(protocol_key, krb_usage_constant(usage, KrbKeyRole::Encryption));
    const SecretBytes ki = krb_derive_key(protocol_key, krb_usage_constant(usage, KrbKeyRole::Integrity));
    const SecretBytes kc = krb_derive_key(protocol_key, krb_usage_constant(usage, KrbKeyRole::Checksum));
    put_round_keys(wire::krb_ke_offset(algorithm, index), ke);
    put(wire::krb_ki_offset(algorithm, index), hmac_sha1_state(ki.span()).span());
    put(wire::krb_kc_offset(algorithm, index), hmac_sha1_state(kc.span()).span());
  }
  put_round_keys(wire::krb_prf_offset(algorithm), krb_derive_key(protocol_key, krb_prf_constant()));
}

// The RFC 8009 layout of wire/key_id.hpp: per usage the round keys of Ke and the HMAC-SHA2
// states of Ki and Kc (all from KDF-HMAC-SHA2), then the HMAC state of the protocol key.
void fill_krb_sha2_material(wire::KeyAlgorithm algorithm, std::span<const std::uint8_t> protocol_key,
                            SecretBytes& material) {
  const KrbSha2 hash = wire::algorithm_row(algorithm).hash == MPC_KEY_HASH_SHA384 ? KrbSha2::Sha384 : KrbSha2::Sha256;
  // RFC 8009 section 5: Ke is the AES key size; Ki and Kc are the MAC length.
  const std::size_t ke_bytes = wire::key_bytes(algorithm);
  const std::size_t ki_bytes = wire::krb_mac_bytes(algorithm);
  const auto put = [&](std::size_t offset, std::span<const std::uint8_t> bytes) {
    std::copy(bytes.begin(), bytes.end(), material.data() + offset);
  };
  const auto derive = [&](std::uint32_t usage, KrbKeyRole role, std::size_t bytes) {
    return krb_kdf_hmac_sha2(hash, protocol_key, krb_usage_constant(usage, role), bytes);
  };
  for (std::size_t index = 0; index < wire::kKrbUsageCount; ++index) {
    const std::uint32_t usage = wire::kKrbUsages[index];
    const SecretBytes ke = derive(usage, KrbKeyRole::Encryption, ke_bytes);
    const SecretBytes ki = derive(usage, KrbKeyRole::Integrity, ki_bytes);
    const SecretBytes kc = derive(usage, KrbKeyRole::Checksum, ki_bytes);
    std::vector<std::uint8_t> round_keys = circuits::aes_expand_key(ke.span());
    const WipeOnExit wipe_round_keys(round_keys);
    put(wire::krb_ke_offset(algorithm, index), round_keys);
    put(wire::krb_ki_offset(algorithm, index), hmac_sha2_state(hash, ki.span()).span());
    put(wire::krb_kc_offset(algorithm, index), hmac_sha2_state(hash, kc.span()).span());
  }
  put(wire::krb_prf_offset(algorithm), hmac_sha2_state(hash, protocol_key).span());
}

}  // namespace

SecretBytes build_key_material(wire::KeyAlgorithm algorithm, std::span<const std::uint8_t> aes_key) {
  const std::size_t expected = wire::key_bytes(algorithm);
  if (aes_key.size() != expected)
    throw Error(Component::Client, std::string(wire::algorithm_name(algorithm)) + " keys are " +
                                       std::to_string(expected) + " bytes, got " + std::to_string(aes_key.size()));
  SecretBytes material(wire::material_bytes(algorithm));
  if (wire::is_krb_sha2_algorithm(algorithm)) {
    fill_krb_sha2_material(algorithm, aes_key, material);
    return material;
  }
  if (wire::is_krb_algorithm(algorithm)) {
    fill_krb_material(algorithm, aes_key, material);
    return material;
  }
  std::vector<std::uint8_t> round_keys = circuits::aes_expand_key(aes_key);
  const WipeOnExit wipe_round_keys(round_keys);
  std::copy(round_keys.begin(), round_keys.end(), material.data());
  if (algorithm != wire::KeyAlgorithm::Aes256Gcm) return material;

  static_assert(wire::kGcmRoundKeyBytes + wire::kGcmHashPowers * rss3::kGhashBlockBytes == 16624);
  const std::array<std::uint8_t, circuits::kAesBlockBytes> zero{};
  rss3::GhashBlock h = circuits::aes_encrypt_block(round_keys, zero);
  const WipeOnExit wipe_h(h);
  std::vector<rss3::GhashBlock> powers = rss3::hash_key_powers(h, wire::kGcmHashPowers);
  const WipeOnExit wipe_powers(powers);
  for (std::size_t k = 0; k < powers.size(); ++k)
    std::copy(powers[k].begin(), powers[k].end(),
              material.data() + wire::kGcmRoundKeyBytes + k * rss3::kGhashBlockBytes);
  return material;
}

}  // namespace mpc::client
