// FIPS-197 Appendix A (key expansion) and Appendix C (example vectors).
#include <gtest/gtest.h>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/evaluate.hpp"
#include "common/error.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using test::Bytes;
using test::from_hex;

struct KnownAnswer {
  AesKeySize size;
  const char* key;
  const char* plaintext;
  const char* ciphertext;
};

// FIPS-197 Appendix C.1 and C.3.
const KnownAnswer kAppendixC[] = {
    {AesKeySize::Aes128, "000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff",
     "69c4e0d86a7b0430d8cdb78070b4c55a"},
    {AesKeySize::Aes256, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
     "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089"},
};

Bytes run_cipher(const Circuit& circuit, const Bytes& round_keys, const Bytes& block) {
  Bytes input = round_keys;
  input.insert(input.end(), block.begin(), block.end());
  return test::bits_to_bytes(evaluate(circuit, test::bytes_to_bits(input)));
}

class AesKnownAnswerTest : public ::testing::TestWithParam<std::tuple<KnownAnswer, SboxVariant>> {};

TEST_P(AesKnownAnswerTest, EncryptAndDecrypt) {
  const auto& [vector, sbox] = GetParam();
  const Bytes round_keys = aes_expand_key(from_hex(vector.key));
  const Circuit encrypt = build_aes_circuit(vector.size, AesDirection::Encrypt, sbox);
  const Circuit decrypt = build_aes_circuit(vector.size, AesDirection::Decrypt, sbox);
  EXPECT_EQ(run_cipher(encrypt, round_keys, from_hex(vector.plaintext)), from_hex(vector.ciphertext));
  EXPECT_EQ(run_cipher(decrypt, round_keys, from_hex(vector.ciphertext)), from_hex(vector.plaintext));
}

TEST_P(AesKnownAnswerTest, KeyExpansionCircuitMatchesReference) {
  const auto& [vector, sbox] = GetParam();
  const Bytes key = from_hex(vector.key);
  const Circuit expansion = build_aes_key_expansion_circuit(vector.size, sbox);
  EXPECT_EQ(test::bits_to_bytes(evaluate(expansion, test::bytes_to_bits(key))), aes_expand_key(key));
}

INSTANTIATE_TEST_SUITE_P(AppendixC, AesKnownAnswerTest,
                         ::testing::Combine(::testing::ValuesIn(kAppendixC),
                                            ::testing::Values(SboxVariant::And32, SboxVariant::Depth4)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).size == AesKeySize::Aes128 ? "Aes128" : "Aes256") +
                                  (std::get<1>(info.param) == SboxVariant::And32 ? "And32" : "Depth4");
                         });

// FIPS-197 Appendix A.1: key 2b7e1516 28aed2a6 abf71588 09cf4f3c.
TEST(AesKeyExpansion, AppendixA1) {
  const Bytes key = from_hex("2b7e151628aed2a6abf7158809cf4f3c");
  const Bytes expanded = aes_expand_key(key);
  ASSERT_EQ(expanded.size(), 176U);
  EXPECT_EQ(Bytes(expanded.begin() + 16, expanded.begin() + 32), from_hex("a0fafe1788542cb123a339392a6c7605"));
  EXPECT_EQ(Bytes(expanded.begin() + 160, expanded.end()), from_hex("d014f9a8c9ee2589e13f0cc8b6630ca6"));
  for (SboxVariant sbox : {SboxVariant::And32, SboxVariant::Depth4}) {
    const Circuit circuit = build_aes_key_expansion_circuit(AesKeySize::Aes128, sbox);
    EXPECT_EQ(test::bits_to_bytes(evaluate(circuit, test::bytes_to_bits(key))), expanded);
  }
}

// FIPS-197 Appendix A.3: 256-bit key 603deb10 ... 0914dff4.
TEST(AesKeyExpansion, AppendixA3) {
  const Bytes key = from_hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
  const Bytes expanded = aes_expand_key(key);
  ASSERT_EQ(expanded.size(), 240U);
  EXPECT_EQ(Bytes(expanded.begin() + 32, expanded.begin() + 48), from_hex("9ba354118e6925afa51a8b5f2067fcde"));
  EXPECT_EQ(Bytes(expanded.begin() + 224, expanded.end()), from_hex("fe4890d1e6188d0b046df344706c631e"));
  for (SboxVariant sbox : {SboxVariant::And32, SboxVariant::Depth4}) {
    const Circuit circuit = build_aes_key_expansion_circuit(AesKeySize::Aes256, sbox);
    EXPECT_EQ(test::bits_to_bytes(evaluate(circuit, test::bytes_to_bits(key))), expanded);
  }
}

TEST(AesKeyExpansion, RejectsOtherKeySizes) {
  for (std::size_t size : {0, 15, 17, 24, 31, 33}) {
    const Bytes key(size, 0);
    EXPECT_THROW(aes_expand_key(key), FormatError) << size;
  }
}

}  // namespace
}  // namespace mpc::circuits
