#include "circuits/kerberos_cf2.hpp"

#include <string>
#include <vector>

#include "circuits/aes.hpp"
#include "circuits/aes_layers.hpp"
#include "circuits/builder.hpp"
#include "circuits/cbc_cts.hpp"
#include "circuits/n_fold.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

using detail::append_constant_byte;
using detail::KrbBits;
using detail::krb_checked_width;
using detail::WordGates;

constexpr std::size_t kBlockBits = 128;

// RFC 3961's well-known constant roles.
enum class Role : std::uint8_t { Encryption = 0xAA, Integrity = 0x55, Checksum = 0x99 };

KrbBits constant_bits(const WordGates& gates, std::span<const std::uint8_t> bytes) {
  KrbBits bits;
  for (std::uint8_t byte : bytes) append_constant_byte(gates, byte, bits);
  return bits;
}

std::vector<std::uint8_t> usage_label(std::uint32_t usage, Role role) {
  return {static_cast<std::uint8_t>(usage >> 24), static_cast<std::uint8_t>(usage >> 16),
          static_cast<std::uint8_t>(usage >> 8), static_cast<std::uint8_t>(usage), static_cast<std::uint8_t>(role)};
}

// PRF+(K2, pepper2)[0..key bytes of the combined enctype).
KrbBits protected_prf_plus(WordGates& gates, const KrbCf2Shape& shape, SboxVariant sbox, const KrbBits& material,
                           const KrbBits& prf_inputs) {
  const std::size_t blocks = krb_cf2_prf_blocks(shape.protected_key, shape.combined);
  KrbBits out;
  if (krb_is_sha2(shape.protected_key)) {
    const KrbSha2Hash hash =
        shape.protected_key == KrbEnctype::Aes128Sha256 ? KrbSha2Hash::Sha256 : KrbSha2Hash::Sha384;
    const KrbBits message = detail::krb_sha2_prf_message(gates, hash, prf_inputs);
    out = detail::krb_hmac(gates, shape.protected_key, material, message, krb_enctype_prf_bytes(shape.protected_key));
  } else {
    for (std::size_t block = 0; block < blocks; ++block) {
      const std::span<const std::uint32_t> input(prf_inputs.data() + block * kBlockBits, kBlockBits);
      const KrbBits encrypted = detail::aes_block(gates, krb_aes_size(shape.protected_key), sbox, AesDirection::Encrypt,
                                                  material, input);
      out.insert(out.end(), encrypted.begin(), encrypted.end());
    }
  }
  out.resize(krb_key_bytes(shape.combined) * 8);
  return out;
}

// The combined key's derived keys, computed once per role.
class Derivation {
 public:
  Derivation(WordGates& gates, const KrbCf2Shape& shape, SboxVariant sbox, KrbBits key)
      : gates_(gates), shape_(shape), sbox_(sbox), key_(std::move(key)) {}

  KrbBits derive(Role role) {
    const std::vector<std::uint8_t> label = usage_label(shape_.usage, role);
    if (krb_is_sha2(shape_.combined)) {
      // KDF-HMAC-SHA2(K, label, k) = first k bits of HMAC(K, 00000001 | label | 00 | k).
      const std::size_t bytes = role == Role::Encryption || shape_.combined == KrbEnctype::Aes128Sha256 ? krb_key_bytes(shape_.combined) : 24;
      if (key_state_.empty()) key_state_ = detail::krb_hmac_key_state(gates_, shape_.combined, key_);
      std::vector<std::uint8_t> message = {0, 0, 0, 1};
      message.insert(message.end(), label.begin(), label.end());
      message.push_back(0);
      const auto bits = static_cast<std::uint32_t>(bytes * 8);
      for (int shift = 24; shift >= 0; shift -= 8) message.push_back(static_cast<std::uint8_t>(bits >> shift));
      return detail::krb_hmac(gates_, shape_.combined, key_state_, constant_bits(gates_, message), bytes);
    }
    // DK(K, label) = DR(K, label): E_K(n-fold(label)), E_K(that), ... truncated to the key size.
    const AesKeySize size = krb_aes_size(shape_.combined);
    if (round_keys_.empty()) round_keys_ = detail::expand_aes_key(gates_.builder(), size, sbox_, key_);
    KrbBits block = constant_bits(gates_, n_fold(label, 16));
    KrbBits derived;
    while (derived.size() < key_.size()) {
      block = detail::aes_block(gates_, size, sbox_, AesDirection::Encrypt, round_keys_, block);
      derived.insert(derived.end(), block.begin(), block.end());
    }
    derived.resize(key_.size());
    return derived;
  }

 private:
  WordGates& gates_;
  const KrbCf2Shape& shape_;
  SboxVariant sbox_;
  KrbBits key_;
  KrbBits round_keys_;  // RFC 3962: K's key schedule
  KrbBits key_state_;   // RFC 8009: K's HMAC state
};

}  // namespace

std::size_t krb_cf2_prf_blocks(KrbEnctype protected_key, KrbEnctype combined) noexcept {
  const std::size_t prf = krb_enctype_prf_bytes(protected_key);
  return (krb_key_bytes(combined) + prf - 1) / prf;
}

std::size_t krb_cf2_prf_input_bytes(KrbEnctype protected_key, KrbEnctype combined, std::size_t pepper_bytes) noexcept {
  if (krb_is_sha2(protected_key)) return 1 + pepper_bytes;
  return 16 * krb_cf2_prf_blocks(protected_key, combined);
}

Circuit build_krb_cf2_circuit(const KrbCf2Shape& shape, CircuitCost cost) {
  const bool sha2_prf = krb_is_sha2(shape.protected_key);
  if (!sha2_prf && shape.prf_input_bytes != 16 * krb_cf2_prf_blocks(shape.protected_key, shape.combined))
    throw FormatError(Component::Circuit, "cf2 PRF inputs of " + std::to_string(shape.prf_input_bytes) +
                                              " bytes for an RFC 3962 key");
  if (sha2_prf && shape.prf_input_bytes == 0) throw FormatError(Component::Circuit, "cf2 PRF input missing");
  if (shape.use != KrbCf2Use::Checksum && shape.data_bytes < 16)
    throw FormatError(Component::Circuit,
                      "Kerberos AES message of " + std::to_string(shape.data_bytes) + " bytes (needs >= 16)");

  CircuitBuilder builder;
  WordGates gates(builder, detail::adder_for(cost));
  const SboxVariant sbox = sbox_for(cost);
  const KrbBits material = builder.add_input_group(static_cast<std::uint32_t>(
      sha2_prf ? krb_enctype_state_bits(shape.protected_key) : aes_round_key_bits(krb_aes_size(shape.protected_key))));
  const KrbBits prf_inputs = builder.add_input_group(krb_checked_width(shape.prf_input_bytes));
  const KrbBits mask = builder.add_input_group(krb_checked_width(krb_key_bytes(shape.combined)));
  const KrbBits data = shape.data_bytes == 0 ? KrbBits{} : builder.add_input_group(krb_checked_width(shape.data_bytes));
  const KrbBits received_mac = shape.use == KrbCf2Use::Decrypt
                                   ? builder.add_input_group(krb_checked_width(krb_enctype_mac_bytes(shape.combined)))
                                   : KrbBits{};

  KrbBits key = protected_prf_plus(gates, shape, sbox, material, prf_inputs);
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = gates.xor_(key[i], mask[i]);
  Derivation derivation(gates, shape, sbox, std::move(key));

  if (shape.use == KrbCf2Use::Checksum) {
    const KrbBits state = detail::krb_hmac_key_state(gates, shape.combined, derivation.derive(Role::Checksum));
    return builder.finish({detail::krb_checksum_output(gates, shape.combined, state, data)});
  }
  const KrbBits round_keys =
      detail::expand_aes_key(builder, krb_aes_size(shape.combined), sbox, derivation.derive(Role::Encryption));
  const KrbBits state = detail::krb_hmac_key_state(gates, shape.combined, derivation.derive(Role::Integrity));
  if (shape.use == KrbCf2Use::Encrypt)
    return builder.finish(detail::krb_encrypt_outputs(gates, shape.combined, sbox, round_keys, state, data));
  return builder.finish(
      detail::krb_decrypt_outputs(gates, shape.combined, sbox, round_keys, state, data, received_mac));
}

}  // namespace mpc::circuits
