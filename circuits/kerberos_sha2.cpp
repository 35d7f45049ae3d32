// The RFC 8009 enctypes as circuits: CBC-CTS under Ke (cbc_cts.cpp) and HMAC-SHA256 or
// HMAC-SHA384 (RFC 2104, FIPS 180-4) from precomputed inner/outer chaining values (sha2.cpp).
#include "circuits/kerberos_sha2.hpp"

#include <span>
#include <string>
#include <vector>

#include "circuits/adder.hpp"
#include "circuits/aes.hpp"
#include "circuits/builder.hpp"
#include "circuits/cbc_cts.hpp"
#include "circuits/equality.hpp"
#include "circuits/sha2.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

using detail::adder_for;
using detail::WordGates;
using Bits = std::vector<std::uint32_t>;

constexpr std::size_t kBlockBytes = 16;

std::uint32_t checked_width(std::size_t bytes) {
  if (bytes > (std::size_t{1} << 28)) throw FormatError(Component::Circuit, "message too long for a circuit");
  return static_cast<std::uint32_t>(bytes * 8);
}

void append_constant_byte(const WordGates& gates, std::uint8_t value, Bits& bits) {
  for (unsigned bit = 0; bit < 8; ++bit) bits.push_back(((value >> bit) & 1U) != 0 ? gates.one() : gates.zero());
}

// What differs between the two hashes.
struct Sha256Hash {
  using Words = detail::Sha256Words;
  static constexpr std::size_t kBlockBytes = 64;
  static constexpr std::size_t kLengthBytes = 8;
  static constexpr std::size_t kDigestBytes = 32;
  static Words words(std::span<const std::uint32_t> bits) { return detail::sha256_words_from_bits(bits); }
  static Words compress(WordGates& gates, const Words& state, std::span<const std::uint32_t> block) {
    return detail::sha256_compress(gates, state, detail::sha256_block_from_bits(block));
  }
};

struct Sha384Hash {
  using Words = detail::Sha512Words;
  static constexpr std::size_t kBlockBytes = 128;
  static constexpr std::size_t kLengthBytes = 16;
  static constexpr std::size_t kDigestBytes = 48;  // SHA-384 truncates the SHA-512 state
  static Words words(std::span<const std::uint32_t> bits) { return detail::sha512_words_from_bits(bits); }
  static Words compress(WordGates& gates, const Words& state, std::span<const std::uint32_t> block) {
    return detail::sha512_compress(gates, state, detail::sha512_block_from_bits(block));
  }
};

// The digest (kDigestBytes) of data || padding from `state`, where one block was hashed
// before (the key ^ pad block; it counts in the length field).
template <typename Hash>
Bits hash_continue(WordGates& gates, typename Hash::Words state, const Bits& data_bits) {
  Bits padded = data_bits;
  append_constant_byte(gates, 0x80, padded);
  while ((padded.size() / 8) % Hash::kBlockBytes != Hash::kBlockBytes - Hash::kLengthBytes) {
    append_constant_byte(gates, 0, padded);
  }
  const std::uint64_t length_bits = (Hash::kBlockBytes + data_bits.size() / 8) * 8;
  for (std::size_t byte = Hash::kLengthBytes; byte-- > 0;) {
    append_constant_byte(gates, byte >= 8 ? 0 : static_cast<std::uint8_t>(length_bits >> (8 * byte)), padded);
  }
  const std::span<const std::uint32_t> all(padded);
  for (std::size_t offset = 0; offset < padded.size(); offset += Hash::kBlockBytes * 8) {
    state = Hash::compress(gates, state, all.subspan(offset, Hash::kBlockBytes * 8));
  }
  Bits digest = detail::bits_from_sha2_words(state);
  digest.resize(Hash::kDigestBytes * 8);
  return digest;
}

template <typename Hash>
Bits hmac_with(WordGates& gates, std::span<const std::uint32_t> state_bits, const Bits& message_bits,
               std::size_t mac_bytes) {
  const std::size_t half = state_bits.size() / 2;
  const Bits inner = hash_continue<Hash>(gates, Hash::words(state_bits.first(half)), message_bits);
  Bits mac = hash_continue<Hash>(gates, Hash::words(state_bits.subspan(half, half)), inner);
  mac.resize(mac_bytes * 8);
  return mac;
}

// The untruncated HMAC of `message_bits` from the state group.
Bits full_hmac(WordGates& gates, KrbSha2Hash hash, std::span<const std::uint32_t> state_bits,
               const Bits& message_bits) {
  if (hash == KrbSha2Hash::Sha256) return hmac_with<Sha256Hash>(gates, state_bits, message_bits, Sha256Hash::kDigestBytes);
  return hmac_with<Sha384Hash>(gates, state_bits, message_bits, Sha384Hash::kDigestBytes);
}

// The truncated HMAC of `message_bits` from the state group.
Bits truncated_hmac(WordGates& gates, KrbSha2Hash hash, std::span<const std::uint32_t> state_bits,
                    const Bits& message_bits) {
  const std::size_t mac_bytes = krb_sha2_mac_bytes(hash);
  if (hash == KrbSha2Hash::Sha256) return hmac_with<Sha256Hash>(gates, state_bits, message_bits, mac_bytes);
  return hmac_with<Sha384Hash>(gates, state_bits, message_bits, mac_bytes);
}

// 16 zero bytes (the initial cipher state) || ciphertext: what the RFC 8009 MAC covers.
Bits mac_input(const WordGates& gates, const Bits& ciphertext) {
  Bits out(kBlockBytes * 8, gates.zero());
  out.insert(out.end(), ciphertext.begin(), ciphertext.end());
  return out;
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
  const Bits message = builder.add_input_group(checked_width(message_bytes));
  Bits ciphertext = detail::cbc_cts_encrypt(gates, size, sbox_for(cost), round_keys, message);
  Bits mac = truncated_hmac(gates, hash, state, mac_input(gates, ciphertext));
  return builder.finish({std::move(ciphertext), std::move(mac)});
}

Circuit build_krb_sha2_decrypt_circuit(AesKeySize size, std::size_t ciphertext_bytes, CircuitCost cost) {
  check_message_bytes(ciphertext_bytes);
  const KrbSha2Hash hash = krb_sha2_hash_for(size);
  CircuitBuilder builder;
  WordGates gates(builder, adder_for(cost));
  const Bits round_keys = builder.add_input_group(aes_round_key_bits(size));
  const Bits state = builder.add_input_group(krb_sha2_hmac_state_bits(hash));
  const Bits ciphertext = builder.add_input_group(checked_width(ciphertext_bytes));
  const Bits received_mac = builder.add_input_group(static_cast<std::uint32_t>(krb_sha2_mac_bytes(hash) * 8));
  const Bits plaintext = detail::cbc_cts_decrypt(gates, size, sbox_for(cost), round_keys, ciphertext);
  const Bits mac = truncated_hmac(gates, hash, state, mac_input(gates, ciphertext));
  const std::uint32_t verdict = detail::equal_bits(builder, mac, received_mac);
  Bits released;
  released.reserve(plaintext.size());
  for (std::uint32_t wire : plaintext) released.push_back(builder.and_(wire, verdict));
  return builder.finish({std::move(released), {verdict}});
}

Circuit build_krb_sha2_checksum_circuit(KrbSha2Hash hash, std::size_t message_bytes, CircuitCost cost) {
  CircuitBuilder builder;
  WordGates gates(builder, adder_for(cost));
  const Bits state = builder.add_input_group(krb_sha2_hmac_state_bits(hash));
  const Bits message = message_bytes == 0 ? Bits{} : builder.add_input_group(checked_width(message_bytes));
  return builder.finish({truncated_hmac(gates, hash, state, message)});
}

std::size_t krb_sha2_prf_bytes(KrbSha2Hash hash) noexcept { return hash == KrbSha2Hash::Sha256 ? 32 : 48; }

Circuit build_krb_sha2_prf_circuit(KrbSha2Hash hash, std::size_t input_bytes, CircuitCost cost) {
  CircuitBuilder builder;
  WordGates gates(builder, adder_for(cost));
  const Bits state = builder.add_input_group(krb_sha2_hmac_state_bits(hash));
  const Bits input = input_bytes == 0 ? Bits{} : builder.add_input_group(checked_width(input_bytes));
  Bits message;
  constexpr std::uint8_t kPrefix[] = {0, 0, 0, 1, 'p', 'r', 'f', 0};  // counter 1 | label | 00
  for (std::uint8_t byte : kPrefix) append_constant_byte(gates, byte, message);
  message.insert(message.end(), input.begin(), input.end());
  const std::uint32_t k = static_cast<std::uint32_t>(krb_sha2_prf_bytes(hash) * 8);
  for (int shift = 24; shift >= 0; shift -= 8) append_constant_byte(gates, static_cast<std::uint8_t>(k >> shift), message);
  return builder.finish({full_hmac(gates, hash, state, message)});
}

}  // namespace mpc::circuits
