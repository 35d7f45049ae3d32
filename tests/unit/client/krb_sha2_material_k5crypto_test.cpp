// The RFC 8009 keys' derivation and share material (aes128-cts-hmac-sha256-128,
// aes256-cts-hmac-sha384-192): KDF-HMAC-SHA2 against the derived keys of RFC 8009 Appendix A,
// HMAC-SHA2 states against OpenSSL's HMAC, and the material against MIT libk5crypto through
// the krb5 public API: what krb5_c_encrypt writes under the protocol key decrypts with CBC-CTS
// under the stored Ke and carries the HMAC of 16 zero bytes || ciphertext under the stored Ki
// state; krb5_c_make_checksum equals the HMAC under the stored Kc state; krb5_c_prf equals the
// HMAC under the stored protocol-key state of 00000001 | "prf" | 00 | input | k.
#include <gtest/gtest.h>

#include <krb5.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <random>
#include <string>

#include "circuits/sha2_reference.hpp"
#include "client/key_material.hpp"
#include "client/krb_derivation.hpp"
#include "common/error.hpp"
#include "krb_test_support.hpp"

namespace mpc::client {
namespace {

using krb_test::Bytes;
using wire::KeyAlgorithm;

Bytes from_hex(const std::string& hex) {
  Bytes out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

Bytes bytes_of(const SecretBytes& secret) { return Bytes(secret.span().begin(), secret.span().end()); }

krb5_data data_of(Bytes& bytes) {
  krb5_data data{};
  data.length = static_cast<unsigned int>(bytes.size());
  data.data = reinterpret_cast<char*>(bytes.data());
  return data;
}

Bytes openssl_hmac(KrbSha2 hash, const Bytes& key, const Bytes& message) {
  std::uint8_t digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  EXPECT_NE(HMAC(hash == KrbSha2::Sha256 ? EVP_sha256() : EVP_sha384(), key.data(), static_cast<int>(key.size()),
                 message.data(), message.size(), digest, &length),
            nullptr);
  return Bytes(digest, digest + length);
}

// SHA-256 or SHA-384 of `message` continued from a big-endian chaining value that has absorbed
// one block already (the HMAC key block).
Bytes sha2_continue(KrbSha2 hash, std::span<const std::uint8_t> chaining, const Bytes& message) {
  const bool is256 = hash == KrbSha2::Sha256;
  const std::size_t block = is256 ? 64 : 128;
  const std::size_t length_bytes = is256 ? 8 : 16;
  Bytes padded = message;
  padded.push_back(0x80);
  while (padded.size() % block != block - length_bytes) padded.push_back(0);
  const std::uint64_t bits = 8 * static_cast<std::uint64_t>(block + message.size());
  for (std::size_t i = length_bytes; i-- > 0;) padded.push_back(i >= 8 ? 0 : static_cast<std::uint8_t>(bits >> (8 * i)));
  if (is256) {
    circuits::Sha256State state{};
    for (std::size_t w = 0; w < 8; ++w)
      for (std::size_t b = 0; b < 4; ++b) state[w] = state[w] << 8 | chaining[4 * w + b];
    for (std::size_t at = 0; at < padded.size(); at += 64)
      circuits::sha256_compress(state, std::span<const std::uint8_t, 64>(padded.data() + at, 64));
    const auto out = circuits::sha256_state_bytes(state);
    return Bytes(out.begin(), out.end());
  }
  circuits::Sha512State state{};
  for (std::size_t w = 0; w < 8; ++w)
    for (std::size_t b = 0; b < 8; ++b) state[w] = state[w] << 8 | chaining[8 * w + b];
  for (std::size_t at = 0; at < padded.size(); at += 128)
    circuits::sha512_compress(state, std::span<const std::uint8_t, 128>(padded.data() + at, 128));
  const auto out = circuits::sha512_state_bytes(state);
  return Bytes(out.begin(), out.begin() + 48);  // SHA-384
}

// HMAC(K, message) finished from the stored state of K.
Bytes hmac_from_state(KrbSha2 hash, std::span<const std::uint8_t> state, const Bytes& message) {
  const std::size_t half = state.size() / 2;
  const Bytes inner = sha2_continue(hash, state.first(half), message);
  return sha2_continue(hash, state.subspan(half, half), inner);
}

TEST(KrbSha2Derivation, Rfc8009AppendixADerivedKeys) {
  const auto constant = [](KrbKeyRole role) { return krb_usage_constant(2, role); };
  const Bytes base128 = from_hex("3705d96080c17728a0e800eab6e0d23c");
  EXPECT_EQ(bytes_of(krb_kdf_hmac_sha2(KrbSha2::Sha256, base128, constant(KrbKeyRole::Checksum), 16)),
            from_hex("b31a018a48f54776f403e9a396325dc3"));
  EXPECT_EQ(bytes_of(krb_kdf_hmac_sha2(KrbSha2::Sha256, base128, constant(KrbKeyRole::Encryption), 16)),
            from_hex("9b197dd1e8c5609d6e67c3e37c62c72e"));
  EXPECT_EQ(bytes_of(krb_kdf_hmac_sha2(KrbSha2::Sha256, base128, constant(KrbKeyRole::Integrity), 16)),
            from_hex("9fda0e56ab2d85e1569a688696c26a6c"));
  const Bytes base256 = from_hex("6d404d37faf79f9df0d33568d320669800eb4836472ea8a026d16b7182460c52");
  EXPECT_EQ(bytes_of(krb_kdf_hmac_sha2(KrbSha2::Sha384, base256, constant(KrbKeyRole::Checksum), 24)),
            from_hex("ef5718be86cc84963d8bbb5031e9f5c4ba41f28faf69e73d"));
  EXPECT_EQ(bytes_of(krb_kdf_hmac_sha2(KrbSha2::Sha384, base256, constant(KrbKeyRole::Encryption), 32)),
            from_hex("56ab22bee63d82d7bc5227f6773f8ea7a5eb1c825160c38312980c442e5c7e49"));
  EXPECT_EQ(bytes_of(krb_kdf_hmac_sha2(KrbSha2::Sha384, base256, constant(KrbKeyRole::Integrity), 24)),
            from_hex("69b16514e3cd8e56b82010d5c73012b622c4d00ffc23ed1f"));
}

TEST(KrbSha2Derivation, KdfRefusesBadArguments) {
  const Bytes key(16, 1);
  const Bytes label = {1, 2, 3};
  EXPECT_THROW(krb_kdf_hmac_sha2(KrbSha2::Sha256, key, label, 0), Error);
  EXPECT_THROW(krb_kdf_hmac_sha2(KrbSha2::Sha256, key, label, 33), Error);
  EXPECT_THROW(krb_kdf_hmac_sha2(KrbSha2::Sha384, key, label, 49), Error);
  EXPECT_THROW(krb_kdf_hmac_sha2(KrbSha2::Sha256, Bytes{}, label, 16), Error);
  EXPECT_THROW(krb_kdf_hmac_sha2(KrbSha2::Sha256, key, Bytes{}, 16), Error);
  EXPECT_EQ(krb_kdf_hmac_sha2(KrbSha2::Sha384, key, label, 48).size(), 48U);
  // A shorter output is a prefix of the longer one only when k is the same: k is part of
  // the message, so 16- and 32-byte outputs differ.
  const Bytes short_out = bytes_of(krb_kdf_hmac_sha2(KrbSha2::Sha256, key, label, 16));
  const Bytes long_out = bytes_of(krb_kdf_hmac_sha2(KrbSha2::Sha256, key, label, 32));
  EXPECT_NE(short_out, Bytes(long_out.begin(), long_out.begin() + 16));
}

TEST(KrbSha2Derivation, HmacStatesFinishToOpensslsHmac) {
  std::mt19937_64 rng(8009);
  for (KrbSha2 hash : {KrbSha2::Sha256, KrbSha2::Sha384}) {
    const std::size_t block = hash == KrbSha2::Sha256 ? 64 : 128;
    for (std::size_t key_length : {std::size_t{16}, std::size_t{24}, std::size_t{32}, block}) {
      const Bytes key = random_bytes(rng, key_length);
      const SecretBytes state = hmac_sha2_state(hash, key);
      ASSERT_EQ(state.size(), 2 * (hash == KrbSha2::Sha256 ? 32U : 64U));
      for (std::size_t length : {std::size_t{0}, std::size_t{55}, std::size_t{56}, std::size_t{111}, std::size_t{300}}) {
        const Bytes message = random_bytes(rng, length);
        EXPECT_EQ(hmac_from_state(hash, state.span(), message), openssl_hmac(hash, key, message)) << key_length;
      }
    }
    EXPECT_THROW(hmac_sha2_state(hash, Bytes(block + 1, 0)), Error);
  }
}

constexpr std::size_t kLengths[] = {0, 1, 15, 16, 17, 31, 32, 33, 100, 255};

class K5CryptoSha2 : public ::testing::TestWithParam<KeyAlgorithm> {
 protected:
  void SetUp() override {
    ASSERT_EQ(krb5_init_context(&context_), 0);
    std::mt19937_64 rng(GetParam() == KeyAlgorithm::Aes128CtsHmacSha256 ? 19 : 20);
    key_ = random_bytes(rng, wire::key_bytes(GetParam()));
    material_ = build_key_material(GetParam(), key_);
    keyblock_.enctype = aes128() ? ENCTYPE_AES128_CTS_HMAC_SHA256_128 : ENCTYPE_AES256_CTS_HMAC_SHA384_192;
    keyblock_.length = static_cast<unsigned int>(key_.size());
    keyblock_.contents = key_.data();
  }
  void TearDown() override { krb5_free_context(context_); }

  bool aes128() const { return GetParam() == KeyAlgorithm::Aes128CtsHmacSha256; }
  KrbSha2 hash() const { return aes128() ? KrbSha2::Sha256 : KrbSha2::Sha384; }
  std::size_t mac_bytes() const { return aes128() ? 16 : 24; }
  // Ke: round key 0 (and 1 for AES-256) of the stored expansion is the key itself.
  Bytes stored_ke(std::size_t index) const {
    const std::size_t at = wire::krb_ke_offset(GetParam(), index);
    return Bytes(material_.data() + at, material_.data() + at + key_.size());
  }
  std::span<const std::uint8_t> stored_state(std::size_t offset) const {
    return std::span<const std::uint8_t>(material_.data() + offset, wire::krb_hmac_state_bytes(GetParam()));
  }

  krb5_context context_ = nullptr;
  Bytes key_;
  SecretBytes material_;
  krb5_keyblock keyblock_{};
};

TEST_P(K5CryptoSha2, MaterialHasTheDocumentedLayout) {
  EXPECT_EQ(material_.size(), aes128() ? 1584U : 2608U);
  EXPECT_EQ(wire::krb_hmac_state_bytes(GetParam()), aes128() ? 64U : 128U);
  EXPECT_EQ(wire::krb_prf_offset(GetParam()) + wire::krb_hmac_state_bytes(GetParam()), material_.size());
  // The usage-2 keys are RFC 8009's KDF outputs; the PRF state is the protocol key's.
  const std::size_t index = *wire::krb_usage_index(2);
  const SecretBytes ke = krb_kdf_hmac_sha2(hash(), key_, krb_usage_constant(2, KrbKeyRole::Encryption), key_.size());
  EXPECT_EQ(stored_ke(index), bytes_of(ke));
  const SecretBytes ki = krb_kdf_hmac_sha2(hash(), key_, krb_usage_constant(2, KrbKeyRole::Integrity), mac_bytes());
  const auto ki_state = stored_state(wire::krb_ki_offset(GetParam(), index));
  EXPECT_EQ(Bytes(ki_state.begin(), ki_state.end()), bytes_of(hmac_sha2_state(hash(), ki.span())));
  const auto prf_state = stored_state(wire::krb_prf_offset(GetParam()));
  EXPECT_EQ(Bytes(prf_state.begin(), prf_state.end()), bytes_of(hmac_sha2_state(hash(), key_)));
}

TEST_P(K5CryptoSha2, Krb5EncryptDecryptsUnderStoredKeAndCarriesHmacUnderStoredKi) {
  std::mt19937_64 rng(31);
  for (std::size_t index = 0; index < wire::kKrbUsageCount; ++index) {
    const std::uint32_t usage = wire::kKrbUsages[index];
    const Bytes ke = stored_ke(index);
    for (std::size_t length : kLengths) {
      Bytes plaintext = random_bytes(rng, length);
      krb5_data input = data_of(plaintext);
      size_t total = 0;
      ASSERT_EQ(krb5_c_encrypt_length(context_, keyblock_.enctype, length, &total), 0);
      ASSERT_EQ(total, 16 + length + mac_bytes());
      Bytes out(total);
      krb5_enc_data output{};
      output.ciphertext = data_of(out);
      ASSERT_EQ(krb5_c_encrypt(context_, &keyblock_, usage, nullptr, &input, &output), 0);
      const Bytes ciphertext(out.begin(), out.begin() + 16 + length);
      const Bytes mac(out.begin() + 16 + length, out.end());
      const Bytes decrypted = krb_test::cts_decrypt(ke, ciphertext);
      EXPECT_EQ(Bytes(decrypted.begin() + 16, decrypted.end()), plaintext) << usage << " " << length;
      Bytes mac_input(16, 0);
      mac_input.insert(mac_input.end(), ciphertext.begin(), ciphertext.end());
      const Bytes hmac = hmac_from_state(hash(), stored_state(wire::krb_ki_offset(GetParam(), index)), mac_input);
      EXPECT_EQ(Bytes(hmac.begin(), hmac.begin() + static_cast<std::ptrdiff_t>(mac_bytes())), mac)
          << usage << " " << length;
    }
  }
}

TEST_P(K5CryptoSha2, MakeChecksumEqualsHmacUnderStoredKc) {
  std::mt19937_64 rng(33);
  const krb5_cksumtype type = aes128() ? CKSUMTYPE_HMAC_SHA256_128_AES128 : CKSUMTYPE_HMAC_SHA384_192_AES256;
  for (std::size_t index = 0; index < wire::kKrbUsageCount; ++index) {
    const std::uint32_t usage = wire::kKrbUsages[index];
    for (std::size_t length : kLengths) {
      Bytes message = random_bytes(rng, length);
      krb5_data input = data_of(message);
      krb5_checksum checksum{};
      ASSERT_EQ(krb5_c_make_checksum(context_, type, &keyblock_, usage, &input, &checksum), 0);
      const Bytes theirs(checksum.contents, checksum.contents + checksum.length);
      krb5_free_checksum_contents(context_, &checksum);
      const Bytes hmac = hmac_from_state(hash(), stored_state(wire::krb_kc_offset(GetParam(), index)), message);
      EXPECT_EQ(Bytes(hmac.begin(), hmac.begin() + static_cast<std::ptrdiff_t>(mac_bytes())), theirs)
          << usage << " " << length;
    }
  }
}

TEST_P(K5CryptoSha2, PrfEqualsHmacUnderStoredKeyState) {
  std::mt19937_64 rng(34);
  const std::size_t prf_bytes = aes128() ? 32 : 48;
  for (std::size_t length : kLengths) {
    Bytes input_bytes = random_bytes(rng, length);
    krb5_data input = data_of(input_bytes);
    size_t prf_length = 0;
    ASSERT_EQ(krb5_c_prf_length(context_, keyblock_.enctype, &prf_length), 0);
    ASSERT_EQ(prf_length, prf_bytes);
    Bytes theirs(prf_length);
    krb5_data output = data_of(theirs);
    ASSERT_EQ(krb5_c_prf(context_, &keyblock_, &input, &output), 0);
    Bytes message = {0, 0, 0, 1, 'p', 'r', 'f', 0};
    message.insert(message.end(), input_bytes.begin(), input_bytes.end());
    const std::uint32_t bits = static_cast<std::uint32_t>(prf_bytes * 8);
    for (int shift = 24; shift >= 0; shift -= 8) message.push_back(static_cast<std::uint8_t>(bits >> shift));
    EXPECT_EQ(hmac_from_state(hash(), stored_state(wire::krb_prf_offset(GetParam())), message), theirs) << length;
  }
}

INSTANTIATE_TEST_SUITE_P(Enctypes, K5CryptoSha2,
                         ::testing::Values(KeyAlgorithm::Aes128CtsHmacSha256, KeyAlgorithm::Aes256CtsHmacSha384),
                         [](const auto& info) {
                           return info.param == KeyAlgorithm::Aes128CtsHmacSha256 ? "Aes128Sha256" : "Aes256Sha384";
                         });

}  // namespace
}  // namespace mpc::client
