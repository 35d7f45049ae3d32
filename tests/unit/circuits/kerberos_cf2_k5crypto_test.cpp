// KRB-FX-CF2 circuits (circuits/kerberos_cf2.hpp) against MIT libk5crypto: for every pair of
// protected and combined enctypes, the circuit fed with the protected key's stored PRF
// material and the mask PRF+(K1, pepper1) encrypts what krb5_c_decrypt accepts under
// krb5_c_fx_cf2_simple's key, decrypts what krb5_c_encrypt wrote under it (and refuses a
// flipped byte), and makes krb5_c_make_checksum's checksum.
#include <gtest/gtest.h>

#include <krb5.h>
#include <openssl/sha.h>

#include <cstring>
#include <random>
#include <string>
#include <tuple>

#include "circuits/evaluate.hpp"
#include "circuits/kerberos_cf2.hpp"
#include "client/key_material.hpp"
#include "common/error.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using test::Bytes;
using test::bits_to_bytes;
using test::bytes_to_bits;
using test::random_bytes;

constexpr const char* kPepper1 = "kdcchallengearmor";
constexpr const char* kPepper2 = "challengelongterm";

krb5_enctype enctype_number(KrbEnctype enctype) {
  switch (enctype) {
    case KrbEnctype::Aes128Sha1: return ENCTYPE_AES128_CTS_HMAC_SHA1_96;
    case KrbEnctype::Aes256Sha1: return ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    case KrbEnctype::Aes128Sha256: return ENCTYPE_AES128_CTS_HMAC_SHA256_128;
    case KrbEnctype::Aes256Sha384: return ENCTYPE_AES256_CTS_HMAC_SHA384_192;
  }
  return 0;
}

wire::KeyAlgorithm algorithm_of(KrbEnctype enctype) {
  switch (enctype) {
    case KrbEnctype::Aes128Sha1: return wire::KeyAlgorithm::Aes128CtsHmacSha1;
    case KrbEnctype::Aes256Sha1: return wire::KeyAlgorithm::Aes256CtsHmacSha1;
    case KrbEnctype::Aes128Sha256: return wire::KeyAlgorithm::Aes128CtsHmacSha256;
    case KrbEnctype::Aes256Sha384: return wire::KeyAlgorithm::Aes256CtsHmacSha384;
  }
  return wire::KeyAlgorithm::Aes128;
}

krb5_data data_of(Bytes& bytes) {
  krb5_data data{};
  data.magic = KV5M_DATA;
  data.length = static_cast<unsigned int>(bytes.size());
  data.data = reinterpret_cast<char*>(bytes.data());
  return data;
}

class Cf2K5Crypto : public ::testing::TestWithParam<std::tuple<KrbEnctype, KrbEnctype>> {
 protected:
  void SetUp() override {
    ASSERT_EQ(krb5_init_context(&context_), 0);
    protected_ = std::get<0>(GetParam());
    combined_ = std::get<1>(GetParam());
    rng_.seed(static_cast<unsigned>(protected_) * 7 + static_cast<unsigned>(combined_));
    key2_ = random_bytes(rng_, krb_key_bytes(protected_));
    key1_ = random_bytes(rng_, krb_key_bytes(combined_));
    keyblock1_ = {KV5M_KEYBLOCK, enctype_number(combined_), static_cast<unsigned int>(key1_.size()), key1_.data()};
    keyblock2_ = {KV5M_KEYBLOCK, enctype_number(protected_), static_cast<unsigned int>(key2_.size()), key2_.data()};
    ASSERT_EQ(krb5_c_fx_cf2_simple(context_, &keyblock1_, kPepper1, &keyblock2_, kPepper2, &combined_key_), 0);

    // The KDC's half: PRF+(K1, pepper1), a key's length.
    mask_.resize(krb_key_bytes(combined_));
    Bytes pepper1(kPepper1, kPepper1 + std::strlen(kPepper1));
    krb5_data in = data_of(pepper1), out = data_of(mask_);
    ASSERT_EQ(krb5_c_prfplus(context_, &keyblock1_, &in, &out), 0);

    // The protected key's PRF material as the dealer stores it.
    const wire::KeyAlgorithm algorithm = algorithm_of(protected_);
    const SecretBytes material = client::build_key_material(algorithm, key2_);
    const std::size_t offset = wire::krb_prf_offset(algorithm);
    const std::size_t bytes = krb_is_sha2(protected_) ? krb_enctype_state_bits(protected_) / 8
                                                      : (krb_aes_size(protected_) == AesKeySize::Aes128 ? 176 : 240);
    prf_material_.assign(material.data() + offset, material.data() + offset + bytes);

    // Public PRF inputs: SHA-1(i || pepper2)[0..16) per block (RFC 3962), or 1 || pepper2.
    const std::string pepper2 = kPepper2;
    if (krb_is_sha2(protected_)) {
      prf_inputs_.push_back(1);
      prf_inputs_.insert(prf_inputs_.end(), pepper2.begin(), pepper2.end());
    } else {
      for (std::size_t i = 1; i <= krb_cf2_prf_blocks(protected_, combined_); ++i) {
        std::string input(1, static_cast<char>(i));
        input += pepper2;
        std::uint8_t digest[SHA_DIGEST_LENGTH];
        SHA1(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
        prf_inputs_.insert(prf_inputs_.end(), digest, digest + 16);
      }
    }
  }
  void TearDown() override {
    krb5_free_keyblock(context_, combined_key_);
    krb5_free_context(context_);
  }

  KrbCf2Shape shape(KrbCf2Use use, std::uint32_t usage, std::size_t data_bytes) const {
    return {protected_, combined_, use, usage, prf_inputs_.size(), data_bytes};
  }

  // The output bits; run() packs them into bytes, whole bytes only.
  std::vector<std::uint8_t> run_bits(const KrbCf2Shape& shape, const Bytes& data, const Bytes& mac = {}) const {
    const Circuit circuit = build_krb_cf2_circuit(shape, cost_);
    Bytes inputs = prf_material_;
    for (const Bytes* part : {&prf_inputs_, &mask_, &data, &mac}) inputs.insert(inputs.end(), part->begin(), part->end());
    return evaluate(circuit, bytes_to_bits(inputs));
  }
  Bytes run(const KrbCf2Shape& shape, const Bytes& data, const Bytes& mac = {}) const {
    return bits_to_bytes(run_bits(shape, data, mac));
  }

  std::size_t mac_bytes() const { return krb_enctype_mac_bytes(combined_); }

  krb5_context context_ = nullptr;
  KrbEnctype protected_{}, combined_{};
  std::mt19937_64 rng_;
  Bytes key1_, key2_, mask_, prf_material_, prf_inputs_;
  krb5_keyblock keyblock1_{}, keyblock2_{};
  krb5_keyblock* combined_key_ = nullptr;
  CircuitCost cost_ = CircuitCost::FewestAnds;
};

TEST_P(Cf2K5Crypto, EncryptionDecryptsUnderTheCombinedKey) {
  for (std::size_t length : {5, 40}) {
    const Bytes message = random_bytes(rng_, 16 + length);  // confounder || plaintext
    Bytes out = run(shape(KrbCf2Use::Encrypt, 55, message.size()), message);
    ASSERT_EQ(out.size(), message.size() + mac_bytes());
    krb5_enc_data encrypted{};
    encrypted.enctype = enctype_number(combined_);
    encrypted.ciphertext = data_of(out);
    Bytes plaintext(out.size());
    krb5_data output = data_of(plaintext);
    ASSERT_EQ(krb5_c_decrypt(context_, combined_key_, 55, nullptr, &encrypted, &output), 0) << length;
    EXPECT_EQ(Bytes(plaintext.begin(), plaintext.begin() + static_cast<std::ptrdiff_t>(output.length)),
              Bytes(message.begin() + 16, message.end()));
  }
}

TEST_P(Cf2K5Crypto, DecryptionOpensOnlyWhatTheCombinedKeyEncrypted) {
  Bytes plaintext = random_bytes(rng_, 21);
  krb5_data input = data_of(plaintext);
  std::size_t length = 0;
  ASSERT_EQ(krb5_c_encrypt_length(context_, enctype_number(combined_), plaintext.size(), &length), 0);
  Bytes ciphertext(length);
  krb5_enc_data encrypted{};
  encrypted.ciphertext = data_of(ciphertext);
  ASSERT_EQ(krb5_c_encrypt(context_, combined_key_, 54, nullptr, &input, &encrypted), 0);
  const Bytes body(ciphertext.begin(), ciphertext.end() - static_cast<std::ptrdiff_t>(mac_bytes()));
  const Bytes mac(ciphertext.end() - static_cast<std::ptrdiff_t>(mac_bytes()), ciphertext.end());
  const KrbCf2Shape decrypt = shape(KrbCf2Use::Decrypt, 54, body.size());
  std::vector<std::uint8_t> bits = run_bits(decrypt, body, mac);
  ASSERT_EQ(bits.size(), body.size() * 8 + 1);
  EXPECT_EQ(bits.back(), 1);  // the verdict
  bits.pop_back();
  const Bytes opened = bits_to_bytes(bits);
  EXPECT_EQ(Bytes(opened.begin() + 16, opened.end()), plaintext);

  Bytes forged = mac;
  forged[0] ^= 0x01;
  EXPECT_EQ(run_bits(decrypt, body, forged), std::vector<std::uint8_t>(body.size() * 8 + 1, 0));
}

TEST_P(Cf2K5Crypto, ChecksumIsLibk5cryptos) {
  for (std::size_t length : {0, 77}) {
    Bytes message = random_bytes(rng_, length);
    krb5_data input = data_of(message);
    krb5_checksum checksum{};
    ASSERT_EQ(krb5_c_make_checksum(context_, 0, combined_key_, 56, &input, &checksum), 0);
    const Bytes expected(checksum.contents, checksum.contents + checksum.length);
    krb5_free_checksum_contents(context_, &checksum);
    EXPECT_EQ(run(shape(KrbCf2Use::Checksum, 56, length), message), expected) << length;
  }
}

TEST_P(Cf2K5Crypto, FewestLayersBuildGivesTheSameCiphertext) {
  const Bytes message = random_bytes(rng_, 30);
  const Bytes garbled = run(shape(KrbCf2Use::Encrypt, 3, message.size()), message);
  cost_ = CircuitCost::FewestLayers;
  EXPECT_EQ(run(shape(KrbCf2Use::Encrypt, 3, message.size()), message), garbled);
}

TEST(Cf2Circuit, RefusesShortDataAndWrongPrfInputs) {
  EXPECT_THROW(build_krb_cf2_circuit({KrbEnctype::Aes256Sha1, KrbEnctype::Aes256Sha1, KrbCf2Use::Encrypt, 3, 32, 15}),
               FormatError);
  EXPECT_THROW(build_krb_cf2_circuit({KrbEnctype::Aes128Sha1, KrbEnctype::Aes256Sha1, KrbCf2Use::Encrypt, 3, 16, 20}),
               FormatError);
}

const KrbEnctype kAll[] = {KrbEnctype::Aes128Sha1, KrbEnctype::Aes256Sha1, KrbEnctype::Aes128Sha256,
                           KrbEnctype::Aes256Sha384};

INSTANTIATE_TEST_SUITE_P(EveryPair, Cf2K5Crypto, ::testing::Combine(::testing::ValuesIn(kAll), ::testing::ValuesIn(kAll)));

}  // namespace
}  // namespace mpc::circuits
