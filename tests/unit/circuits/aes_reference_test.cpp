#include <gtest/gtest.h>

#include "circuits/aes_reference.hpp"
#include "common/error.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using test::Bytes;

TEST(AesReference, SboxMatchesDefinition) {
  const auto table = test::definition_sbox_table();
  for (unsigned x = 0; x < 256; ++x) {
    EXPECT_EQ(aes_sbox(static_cast<std::uint8_t>(x)), table[x]);
    EXPECT_EQ(aes_inverse_sbox(table[x]), x);
  }
}

TEST(AesReference, BlocksMatchOpenSsl) {
  std::mt19937_64 rng(4);
  for (std::size_t key_bytes : {16U, 32U}) {
    for (int i = 0; i < 200; ++i) {
      const Bytes key = test::random_bytes(rng, key_bytes);
      const Bytes block = test::random_bytes(rng, 16);
      const Bytes round_keys = aes_expand_key(key);
      const auto encrypted = aes_encrypt_block(round_keys, std::span<const std::uint8_t, 16>(block.data(), 16));
      EXPECT_EQ(Bytes(encrypted.begin(), encrypted.end()), test::openssl_encrypt(key, block));
      const auto decrypted = aes_decrypt_block(round_keys, std::span<const std::uint8_t, 16>(block.data(), 16));
      EXPECT_EQ(Bytes(decrypted.begin(), decrypted.end()), test::openssl_decrypt(key, block));
    }
  }
}

TEST(AesReference, RejectsWrongRoundKeySize) {
  const Bytes round_keys(175, 0);
  const Bytes block(16, 0);
  EXPECT_THROW(aes_encrypt_block(round_keys, std::span<const std::uint8_t, 16>(block.data(), 16)), FormatError);
  EXPECT_THROW(aes_decrypt_block(round_keys, std::span<const std::uint8_t, 16>(block.data(), 16)), FormatError);
}

}  // namespace
}  // namespace mpc::circuits
