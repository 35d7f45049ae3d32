// HMAC (RFC 2104) over SHA-1, SHA-256 and SHA-384 from state groups, CBC-CTS with the MAC of
// each enctype, and HMAC states of keys on wires: the shared pieces of the Kerberos circuits.
#include "circuits/kerberos_parts.hpp"

#include <string>
#include <type_traits>

#include "circuits/aes.hpp"
#include "circuits/builder.hpp"
#include "circuits/cbc_cts.hpp"
#include "circuits/equality.hpp"
#include "circuits/sha1.hpp"
#include "circuits/sha1_reference.hpp"
#include "circuits/sha2.hpp"
#include "circuits/sha2_reference.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

using detail::KrbBits;
using detail::WordGates;

constexpr std::uint8_t kInnerPad = 0x36;
constexpr std::uint8_t kOuterPad = 0x5c;
constexpr std::size_t kBlockBytes = 16;

// What differs between the three hashes.
struct Sha1Hash {
  using Words = detail::Sha1Words;
  static constexpr std::size_t kBlockBytes = 64;
  static constexpr std::size_t kLengthBytes = 8;
  static Words words(std::span<const std::uint32_t> bits) { return detail::sha1_words_from_bits(bits); }
  static KrbBits bits(const Words& words) { return detail::bits_from_sha1_words(words); }
  static Words compress(WordGates& gates, const Words& state, std::span<const std::uint32_t> block) {
    return detail::sha1_compress(gates, state, detail::sha1_block_from_bits(block));
  }
  static Words initial(const WordGates& gates) {
    const Sha1State value = sha1_initial_state();
    Words words;
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = gates.constant(value[i]);
    return words;
  }
};

struct Sha256Hash {
  using Words = detail::Sha256Words;
  static constexpr std::size_t kBlockBytes = 64;
  static constexpr std::size_t kLengthBytes = 8;
  static Words words(std::span<const std::uint32_t> bits) { return detail::sha256_words_from_bits(bits); }
  static KrbBits bits(const Words& words) { return detail::bits_from_sha2_words(words); }
  static Words compress(WordGates& gates, const Words& state, std::span<const std::uint32_t> block) {
    return detail::sha256_compress(gates, state, detail::sha256_block_from_bits(block));
  }
  static Words initial(const WordGates& gates) {
    const Sha256State value = sha256_initial_state();
    Words words;
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = gates.constant(value[i]);
    return words;
  }
};

struct Sha384Hash {
  using Words = detail::Sha512Words;
  static constexpr std::size_t kBlockBytes = 128;
  static constexpr std::size_t kLengthBytes = 16;
  static Words words(std::span<const std::uint32_t> bits) { return detail::sha512_words_from_bits(bits); }
  static KrbBits bits(const Words& words) { return detail::bits_from_sha2_words(words); }
  static Words compress(WordGates& gates, const Words& state, std::span<const std::uint32_t> block) {
    return detail::sha512_compress(gates, state, detail::sha512_block_from_bits(block));
  }
  static Words initial(const WordGates& gates) {
    const Sha512State value = sha384_initial_state();
    Words words;
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = gates.constant64(value[i]);
    return words;
  }
};

// The chaining value after data || padding from `state`, where one block (the key ^ pad
// block) was hashed before: it counts in the length field.
template <typename Hash>
typename Hash::Words hash_continue(WordGates& gates, typename Hash::Words state, const KrbBits& data_bits) {
  KrbBits padded = data_bits;
  detail::append_constant_byte(gates, 0x80, padded);
  while ((padded.size() / 8) % Hash::kBlockBytes != Hash::kBlockBytes - Hash::kLengthBytes)
    detail::append_constant_byte(gates, 0, padded);
  const std::uint64_t length_bits = (Hash::kBlockBytes + data_bits.size() / 8) * 8;
  for (std::size_t byte = Hash::kLengthBytes; byte-- > 0;)
    detail::append_constant_byte(gates, byte >= 8 ? 0 : static_cast<std::uint8_t>(length_bits >> (8 * byte)), padded);
  const std::span<const std::uint32_t> all(padded);
  for (std::size_t offset = 0; offset < padded.size(); offset += Hash::kBlockBytes * 8)
    state = Hash::compress(gates, state, all.subspan(offset, Hash::kBlockBytes * 8));
  return state;
}

template <typename Hash>
KrbBits hmac_with(WordGates& gates, std::span<const std::uint32_t> state_bits, const KrbBits& message_bits,
                  std::size_t out_bytes) {
  const std::size_t half = state_bits.size() / 2;
  const KrbBits inner = Hash::bits(hash_continue<Hash>(gates, Hash::words(state_bits.first(half)), message_bits));
  // SHA-384's digest is the first 48 bytes of its SHA-512-sized chaining value.
  const std::size_t digest_bits = std::is_same_v<Hash, Sha384Hash> ? 48 * 8 : inner.size();
  const KrbBits inner_digest(inner.begin(), inner.begin() + static_cast<std::ptrdiff_t>(digest_bits));
  KrbBits mac = Hash::bits(hash_continue<Hash>(gates, Hash::words(state_bits.subspan(half, half)), inner_digest));
  if (out_bytes * 8 > digest_bits) throw FormatError(Component::Circuit, "HMAC output longer than the digest");
  mac.resize(out_bytes * 8);
  return mac;
}

template <typename Hash>
KrbBits key_state_with(WordGates& gates, const KrbBits& key_bits) {
  if (key_bits.size() > Hash::kBlockBytes * 8 || key_bits.size() % 8 != 0)
    throw FormatError(Component::Circuit, "HMAC key longer than a block");
  KrbBits state;
  for (std::uint8_t pad : {kInnerPad, kOuterPad}) {
    KrbBits block;
    block.reserve(Hash::kBlockBytes * 8);
    for (std::size_t i = 0; i < key_bits.size(); ++i)
      block.push_back(((pad >> (i % 8)) & 1U) != 0 ? gates.inv(key_bits[i]) : key_bits[i]);
    while (block.size() < Hash::kBlockBytes * 8) detail::append_constant_byte(gates, pad, block);
    const KrbBits chained = Hash::bits(Hash::compress(gates, Hash::initial(gates), block));
    state.insert(state.end(), chained.begin(), chained.end());
  }
  return state;
}

// 16 zero bytes (the initial cipher state) || ciphertext: what the RFC 8009 MAC covers.
KrbBits sha2_mac_input(const WordGates& gates, const KrbBits& ciphertext) {
  KrbBits out(kBlockBytes * 8, gates.zero());
  out.insert(out.end(), ciphertext.begin(), ciphertext.end());
  return out;
}

}  // namespace

AesKeySize krb_aes_size(KrbEnctype enctype) noexcept {
  return enctype == KrbEnctype::Aes128Sha1 || enctype == KrbEnctype::Aes128Sha256 ? AesKeySize::Aes128
                                                                                 : AesKeySize::Aes256;
}

bool krb_is_sha2(KrbEnctype enctype) noexcept {
  return enctype == KrbEnctype::Aes128Sha256 || enctype == KrbEnctype::Aes256Sha384;
}

std::size_t krb_key_bytes(KrbEnctype enctype) noexcept { return krb_aes_size(enctype) == AesKeySize::Aes128 ? 16 : 32; }

std::size_t krb_enctype_mac_bytes(KrbEnctype enctype) noexcept {
  switch (enctype) {
    case KrbEnctype::Aes128Sha256: return 16;
    case KrbEnctype::Aes256Sha384: return 24;
    default: return 12;
  }
}

std::size_t krb_enctype_state_bits(KrbEnctype enctype) noexcept {
  switch (enctype) {
    case KrbEnctype::Aes128Sha256: return kKrbSha256StateBits;
    case KrbEnctype::Aes256Sha384: return kKrbSha384StateBits;
    default: return 320;
  }
}

std::size_t krb_enctype_prf_bytes(KrbEnctype enctype) noexcept {
  switch (enctype) {
    case KrbEnctype::Aes128Sha256: return 32;
    case KrbEnctype::Aes256Sha384: return 48;
    default: return 16;
  }
}

namespace detail {

std::uint32_t krb_checked_width(std::size_t bytes) {
  if (bytes > (std::size_t{1} << 28)) throw FormatError(Component::Circuit, "message too long for a circuit");
  return static_cast<std::uint32_t>(bytes * 8);
}

void append_constant_byte(const WordGates& gates, std::uint8_t value, KrbBits& bits) {
  for (unsigned bit = 0; bit < 8; ++bit) bits.push_back(((value >> bit) & 1U) != 0 ? gates.one() : gates.zero());
}

KrbBits krb_hmac(WordGates& gates, KrbEnctype enctype, std::span<const std::uint32_t> state_bits,
                 const KrbBits& message_bits, std::size_t out_bytes) {
  if (state_bits.size() != krb_enctype_state_bits(enctype))
    throw FormatError(Component::Circuit, "HMAC state group of the wrong width");
  switch (enctype) {
    case KrbEnctype::Aes128Sha256: return hmac_with<Sha256Hash>(gates, state_bits, message_bits, out_bytes);
    case KrbEnctype::Aes256Sha384: return hmac_with<Sha384Hash>(gates, state_bits, message_bits, out_bytes);
    default: return hmac_with<Sha1Hash>(gates, state_bits, message_bits, out_bytes);
  }
}

KrbBits krb_hmac_key_state(WordGates& gates, KrbEnctype enctype, const KrbBits& key_bits) {
  switch (enctype) {
    case KrbEnctype::Aes128Sha256: return key_state_with<Sha256Hash>(gates, key_bits);
    case KrbEnctype::Aes256Sha384: return key_state_with<Sha384Hash>(gates, key_bits);
    default: return key_state_with<Sha1Hash>(gates, key_bits);
  }
}

std::vector<KrbBits> krb_encrypt_outputs(WordGates& gates, KrbEnctype enctype, SboxVariant sbox,
                                         std::span<const std::uint32_t> round_keys,
                                         std::span<const std::uint32_t> state, const KrbBits& message) {
  KrbBits ciphertext = cbc_cts_encrypt(gates, krb_aes_size(enctype), sbox, round_keys, message);
  const KrbBits& covered = krb_is_sha2(enctype) ? sha2_mac_input(gates, ciphertext) : message;
  KrbBits mac = krb_hmac(gates, enctype, state, covered, krb_enctype_mac_bytes(enctype));
  return {std::move(ciphertext), std::move(mac)};
}

std::vector<KrbBits> krb_decrypt_outputs(WordGates& gates, KrbEnctype enctype, SboxVariant sbox,
                                         std::span<const std::uint32_t> round_keys,
                                         std::span<const std::uint32_t> state, const KrbBits& ciphertext,
                                         const KrbBits& received_mac) {
  const KrbBits plaintext = cbc_cts_decrypt(gates, krb_aes_size(enctype), sbox, round_keys, ciphertext);
  // RFC 3962 MACs the plaintext; RFC 8009 the ciphertext, so its MAC runs beside the cipher.
  const KrbBits mac = krb_is_sha2(enctype)
                          ? krb_hmac(gates, enctype, state, sha2_mac_input(gates, ciphertext), krb_enctype_mac_bytes(enctype))
                          : krb_hmac(gates, enctype, state, plaintext, krb_enctype_mac_bytes(enctype));
  CircuitBuilder& builder = gates.builder();
  const std::uint32_t verdict = equal_bits(builder, mac, received_mac);
  KrbBits released;
  released.reserve(plaintext.size());
  for (std::uint32_t wire : plaintext) released.push_back(builder.and_(wire, verdict));
  return {std::move(released), {verdict}};
}

KrbBits krb_checksum_output(WordGates& gates, KrbEnctype enctype, std::span<const std::uint32_t> state,
                            const KrbBits& message) {
  return krb_hmac(gates, enctype, state, message, krb_enctype_mac_bytes(enctype));
}

}  // namespace detail
}  // namespace mpc::circuits
