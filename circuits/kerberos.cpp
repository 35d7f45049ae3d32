// The RFC 3962 enctypes (aes128/aes256-cts-hmac-sha1-96) as circuits: CBC-CTS under Ke
// (cbc_cts.cpp) beside HMAC-SHA1 (RFC 2104) from precomputed inner/outer chaining values
// (sha1.cpp). The two jobs are independent in encryption, so the circuit's AND-depth is the
// longer of the two chains; in decryption the HMAC reads the decrypted plaintext, and the
// plaintext leaves the circuit only ANDed with the MAC verdict.
#include "circuits/kerberos.hpp"

#include <string>
#include <vector>

#include "circuits/aes.hpp"
#include "circuits/builder.hpp"
#include "circuits/kerberos_parts.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

using detail::adder_for;
using detail::krb_checked_width;
using detail::WordGates;
using Bits = std::vector<std::uint32_t>;

KrbEnctype enctype_of(AesKeySize size) {
  return size == AesKeySize::Aes128 ? KrbEnctype::Aes128Sha1 : KrbEnctype::Aes256Sha1;
}

void check_message_bytes(std::size_t bytes) {
  if (bytes < kKrbBlockBytes) {
    throw FormatError(Component::Circuit, "Kerberos AES message of " + std::to_string(bytes) + " bytes (needs >= 16)");
  }
}

}  // namespace

Circuit build_krb_encrypt_circuit(AesKeySize size, std::size_t message_bytes, CircuitCost cost) {
  check_message_bytes(message_bytes);
  CircuitBuilder builder;
  WordGates gates(builder, adder_for(cost));
  const Bits round_keys = builder.add_input_group(aes_round_key_bits(size));
  const Bits state = builder.add_input_group(kKrbHmacStateBits);
  const Bits message = builder.add_input_group(krb_checked_width(message_bytes));
  return builder.finish(detail::krb_encrypt_outputs(gates, enctype_of(size), sbox_for(cost), round_keys, state, message));
}

Circuit build_krb_decrypt_circuit(AesKeySize size, std::size_t ciphertext_bytes, CircuitCost cost) {
  check_message_bytes(ciphertext_bytes);
  CircuitBuilder builder;
  WordGates gates(builder, adder_for(cost));
  const Bits round_keys = builder.add_input_group(aes_round_key_bits(size));
  const Bits state = builder.add_input_group(kKrbHmacStateBits);
  const Bits ciphertext = builder.add_input_group(krb_checked_width(ciphertext_bytes));
  const Bits received_mac = builder.add_input_group(kKrbMacBytes * 8);
  return builder.finish(
      detail::krb_decrypt_outputs(gates, enctype_of(size), sbox_for(cost), round_keys, state, ciphertext, received_mac));
}

Circuit build_krb_checksum_circuit(std::size_t message_bytes, CircuitCost cost) {
  CircuitBuilder builder;
  WordGates gates(builder, adder_for(cost));
  const Bits state = builder.add_input_group(kKrbHmacStateBits);
  const Bits message = message_bytes == 0 ? Bits{} : builder.add_input_group(krb_checked_width(message_bytes));
  // Both RFC 3962 enctypes MAC with HMAC-SHA1-96.
  return builder.finish({detail::krb_checksum_output(gates, KrbEnctype::Aes128Sha1, state, message)});
}

}  // namespace mpc::circuits
