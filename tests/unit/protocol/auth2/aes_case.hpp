// AES-128 cases for the auth2 tests: a key, a block, the round keys XOR-shared in bits, the
// shared-key circuit, and OpenSSL's ciphertext to hold results to.
#pragma once

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <cstdint>
#include <random>
#include <vector>

#include "circuits/aes.hpp"
#include "circuits/aes_shared_key.hpp"
#include "circuits/evaluate.hpp"

namespace mpc::test_support {

using circuits::Circuit;

inline constexpr std::uint32_t kRoundKeyBits = circuits::aes_round_key_bits(circuits::AesKeySize::Aes128);

inline Circuit shared_key_aes() {
  return circuits::build_shared_key_aes_circuit(circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt,
                                                circuits::SboxVariant::And32, 1);
}

inline std::vector<std::uint8_t> to_bits(const std::vector<std::uint8_t>& bytes) {
  std::vector<std::uint8_t> bits;
  for (const auto byte : bytes)
    for (int k = 0; k < 8; ++k) bits.push_back((byte >> k) & 1);
  return bits;
}

inline std::vector<std::uint8_t> to_bytes(const std::vector<std::uint8_t>& bits) {
  std::vector<std::uint8_t> bytes(bits.size() / 8, 0);
  for (std::size_t i = 0; i < bits.size(); ++i) bytes[i / 8] |= static_cast<std::uint8_t>(bits[i] << (i % 8));
  return bytes;
}

inline std::vector<std::uint8_t> openssl_encrypt(const std::vector<std::uint8_t>& key, const std::vector<std::uint8_t>& block) {
  std::vector<std::uint8_t> out(16);
  EVP_CIPHER_CTX* context = EVP_CIPHER_CTX_new();
  int written = 0;
  EXPECT_EQ(EVP_EncryptInit_ex(context, EVP_aes_128_ecb(), nullptr, key.data(), nullptr), 1);
  EVP_CIPHER_CTX_set_padding(context, 0);
  EXPECT_EQ(EVP_EncryptUpdate(context, out.data(), &written, block.data(), 16), 1);
  EVP_CIPHER_CTX_free(context);
  return out;
}

struct Case {
  std::vector<std::uint8_t> key, block, first_share, second_share;  // shares of the round keys, in bits
};

inline Case make_case(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Case c;
  for (int i = 0; i < 16; ++i) c.key.push_back(static_cast<std::uint8_t>(rng()));
  for (int i = 0; i < 16; ++i) c.block.push_back(static_cast<std::uint8_t>(rng()));
  const Circuit expansion = circuits::build_aes_key_expansion_circuit(circuits::AesKeySize::Aes128,
                                                                      circuits::SboxVariant::And32);
  const std::vector<std::uint8_t> round_keys = circuits::evaluate(expansion, to_bits(c.key));
  for (std::uint32_t i = 0; i < kRoundKeyBits; ++i) {
    c.first_share.push_back(rng() & 1);
    c.second_share.push_back(round_keys[i] ^ c.first_share.back());
  }
  return c;
}

inline const Circuit& circuit() {
  static const Circuit shared = shared_key_aes();
  return shared;
}

}  // namespace mpc::test_support
