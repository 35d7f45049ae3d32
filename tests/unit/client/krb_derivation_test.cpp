// RFC 3961/3962 key derivation for the Kerberos keys' share material: n-fold against the
// vectors of RFC 3961 Appendix A.1, DK against DR computed with OpenSSL's AES, HMAC states
// against OpenSSL's HMAC-SHA1, and the material layout of wire/key_id.hpp.
#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <random>
#include <string>

#include "circuits/aes_reference.hpp"
#include "client/key_material.hpp"
#include "client/krb_derivation.hpp"
#include "common/error.hpp"
#include "krb_test_support.hpp"

namespace mpc::client {
namespace {

using krb_test::Bytes;
using wire::KeyAlgorithm;

Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }

Bytes hex(const std::string& s) {
  Bytes out;
  for (std::size_t i = 0; i < s.size(); i += 2) out.push_back(static_cast<std::uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
  return out;
}

Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

Bytes openssl_hmac_sha1(const Bytes& key, const Bytes& message) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned int length = 0;
  const std::uint8_t none = 0;  // OpenSSL refuses a NULL key even of length 0
  EXPECT_NE(HMAC(EVP_sha1(), key.empty() ? &none : key.data(), static_cast<int>(key.size()), message.data(), message.size(), out.data(),
                 &length),
            nullptr);
  out.resize(length);
  return out;
}

// DR(key, constant) with OpenSSL: E(n-fold(constant)), E(E(...)), truncated to the key length.
Bytes openssl_dk(const Bytes& key, const Bytes& constant) {
  Bytes block = n_fold(constant, 16);
  Bytes out;
  while (out.size() < key.size()) {
    block = krb_test::aes_block(key, block);
    out.insert(out.end(), block.begin(), block.end());
  }
  out.resize(key.size());
  return out;
}

Bytes slice(const SecretBytes& material, std::size_t offset, std::size_t length) {
  return Bytes(material.data() + offset, material.data() + offset + length);
}

TEST(NFold, Rfc3961AppendixA1) {
  struct Vector {
    std::string input;
    std::size_t bits;
    std::string expected;
  };
  const Vector vectors[] = {
      {"012345", 64, "be072631276b1955"},
      {"password", 56, "78a07b6caf85fa"},
      {"Rough Consensus, and Running Code", 64, "bb6ed30870b7f0e0"},
      {"password", 168, "59e4a8ca7c0385c3c37b3f6d2000247cb6e6bd5b3e"},
      {"MASSACHVSETTS INSTITVTE OF TECHNOLOGY", 192, "db3b0d8f0b061e603282b308a50841229ad798fab9540c1b"},
      {"Q", 168, "518a54a215a8452a518a54a215a8452a518a54a215"},
      {"ba", 168, "fb25d531ae8974499f52fd92ea9857c4ba24cf297e"},
      {"kerberos", 64, "6b65726265726f73"},
      {"kerberos", 128, "6b65726265726f737b9b5b2b93132b93"},
      {"kerberos", 168, "8372c236344e5f1550cd0747e15d62ca7a5a3bcea4"},
      {"kerberos", 256, "6b65726265726f737b9b5b2b93132b935c9bdcdad95c9899c4cae4dee6d6cae4"},
  };
  for (const auto& vector : vectors)
    EXPECT_EQ(n_fold(text(vector.input), vector.bits / 8), hex(vector.expected)) << vector.input << " " << vector.bits;
}

TEST(NFold, RejectsEmptyInputOrOutput) {
  EXPECT_THROW(n_fold({}, 16), Error);
  EXPECT_THROW(n_fold(text("prf"), 0), Error);
}

TEST(KrbDerivation, Constants) {
  EXPECT_EQ(krb_usage_constant(2, KrbKeyRole::Encryption), hex("00000002aa"));
  EXPECT_EQ(krb_usage_constant(17, KrbKeyRole::Integrity), hex("0000001155"));
  EXPECT_EQ(krb_usage_constant(0x01020304, KrbKeyRole::Checksum), hex("0102030499"));
  EXPECT_EQ(krb_prf_constant(), text("prf"));
}

TEST(KrbDerivation, DerivedKeysMatchOpenSslDr) {
  std::mt19937_64 rng(11);
  for (std::size_t size : {16, 32}) {
    for (int trial = 0; trial < 4; ++trial) {
      const Bytes key = random_bytes(rng, size);
      for (const Bytes& constant : {krb_usage_constant(2, KrbKeyRole::Encryption),
                                    krb_usage_constant(56, KrbKeyRole::Checksum), krb_prf_constant(), text("kerberos")}) {
        const SecretBytes derived = krb_derive_key(key, constant);
        EXPECT_EQ(Bytes(derived.span().begin(), derived.span().end()), openssl_dk(key, constant)) << size;
      }
    }
  }
}

TEST(KrbDerivation, RejectsWrongKeySizesAndEmptyConstants) {
  for (std::size_t size : {0, 1, 15, 17, 24, 31, 33, 64})
    EXPECT_THROW(krb_derive_key(Bytes(size), text("prf")), Error) << size;
  EXPECT_THROW(krb_derive_key(Bytes(16), {}), Error);
  EXPECT_THROW(hmac_sha1_state(Bytes(65)), Error);
}

TEST(KrbDerivation, HmacStateFinishesToOpenSslHmac) {
  std::mt19937_64 rng(12);
  for (std::size_t key_size : {0, 1, 16, 20, 32, 63, 64}) {
    const Bytes key = random_bytes(rng, key_size);
    const SecretBytes state = hmac_sha1_state(key);
    ASSERT_EQ(state.size(), wire::algorithm_row(wire::KeyAlgorithm::Aes128CtsHmacSha1).hmac_state_bytes);
    for (std::size_t length : {0, 1, 55, 56, 63, 64, 65, 119, 120, 300}) {
      const Bytes message = random_bytes(rng, length);
      EXPECT_EQ(krb_test::hmac_from_state(state.span(), message), openssl_hmac_sha1(key, message))
          << key_size << " " << length;
    }
  }
}

// Every slot of the material holds what the layout says, derived from the protocol key.
TEST(KrbKeyMaterial, LayoutHoldsTheDerivedKeys) {
  std::mt19937_64 rng(13);
  for (KeyAlgorithm algorithm : {KeyAlgorithm::Aes128CtsHmacSha1, KeyAlgorithm::Aes256CtsHmacSha1}) {
    const std::size_t key_size = wire::key_bytes(algorithm);
    const std::size_t round_key_bytes = (wire::aes_rounds(algorithm) + 1) * 16;
    const Bytes key = random_bytes(rng, key_size);
    const SecretBytes material = build_key_material(algorithm, key);
    ASSERT_EQ(material.size(), wire::material_bytes(algorithm));
    for (std::size_t index = 0; index < wire::kKrbUsageCount; ++index) {
      const std::uint32_t usage = wire::kKrbUsages[index];
      const Bytes ke = openssl_dk(key, krb_usage_constant(usage, KrbKeyRole::Encryption));
      const Bytes ki = openssl_dk(key, krb_usage_constant(usage, KrbKeyRole::Integrity));
      const Bytes kc = openssl_dk(key, krb_usage_constant(usage, KrbKeyRole::Checksum));
      const std::size_t ke_offset = wire::krb_ke_offset(algorithm, index);
      EXPECT_EQ(slice(material, ke_offset, round_key_bytes), circuits::aes_expand_key(ke)) << usage;
      const Bytes block = random_bytes(rng, 16);
      // The stored round keys encrypt like OpenSSL under Ke.
      const Bytes round_keys = slice(material, ke_offset, round_key_bytes);
      const auto ours = circuits::aes_encrypt_block(round_keys, std::span<const std::uint8_t, 16>(block.data(), 16));
      EXPECT_EQ(Bytes(ours.begin(), ours.end()), krb_test::aes_block(ke, block)) << usage;
      const Bytes message = random_bytes(rng, 77);
      EXPECT_EQ(krb_test::hmac_from_state(std::span(material.data() + wire::krb_ki_offset(algorithm, index), 40), message),
                openssl_hmac_sha1(ki, message))
          << usage;
      EXPECT_EQ(krb_test::hmac_from_state(std::span(material.data() + wire::krb_kc_offset(algorithm, index), 40), message),
                openssl_hmac_sha1(kc, message))
          << usage;
    }
    EXPECT_EQ(slice(material, wire::krb_prf_offset(algorithm), round_key_bytes),
              circuits::aes_expand_key(openssl_dk(key, text("prf"))));
    EXPECT_EQ(wire::krb_prf_offset(algorithm) + round_key_bytes, material.size());
  }
}

TEST(KrbKeyMaterial, RejectsWrongKeySizes) {
  for (KeyAlgorithm algorithm : {KeyAlgorithm::Aes128CtsHmacSha1, KeyAlgorithm::Aes256CtsHmacSha1})
    for (std::size_t size : {0, 15, 16, 17, 31, 32, 33}) {
      if (size == wire::key_bytes(algorithm)) continue;
      EXPECT_THROW(build_key_material(algorithm, Bytes(size)), Error) << size;
    }
}

// The material never contains the protocol key (it would be the round keys of nothing
// stored): scan every 16-byte window.
TEST(KrbKeyMaterial, ProtocolKeyIsNotStored) {
  std::mt19937_64 rng(14);
  for (KeyAlgorithm algorithm : {KeyAlgorithm::Aes128CtsHmacSha1, KeyAlgorithm::Aes256CtsHmacSha1}) {
    const Bytes key = random_bytes(rng, wire::key_bytes(algorithm));
    const SecretBytes material = build_key_material(algorithm, key);
    const auto span = material.span();
    EXPECT_EQ(std::search(span.begin(), span.end(), key.begin(), key.begin() + 16), span.end());
  }
}

}  // namespace
}  // namespace mpc::client
