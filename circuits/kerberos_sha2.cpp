// The RFC 8009 enctypes as circuits: CBC-CTS under Ke (cbc_cts.cpp) and HMAC-SHA256 or
// HMAC-SHA384 (RFC 2104, FIPS 180-4) from precomputed inner/outer chaining values (sha2.cpp).
#include "circuits/kerberos_sha2.hpp"

#include <string>
#include <vector>

#include "circuits/aes.hpp"
#include "circuits/builder.hpp"
#include "circuits/kerberos_parts.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

using detail::adder_for;
using detail::append_constant_byte;
using detail::krb_checked_width;
using detail::WordGates;
using Bits = std::vector<std::uint32_t>;

constexpr std::size_t kBlockBytes = 16;

KrbEnctype enctype_of(AesKeySize size) {
  return size == AesKeySize::Aes128 ? KrbEnctype::Aes128Sha256 : KrbEnctype::Aes256Sha384;
}

KrbEnctype enctype_of(KrbSha2Hash hash) {
  return hash == KrbSha2Hash::Sha256 ? KrbEnctype::Aes128Sha256 : KrbEnctype::Aes256Sha384;
}

void check_message_bytes(std::size_t bytes) {
  if (bytes < kBlockBytes) {
    throw FormatError(Component::Circuit, "Kerberos AES message of " + std::to_string(bytes) + " bytes (needs >= 16)");
  }
}

}  // namespace

KrbSha2Hash krb_sha2_hash_for(AesKeySize size) noexcept {
  return size == AesKeySize::Aes128 ? KrbSha2Hash::Sha256 : KrbSha2Hash::Sha384;
}

std::size_t krb_sha2_mac_bytes(KrbSha2Hash hash) noexcept { return hash == KrbSha2Hash::Sha256 ? 16 : 24; }

std::uint32_t krb_sha2_hmac_state_bits(KrbSha2Hash hash) noexcept {
  return hash == KrbSha2Hash::Sha256 ? kKrbSha256StateBits : kKrbSha384StateBits;
}

Circuit build_krb_sha2_encrypt_circuit(AesKeySize size, std::size_t message_bytes, CircuitCost cost) {
  check_message_bytes(message_bytes);
  const KrbSha2Hash hash = krb_sha2_hash_for(size);
  CircuitBuilder builder;
  WordGates gates(builder, adder_for(cost));
  const Bits round_keys = builder.add_input_group(aes_round_key_bits(size));
  const Bits state = builder.add_input_group(krb_sha2_hmac_state_bits(hash));
  const Bits message = builder.add_input_group(krb_checked_width(message_bytes));
  return builder.finish(detail::krb_encrypt_outputs(gates, enctype_of(size), sbox_for(cost), round_keys, state, message));
}

Circuit build_krb_sha2_decrypt_circuit(AesKeySize size, std::size_t ciphertext_bytes, CircuitCost cost) {
  check_message_bytes(ciphertext_bytes);
  const KrbSha2Hash hash = krb_sha2_hash_for(size);
  CircuitBuilder builder;
  WordGates gates(builder, adder_for(cost));
  const Bits round_keys = builder.add_input_group(aes_round_key_bits(size));
  const Bits state = builder.add_input_group(krb_sha2_hmac_state_bits(hash));
  const Bits ciphertext = builder.add_input_group(krb_checked_width(ciphertext_bytes));
  const Bits received_mac = builder.add_input_group(static_cast<std::uint32_t>(krb_sha2_mac_bytes(hash) * 8));
  return builder.finish(
      detail::krb_decrypt_outputs(gates, enctype_of(size), sbox_for(cost), round_keys, state, ciphertext, received_mac));
}

Circuit build_krb_sha2_checksum_circuit(KrbSha2Hash hash, std::size_t message_bytes, CircuitCost cost) {
  CircuitBuilder builder;
  WordGates gates(builder, adder_for(cost));
  const Bits state = builder.add_input_group(krb_sha2_hmac_state_bits(hash));
  const Bits message = message_bytes == 0 ? Bits{} : builder.add_input_group(krb_checked_width(message_bytes));
  return builder.finish({detail::krb_checksum_output(gates, enctype_of(hash), state, message)});
}

std::size_t krb_sha2_prf_bytes(KrbSha2Hash hash) noexcept { return hash == KrbSha2Hash::Sha256 ? 32 : 48; }

std::vector<std::uint32_t> detail::krb_sha2_prf_message(const WordGates& gates, KrbSha2Hash hash,
                                                        std::span<const std::uint32_t> input) {
  Bits message;
  constexpr std::uint8_t kPrefix[] = {0, 0, 0, 1, 'p', 'r', 'f', 0};  // counter 1 | label | 00
  for (std::uint8_t byte : kPrefix) append_constant_byte(gates, byte, message);
  message.insert(message.end(), input.begin(), input.end());
  const std::uint32_t k = static_cast<std::uint32_t>(krb_sha2_prf_bytes(hash) * 8);
  for (int shift = 24; shift >= 0; shift -= 8) append_constant_byte(gates, static_cast<std::uint8_t>(k >> shift), message);
  return message;
}

Circuit build_krb_sha2_prf_circuit(KrbSha2Hash hash, std::size_t input_bytes, CircuitCost cost) {
  CircuitBuilder builder;
  WordGates gates(builder, adder_for(cost));
  const Bits state = builder.add_input_group(krb_sha2_hmac_state_bits(hash));
  const Bits input = input_bytes == 0 ? Bits{} : builder.add_input_group(krb_checked_width(input_bytes));
  const Bits message = detail::krb_sha2_prf_message(gates, hash, input);
  return builder.finish({detail::krb_hmac(gates, enctype_of(hash), state, message, krb_sha2_prf_bytes(hash))});
}

}  // namespace mpc::circuits
