// The RFC 3962 enctypes (aes128/aes256-cts-hmac-sha1-96) as circuits: CBC-CTS under Ke
// (cbc_cts.cpp) beside HMAC-SHA1 (RFC 2104) from precomputed inner/outer chaining values
// (sha1.cpp). The two jobs are independent in encryption, so the circuit's AND-depth is the
// longer of the two chains; in decryption the HMAC reads the decrypted plaintext, and the
// plaintext leaves the circuit only ANDed with the MAC verdict.
#include "circuits/kerberos.hpp"

#include <span>
#include <string>
#include <vector>

#include "circuits/adder.hpp"
#include "circuits/aes.hpp"
#include "circuits/builder.hpp"
#include "circuits/cbc_cts.hpp"
#include "circuits/equality.hpp"
#include "circuits/sha1.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

using detail::adder_for;
using detail::WordGates;
using Bits = std::vector<std::uint32_t>;

constexpr std::size_t kHmacBlockBytes = 64;  // the key ^ pad block hashed before the message
constexpr std::size_t kSha1DigestBytes = 20;

std::uint32_t checked_width(std::size_t bytes) {
  if (bytes > (std::size_t{1} << 28)) throw FormatError(Component::Circuit, "message too long for a circuit");
  return static_cast<std::uint32_t>(bytes * 8);
}

void append_constant_byte(const WordGates& gates, std::uint8_t value, Bits& bits) {
  for (unsigned bit = 0; bit < 8; ++bit) bits.push_back(((value >> bit) & 1U) != 0 ? gates.one() : gates.zero());
}

// SHA-1 from `state` over data || padding, where `prefix_bytes` bytes were hashed before
// (they count in the length field).
detail::Sha1Words sha1_continue(WordGates& gates, detail::Sha1Words state, const Bits& data_bits,
                                std::size_t prefix_bytes) {
  Bits padded = data_bits;
  append_constant_byte(gates, 0x80, padded);
  while ((padded.size() / 8) % kHmacBlockBytes != kHmacBlockBytes - 8) append_constant_byte(gates, 0, padded);
  const std::uint64_t length_bits = (prefix_bytes + data_bits.size() / 8) * 8;
  for (int shift = 56; shift >= 0; shift -= 8) append_constant_byte(gates, static_cast<std::uint8_t>(length_bits >> shift), padded);
  const std::span<const std::uint32_t> all(padded);
  for (std::size_t offset = 0; offset < padded.size(); offset += kSha1BlockBits) {
    state = detail::sha1_compress(gates, state, detail::sha1_block_from_bits(all.subspan(offset, kSha1BlockBits)));
  }
  return state;
}

// The first 96 bits of HMAC-SHA1 of `message_bits` from the 320-bit state group.
Bits hmac_sha1_96(WordGates& gates, std::span<const std::uint32_t> state_bits, const Bits& message_bits) {
  const auto inner_state = detail::sha1_words_from_bits(state_bits.first(kSha1StateBits));
  const auto outer_state = detail::sha1_words_from_bits(state_bits.subspan(kSha1StateBits, kSha1StateBits));
  const detail::Sha1Words inner = sha1_continue(gates, inner_state, message_bits, kHmacBlockBytes);
  const detail::Sha1Words outer = sha1_continue(gates, outer_state, detail::bits_from_sha1_words(inner), kHmacBlockBytes);
  Bits mac = detail::bits_from_sha1_words(outer);
  mac.resize(kKrbMacBytes * 8);
  return mac;
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
  const Bits message = builder.add_input_group(checked_width(message_bytes));
  Bits ciphertext = detail::cbc_cts_encrypt(gates, size, sbox_for(cost), round_keys, message);
  Bits mac = hmac_sha1_96(gates, state, message);
  return builder.finish({std::move(ciphertext), std::move(mac)});
}

Circuit build_krb_decrypt_circuit(AesKeySize size, std::size_t ciphertext_bytes, CircuitCost cost) {
  check_message_bytes(ciphertext_bytes);
  CircuitBuilder builder;
  WordGates gates(builder, adder_for(cost));
  const Bits round_keys = builder.add_input_group(aes_round_key_bits(size));
  const Bits state = builder.add_input_group(kKrbHmacStateBits);
  const Bits ciphertext = builder.add_input_group(checked_width(ciphertext_bytes));
  const Bits received_mac = builder.add_input_group(kKrbMacBytes * 8);
  const Bits plaintext = detail::cbc_cts_decrypt(gates, size, sbox_for(cost), round_keys, ciphertext);
  const Bits mac = hmac_sha1_96(gates, state, plaintext);
  const std::uint32_t verdict = detail::equal_bits(builder, mac, received_mac);
  Bits released;
  released.reserve(plaintext.size());
  for (std::uint32_t wire : plaintext) released.push_back(builder.and_(wire, verdict));
  return builder.finish({std::move(released), {verdict}});
}

Circuit build_krb_checksum_circuit(std::size_t message_bytes, CircuitCost cost) {
  CircuitBuilder builder;
  WordGates gates(builder, adder_for(cost));
  const Bits state = builder.add_input_group(kKrbHmacStateBits);
  const Bits message = message_bytes == 0 ? Bits{} : builder.add_input_group(checked_width(message_bytes));
  return builder.finish({hmac_sha1_96(gates, state, message)});
}

}  // namespace mpc::circuits
