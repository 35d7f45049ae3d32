// The Kerberos keys' share material against MIT libk5crypto through the krb5 public API:
// what krb5_c_encrypt writes under the protocol key decrypts with CBC-CTS under the stored Ke
// and carries HMAC-SHA1-96 under the stored Ki state; CBC-CTS + HMAC computed from the stored
// material is accepted by krb5_c_decrypt; krb5_c_make_checksum equals HMAC under the stored
// Kc state; krb5_c_prf equals AES under the stored PRF key of SHA-1(input)[0..16).
#include <gtest/gtest.h>

#include <krb5.h>
#include <openssl/evp.h>

#include <random>

#include "client/key_material.hpp"
#include "krb_test_support.hpp"

namespace mpc::client {
namespace {

using krb_test::Bytes;
using wire::KeyAlgorithm;

constexpr std::size_t kMacBytes = 12;

Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

krb5_data data_of(Bytes& bytes) {
  krb5_data data{};
  data.length = static_cast<unsigned int>(bytes.size());
  data.data = reinterpret_cast<char*>(bytes.data());
  return data;
}

class K5Crypto : public ::testing::TestWithParam<KeyAlgorithm> {
 protected:
  void SetUp() override {
    ASSERT_EQ(krb5_init_context(&context_), 0);
    std::mt19937_64 rng(GetParam() == KeyAlgorithm::Aes128CtsHmacSha1 ? 21 : 22);
    key_ = random_bytes(rng, wire::key_bytes(GetParam()));
    material_ = build_key_material(GetParam(), key_);
    keyblock_.enctype = GetParam() == KeyAlgorithm::Aes128CtsHmacSha1 ? ENCTYPE_AES128_CTS_HMAC_SHA1_96
                                                                      : ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    keyblock_.length = static_cast<unsigned int>(key_.size());
    keyblock_.contents = key_.data();
  }
  void TearDown() override { krb5_free_context(context_); }

  // The AES key whose round keys start at `offset` (round key 0, and 1 for AES-256, is the key).
  Bytes stored_key(std::size_t offset) const {
    return Bytes(material_.data() + offset, material_.data() + offset + key_.size());
  }
  std::span<const std::uint8_t> stored_state(std::size_t offset) const {
    return std::span<const std::uint8_t>(material_.data() + offset, wire::algorithm_row(wire::KeyAlgorithm::Aes128CtsHmacSha1).hmac_state_bytes);
  }

  krb5_context context_ = nullptr;
  Bytes key_;
  SecretBytes material_;
  krb5_keyblock keyblock_{};
};

const std::size_t kLengths[] = {0, 1, 15, 16, 17, 31, 32, 33, 100, 1000};

TEST_P(K5Crypto, KrbEncryptDecryptsWithStoredKeAndKi) {
  std::mt19937_64 rng(31);
  for (std::size_t index = 0; index < wire::kKrbUsageCount; ++index) {
    const std::uint32_t usage = wire::kKrbUsages[index];
    const Bytes ke = stored_key(wire::krb_ke_offset(GetParam(), index));
    for (std::size_t length : kLengths) {
      Bytes plaintext = random_bytes(rng, length);
      krb5_data input = data_of(plaintext);
      size_t ciphertext_length = 0;
      ASSERT_EQ(krb5_c_encrypt_length(context_, keyblock_.enctype, length, &ciphertext_length), 0);
      ASSERT_EQ(ciphertext_length, 16 + length + kMacBytes);
      Bytes ciphertext(ciphertext_length);
      krb5_enc_data output{};
      output.ciphertext = data_of(ciphertext);
      ASSERT_EQ(krb5_c_encrypt(context_, &keyblock_, usage, nullptr, &input, &output), 0);
      const Bytes body(ciphertext.begin(), ciphertext.end() - kMacBytes);
      const Bytes mac(ciphertext.end() - kMacBytes, ciphertext.end());
      const Bytes opened = krb_test::cts_decrypt(ke, body);
      EXPECT_EQ(Bytes(opened.begin() + 16, opened.end()), plaintext) << usage << " " << length;
      const Bytes hmac = krb_test::hmac_from_state(stored_state(wire::krb_ki_offset(GetParam(), index)), opened);
      EXPECT_EQ(Bytes(hmac.begin(), hmac.begin() + kMacBytes), mac) << usage << " " << length;
    }
  }
}

TEST_P(K5Crypto, KrbDecryptAcceptsWhatTheStoredMaterialEncrypts) {
  std::mt19937_64 rng(32);
  for (std::size_t index = 0; index < wire::kKrbUsageCount; ++index) {
    const std::uint32_t usage = wire::kKrbUsages[index];
    const Bytes ke = stored_key(wire::krb_ke_offset(GetParam(), index));
    for (std::size_t length : kLengths) {
      const Bytes plaintext = random_bytes(rng, length);
      Bytes message = random_bytes(rng, 16);  // the confounder
      message.insert(message.end(), plaintext.begin(), plaintext.end());
      Bytes ciphertext = krb_test::cts_encrypt(ke, message);
      const Bytes hmac = krb_test::hmac_from_state(stored_state(wire::krb_ki_offset(GetParam(), index)), message);
      ciphertext.insert(ciphertext.end(), hmac.begin(), hmac.begin() + kMacBytes);
      krb5_enc_data input{};
      input.enctype = keyblock_.enctype;
      input.ciphertext = data_of(ciphertext);
      Bytes decrypted(ciphertext.size());
      krb5_data output = data_of(decrypted);
      ASSERT_EQ(krb5_c_decrypt(context_, &keyblock_, usage, nullptr, &input, &output), 0) << usage << " " << length;
      EXPECT_EQ(Bytes(decrypted.begin(), decrypted.begin() + output.length), plaintext) << usage << " " << length;
      // The same ciphertext under another usage fails libk5crypto's integrity check.
      const std::uint32_t other = wire::kKrbUsages[(index + 1) % wire::kKrbUsageCount];
      output = data_of(decrypted);
      EXPECT_NE(krb5_c_decrypt(context_, &keyblock_, other, nullptr, &input, &output), 0);
    }
  }
}

TEST_P(K5Crypto, MakeChecksumEqualsHmacUnderStoredKc) {
  std::mt19937_64 rng(33);
  const krb5_cksumtype type =
      GetParam() == KeyAlgorithm::Aes128CtsHmacSha1 ? CKSUMTYPE_HMAC_SHA1_96_AES128 : CKSUMTYPE_HMAC_SHA1_96_AES256;
  for (std::size_t index = 0; index < wire::kKrbUsageCount; ++index) {
    const std::uint32_t usage = wire::kKrbUsages[index];
    for (std::size_t length : kLengths) {
      Bytes message = random_bytes(rng, length);
      krb5_data input = data_of(message);
      krb5_checksum checksum{};
      ASSERT_EQ(krb5_c_make_checksum(context_, type, &keyblock_, usage, &input, &checksum), 0);
      const Bytes theirs(checksum.contents, checksum.contents + checksum.length);
      krb5_free_checksum_contents(context_, &checksum);
      const Bytes hmac = krb_test::hmac_from_state(stored_state(wire::krb_kc_offset(GetParam(), index)), message);
      EXPECT_EQ(Bytes(hmac.begin(), hmac.begin() + kMacBytes), theirs) << usage << " " << length;
    }
  }
}

TEST_P(K5Crypto, PrfEqualsAesUnderStoredPrfKey) {
  std::mt19937_64 rng(34);
  const Bytes prf_key = stored_key(wire::krb_prf_offset(GetParam()));
  for (std::size_t length : kLengths) {
    Bytes message = random_bytes(rng, length);
    krb5_data input = data_of(message);
    size_t prf_length = 0;
    ASSERT_EQ(krb5_c_prf_length(context_, keyblock_.enctype, &prf_length), 0);
    ASSERT_EQ(prf_length, 16U);
    Bytes theirs(prf_length);
    krb5_data output = data_of(theirs);
    ASSERT_EQ(krb5_c_prf(context_, &keyblock_, &input, &output), 0);
    Bytes digest(EVP_MAX_MD_SIZE);
    unsigned int digest_length = 0;
    ASSERT_EQ(EVP_Digest(message.data(), message.size(), digest.data(), &digest_length, EVP_sha1(), nullptr), 1);
    ASSERT_EQ(digest_length, 20U);
    digest.resize(16);
    EXPECT_EQ(krb_test::aes_block(prf_key, digest), theirs) << length;
  }
}

INSTANTIATE_TEST_SUITE_P(Enctypes, K5Crypto,
                         ::testing::Values(KeyAlgorithm::Aes128CtsHmacSha1, KeyAlgorithm::Aes256CtsHmacSha1),
                         [](const auto& info) {
                           return info.param == KeyAlgorithm::Aes128CtsHmacSha1 ? "Aes128" : "Aes256";
                         });

}  // namespace
}  // namespace mpc::client
