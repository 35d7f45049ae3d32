// Key material the dealer shares: round keys for every algorithm, and for AES-256-GCM the
// hash key powers, checked against OpenSSL: H is AES_K(0^128), the powers are H^k, and
// GHASH with the stored powers (computed on replicated shares, as the servers do) plus
// AES_K(J0) reproduces OpenSSL's AES-256-GCM tag.
#include <gtest/gtest.h>

#include <openssl/evp.h>

#include <algorithm>
#include <random>

#include "circuits/aes_reference.hpp"
#include "client/key_material.hpp"
#include "common/error.hpp"
#include "protocol/rss3/ghash.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::client {
namespace {

using Bytes = std::vector<std::uint8_t>;
using wire::KeyAlgorithm;

Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

Bytes openssl_ecb(const Bytes& key, const Bytes& block) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  Bytes out(32);
  int length = 0;
  int total = 0;
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, EVP_aes_256_ecb(), nullptr, key.data(), nullptr), 1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  EXPECT_EQ(EVP_EncryptUpdate(ctx, out.data(), &length, block.data(), static_cast<int>(block.size())), 1);
  total = length;
  EXPECT_EQ(EVP_EncryptFinal_ex(ctx, out.data() + total, &length), 1);
  EVP_CIPHER_CTX_free(ctx);
  out.resize(static_cast<std::size_t>(total + length));
  return out;
}

// OpenSSL AES-256-GCM with a 96-bit nonce: the ciphertext and the 16-byte tag.
std::pair<Bytes, Bytes> openssl_gcm(const Bytes& key, const Bytes& nonce, const Bytes& aad, const Bytes& plaintext) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  Bytes ciphertext(plaintext.size());
  Bytes tag(16);
  int length = 0;
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, nullptr, nullptr), 1);
  EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, 12, nullptr), 1);
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, nullptr, nullptr, key.data(), nonce.data()), 1);
  if (!aad.empty()) {
    EXPECT_EQ(EVP_EncryptUpdate(ctx, nullptr, &length, aad.data(), static_cast<int>(aad.size())), 1);
  }
  if (!plaintext.empty()) {
    EXPECT_EQ(EVP_EncryptUpdate(ctx, ciphertext.data(), &length, plaintext.data(), static_cast<int>(plaintext.size())),
              1);
  }
  EXPECT_EQ(EVP_EncryptFinal_ex(ctx, ciphertext.data() + plaintext.size(), &length), 1);
  EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag.data()), 1);
  EVP_CIPHER_CTX_free(ctx);
  return {ciphertext, tag};
}

rss3::GhashBlock block_at(const SecretBytes& material, std::size_t offset) {
  rss3::GhashBlock block{};
  std::copy_n(material.data() + offset, 16, block.begin());
  return block;
}

rss3::GhashBlock power(const SecretBytes& material, std::size_t k) {
  return block_at(material, wire::kGcmRoundKeyBytes + 16 * (k - 1));
}

TEST(KeyMaterial, PlainAesKeysAreTheirRoundKeys) {
  std::mt19937_64 rng(1);
  for (KeyAlgorithm algorithm : {KeyAlgorithm::Aes128, KeyAlgorithm::Aes256}) {
    const Bytes key = random_bytes(rng, wire::key_bytes(algorithm));
    const SecretBytes material = build_key_material(algorithm, key);
    ASSERT_EQ(material.size(), wire::material_bytes(algorithm));
    EXPECT_EQ(Bytes(material.span().begin(), material.span().end()), circuits::aes_expand_key(key));
  }
}

TEST(KeyMaterial, RejectsWrongKeySizes) {
  for (KeyAlgorithm algorithm : {KeyAlgorithm::Aes128, KeyAlgorithm::Aes256, KeyAlgorithm::Aes256Gcm}) {
    for (std::size_t size : {0, 15, 16, 24, 31, 32, 33, 64}) {
      if (size == wire::key_bytes(algorithm)) continue;
      EXPECT_THROW(build_key_material(algorithm, Bytes(size)), Error) << size;
    }
  }
}

TEST(KeyMaterial, GcmLayoutMatchesOpenSsl) {
  std::mt19937_64 rng(2);
  for (int trial = 0; trial < 4; ++trial) {
    const Bytes key = random_bytes(rng, 32);
    const SecretBytes material = build_key_material(KeyAlgorithm::Aes256Gcm, key);
    ASSERT_EQ(material.size(), 16624U);
    EXPECT_EQ(Bytes(material.data(), material.data() + 240), circuits::aes_expand_key(key));
    const rss3::GhashBlock h = power(material, 1);
    EXPECT_EQ(Bytes(h.begin(), h.end()), openssl_ecb(key, Bytes(16, 0)));
    // Consecutive powers, and H^1024 by ten squarings: an independent route to the last one.
    for (std::size_t k = 2; k <= wire::kGcmHashPowers; ++k)
      ASSERT_EQ(power(material, k), rss3::gf128_multiply(power(material, k - 1), h)) << k;
    rss3::GhashBlock squared = h;
    for (int i = 0; i < 10; ++i) squared = rss3::gf128_multiply(squared, squared);
    EXPECT_EQ(power(material, 1024), squared);
  }
}

// The SP 800-38D test case 13 key (all zeros): H = AES_0(0) = dc95c078a2408989ad48a21492842087.
TEST(KeyMaterial, ZeroKeyKnownHashKey) {
  const SecretBytes material = build_key_material(KeyAlgorithm::Aes256Gcm, Bytes(32, 0));
  const rss3::GhashBlock expected = {0xdc, 0x95, 0xc0, 0x78, 0xa2, 0x40, 0x89, 0x89,
                                     0xad, 0x48, 0xa2, 0x14, 0x92, 0x84, 0x20, 0x87};
  EXPECT_EQ(power(material, 1), expected);
}

TEST(KeyMaterial, GhashOfSharedPowersGivesOpenSslTag) {
  std::mt19937_64 rng(3);
  const Bytes key = random_bytes(rng, 32);
  const SecretBytes material = build_key_material(KeyAlgorithm::Aes256Gcm, key);
  // What each server holds after import: its share of every power.
  std::array<std::vector<rss3::ByteShare>, 3> held;
  for (std::size_t k = 1; k <= wire::kGcmHashPowers; ++k) {
    const rss3::GhashBlock hk = power(material, k);
    auto shares = rss3::share_bytes(hk);
    for (std::size_t party = 0; party < 3; ++party) held[party].push_back(shares[party]);
  }
  const std::pair<std::size_t, std::size_t> lengths[] = {{0, 0},  {0, 1},   {1, 0},   {16, 16},
                                                         {17, 33}, {20, 1000}, {0, 16 * 1023}, {16 * 511, 16 * 511 + 15}};
  for (const auto& [aad_length, text_length] : lengths) {
    ASSERT_LE(rss3::ghash_blocks(aad_length, text_length), wire::kGcmHashPowers);
    const Bytes nonce = random_bytes(rng, 12);
    const Bytes aad = random_bytes(rng, aad_length);
    const auto [ciphertext, tag] = openssl_gcm(key, nonce, aad, random_bytes(rng, text_length));
    std::array<rss3::ByteShare, 3> ghash;
    for (std::size_t party = 0; party < 3; ++party) ghash[party] = rss3::ghash_share(held[party], aad, ciphertext);
    Bytes ours = rss3::reconstruct_bytes(ghash);
    Bytes j0 = nonce;
    j0.insert(j0.end(), {0, 0, 0, 1});
    const Bytes mask = openssl_ecb(key, j0);
    for (std::size_t i = 0; i < 16; ++i) ours[i] ^= mask[i];
    EXPECT_EQ(ours, tag) << aad_length << " " << text_length;
  }
}

}  // namespace
}  // namespace mpc::client
