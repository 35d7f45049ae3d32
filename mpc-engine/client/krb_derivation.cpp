// mpc-engine/client/krb_derivation.cpp: RFC 3961/3962 key derivation and HMAC-SHA1 states.
#include "client/krb_derivation.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <string>

#include "circuits/aes_reference.hpp"
#include "circuits/sha1_reference.hpp"
#include "common/error.hpp"

namespace mpc::client {
namespace {

constexpr std::size_t kNFoldRotationBits = 13;
constexpr std::uint8_t kHmacInnerPad = 0x36;
constexpr std::uint8_t kHmacOuterPad = 0x5c;

// Adds `chunk` to `sum` (equal lengths, big-endian) with one's-complement (end-around carry)
// addition.
void ones_complement_add(std::vector<std::uint8_t>& sum, std::span<const std::uint8_t> chunk) {
  unsigned carry = 0;
  for (std::size_t i = sum.size(); i-- > 0;) {
    const unsigned total = sum[i] + chunk[i] + carry;
    sum[i] = static_cast<std::uint8_t>(total);
    carry = total >> 8;
  }
  while (carry != 0) {
    for (std::size_t i = sum.size(); i-- > 0 && carry != 0;) {
      const unsigned total = sum[i] + carry;
      sum[i] = static_cast<std::uint8_t>(total);
      carry = total >> 8;
    }
  }
}

// The SHA-1 chaining value after one block of (key || zeros) ^ pad, as 20 big-endian bytes.
std::array<std::uint8_t, circuits::kSha1StateBytes> padded_key_state(std::span<const std::uint8_t> key,
                                                                      std::uint8_t pad) {
  std::array<std::uint8_t, circuits::kSha1BlockBytes> block;
  block.fill(pad);
  for (std::size_t i = 0; i < key.size(); ++i) block[i] = static_cast<std::uint8_t>(key[i] ^ pad);
  circuits::Sha1State state = circuits::sha1_initial_state();
  circuits::sha1_compress(state, block);
  const auto bytes = circuits::sha1_state_bytes(state);
  wipe(block.data(), block.size());
  wipe(state.data(), state.size() * sizeof(state[0]));
  return bytes;
}

}  // namespace

std::vector<std::uint8_t> n_fold(std::span<const std::uint8_t> input, std::size_t output_bytes) {
  if (input.empty() || output_bytes == 0) throw Error(Component::Client, "n-fold needs a non-empty input and output");
  const std::size_t input_bits = input.size() * 8;
  const std::size_t total_bytes = std::lcm(input.size(), output_bytes);
  // Repetition j is the input rotated right by 13 * j bits: output bit p of it is input bit
  // (p - 13 j) mod input_bits, bits numbered from the most significant bit of byte 0.
  std::vector<std::uint8_t> repeated(total_bytes, 0);
  for (std::size_t j = 0; j < total_bytes / input.size(); ++j) {
    const std::size_t rotation = (kNFoldRotationBits * j) % input_bits;
    for (std::size_t p = 0; p < input_bits; ++p) {
      const std::size_t source = (p + input_bits - rotation) % input_bits;
      const unsigned bit = (input[source / 8] >> (7 - source % 8)) & 1u;
      repeated[j * input.size() + p / 8] |= static_cast<std::uint8_t>(bit << (7 - p % 8));
    }
  }
  std::vector<std::uint8_t> out(output_bytes, 0);
  for (std::size_t offset = 0; offset < total_bytes; offset += output_bytes)
    ones_complement_add(out, std::span<const std::uint8_t>(repeated).subspan(offset, output_bytes));
  return out;
}

std::vector<std::uint8_t> krb_usage_constant(std::uint32_t usage, KrbKeyRole role) {
  return {static_cast<std::uint8_t>(usage >> 24), static_cast<std::uint8_t>(usage >> 16),
          static_cast<std::uint8_t>(usage >> 8), static_cast<std::uint8_t>(usage), static_cast<std::uint8_t>(role)};
}

std::vector<std::uint8_t> krb_prf_constant() { return {'p', 'r', 'f'}; }

SecretBytes krb_derive_key(std::span<const std::uint8_t> protocol_key, std::span<const std::uint8_t> constant) {
  if (protocol_key.size() != 16 && protocol_key.size() != 32)
    throw Error(Component::Client, "AES Kerberos keys are 16 or 32 bytes, got " + std::to_string(protocol_key.size()));
  if (constant.empty()) throw Error(Component::Client, "empty key derivation constant");
  // DR: E(key, n-fold(constant)), then E(key, previous block), ... truncated to the key size.
  // E is CBC with a zero IV over a single block: one AES block encryption.
  const std::vector<std::uint8_t> folded = n_fold(constant, circuits::kAesBlockBytes);
  std::vector<std::uint8_t> round_keys = circuits::aes_expand_key(protocol_key);
  std::array<std::uint8_t, circuits::kAesBlockBytes> block{};
  std::copy(folded.begin(), folded.end(), block.begin());
  SecretBytes derived(protocol_key.size());
  for (std::size_t produced = 0; produced < derived.size(); produced += block.size()) {
    block = circuits::aes_encrypt_block(round_keys, block);
    std::copy_n(block.begin(), std::min(block.size(), derived.size() - produced), derived.data() + produced);
  }
  wipe(block.data(), block.size());
  wipe(round_keys.data(), round_keys.size());
  // random-to-key is the identity for the AES enctypes.
  return derived;
}

SecretBytes hmac_sha1_state(std::span<const std::uint8_t> key) {
  if (key.size() > circuits::kSha1BlockBytes)
    throw Error(Component::Client, "HMAC-SHA1 keys longer than 64 bytes are not supported");
  SecretBytes state(2 * circuits::kSha1StateBytes);
  auto inner = padded_key_state(key, kHmacInnerPad);
  auto outer = padded_key_state(key, kHmacOuterPad);
  std::copy(inner.begin(), inner.end(), state.data());
  std::copy(outer.begin(), outer.end(), state.data() + circuits::kSha1StateBytes);
  wipe(inner.data(), inner.size());
  wipe(outer.data(), outer.size());
  return state;
}

}  // namespace mpc::client
