// mpc-engine/client/krb_derivation.cpp: RFC 3961/3962 and RFC 8009 key derivation and HMAC
// states.
#include "client/krb_derivation.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <string>

#include "circuits/aes_reference.hpp"
#include "circuits/n_fold.hpp"
#include "circuits/sha1_reference.hpp"
#include "circuits/sha2_reference.hpp"
#include "common/error.hpp"

namespace mpc::client {
namespace {

constexpr std::uint8_t kHmacInnerPad = 0x36;
constexpr std::uint8_t kHmacOuterPad = 0x5c;

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

// The chaining value after one block of (key || zeros) ^ pad, big-endian.
template <std::size_t kBlock, typename State, typename Compress, typename Bytes>
auto padded_key_state_sha2(std::span<const std::uint8_t> key, std::uint8_t pad, State state, Compress compress,
                           Bytes to_bytes) {
  std::array<std::uint8_t, kBlock> block;
  block.fill(pad);
  for (std::size_t i = 0; i < key.size(); ++i) block[i] = static_cast<std::uint8_t>(key[i] ^ pad);
  compress(state, std::span<const std::uint8_t, kBlock>(block));
  auto bytes = to_bytes(state);
  wipe(block.data(), block.size());
  wipe(state.data(), state.size() * sizeof(state[0]));
  return bytes;
}

// Both HMAC chaining values of `key` for one SHA-2 hash into `out` (2 * state bytes).
template <std::size_t kBlock, typename Initial, typename Compress, typename Bytes>
SecretBytes hmac_state_with(std::span<const std::uint8_t> key, Initial initial, Compress compress, Bytes to_bytes) {
  if (key.size() > kBlock)
    throw Error(Component::Client, "HMAC keys longer than " + std::to_string(kBlock) + " bytes are not supported");
  auto inner = padded_key_state_sha2<kBlock>(key, kHmacInnerPad, initial(), compress, to_bytes);
  auto outer = padded_key_state_sha2<kBlock>(key, kHmacOuterPad, initial(), compress, to_bytes);
  SecretBytes state(inner.size() + outer.size());
  std::copy(inner.begin(), inner.end(), state.data());
  std::copy(outer.begin(), outer.end(), state.data() + inner.size());
  wipe(inner.data(), inner.size());
  wipe(outer.data(), outer.size());
  return state;
}

}  // namespace

std::vector<std::uint8_t> n_fold(std::span<const std::uint8_t> input, std::size_t output_bytes) {
  if (input.empty() || output_bytes == 0) throw Error(Component::Client, "n-fold needs a non-empty input and output");
  return circuits::n_fold(input, output_bytes);
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

SecretBytes krb_kdf_hmac_sha2(KrbSha2 hash, std::span<const std::uint8_t> key, std::span<const std::uint8_t> label,
                              std::size_t output_bytes) {
  const std::size_t digest_bytes = hash == KrbSha2::Sha256 ? 32 : 48;
  if (key.empty() || label.empty()) throw Error(Component::Client, "KDF-HMAC-SHA2 needs a key and a label");
  if (output_bytes == 0 || output_bytes > digest_bytes)
    throw Error(Component::Client, "KDF-HMAC-SHA2 output of " + std::to_string(output_bytes) + " bytes, not 1.." +
                                       std::to_string(digest_bytes));
  // 00000001 | label | 00 | k (bits, 4 bytes big-endian): SP 800-108 counter mode, one block.
  std::vector<std::uint8_t> message = {0, 0, 0, 1};
  message.insert(message.end(), label.begin(), label.end());
  message.push_back(0);
  const auto bits = static_cast<std::uint32_t>(output_bytes * 8);
  for (int shift = 24; shift >= 0; shift -= 8) message.push_back(static_cast<std::uint8_t>(bits >> shift));
  std::array<std::uint8_t, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  const bool ok = HMAC(hash == KrbSha2::Sha256 ? EVP_sha256() : EVP_sha384(), key.data(), static_cast<int>(key.size()),
                       message.data(), message.size(), digest.data(), &length) != nullptr &&
                  length == digest_bytes;
  SecretBytes out(output_bytes);
  std::copy_n(digest.begin(), output_bytes, out.data());
  wipe(digest.data(), digest.size());
  wipe(message.data(), message.size());  // the label may be public, but it costs nothing
  if (!ok) throw Error(Component::Client, "HMAC for KDF-HMAC-SHA2 failed");
  return out;
}

SecretBytes hmac_sha2_state(KrbSha2 hash, std::span<const std::uint8_t> key) {
  if (hash == KrbSha2::Sha256)
    return hmac_state_with<circuits::kSha256BlockBytes>(
        key, circuits::sha256_initial_state,
        [](circuits::Sha256State& state, std::span<const std::uint8_t, circuits::kSha256BlockBytes> block) {
          circuits::sha256_compress(state, block);
        },
        circuits::sha256_state_bytes);
  return hmac_state_with<circuits::kSha512BlockBytes>(
      key, circuits::sha384_initial_state,
      [](circuits::Sha512State& state, std::span<const std::uint8_t, circuits::kSha512BlockBytes> block) {
        circuits::sha512_compress(state, block);
      },
      circuits::sha512_state_bytes);
}

}  // namespace mpc::client
