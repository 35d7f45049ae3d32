// Local masks against a reference written from docs/ticket-format.md with OpenSSL and
// libsodium: the replicated shares of three servers and the XOR shares of two reconstruct to
// M(N || b) = XOR_j AES-256_{m_j}(N || b), m_j = BLAKE2b-256(key c_j; label || be32 kvno || name).
#include "jobs/gcm_masks.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <sodium.h>

#include <array>
#include <vector>

#include "common/error.hpp"
#include "jobs/nonce_pool.hpp"

namespace mpc::jobs {
namespace {

constexpr std::size_t kMaterial = 64;  // only the first 32 bytes (K) make the components

using Bytes = std::vector<std::uint8_t>;

wire::KeyId gcm_key(std::uint32_t version = 3) { return {"krbtgt/EXAMPLE.COM", version, wire::KeyAlgorithm::Aes256Gcm}; }

Bytes random_bytes(std::size_t n) {
  Bytes out(n);
  randombytes_buf(out.data(), out.size());
  return out;
}

Bytes xor_of(const Bytes& left, const Bytes& right) {
  Bytes out(left.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(left[i] ^ right[i]);
  return out;
}

// The additive components c_0, c_1, c_2 of a key and the replicated shares they make:
// x_0 ^ x_1 ^ x_2 = 0 and a_i = x_{i-1} ^ v (rss3/shares.hpp), so a_i = c_i.
struct Sharing {
  std::array<Bytes, 3> components;
  std::array<SecretBytes, 3> shares;  // x_i || a_i
};

Sharing share_material(const Bytes& material) {
  Sharing out;
  std::array<Bytes, 3> x{random_bytes(kMaterial), random_bytes(kMaterial), {}};
  x[2] = xor_of(x[0], x[1]);
  for (int i = 0; i < 3; ++i) {
    const Bytes a = xor_of(x[(i + 2) % 3], material);
    out.components[i] = Bytes(a.begin(), a.begin() + 32);
    Bytes share = x[i];
    share.insert(share.end(), a.begin(), a.end());
    out.shares[i] = SecretBytes(share);
  }
  return out;
}

Bytes reference_term(const wire::KeyId& key, const Bytes& component, const wire::GcmNonce& nonce, std::uint32_t block) {
  static const char label[] = "mpc-kdc gcm local mask key v1";
  crypto_generichash_state state;
  crypto_generichash_init(&state, component.data(), component.size(), 32);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(label), sizeof label - 1);
  const std::uint8_t version[4] = {static_cast<std::uint8_t>(key.version >> 24), static_cast<std::uint8_t>(key.version >> 16),
                                   static_cast<std::uint8_t>(key.version >> 8), static_cast<std::uint8_t>(key.version)};
  crypto_generichash_update(&state, version, 4);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(key.name.data()), key.name.size());
  std::array<std::uint8_t, 32> mask_key{};
  crypto_generichash_final(&state, mask_key.data(), mask_key.size());
  std::array<std::uint8_t, 16> input{};
  std::copy(nonce.begin(), nonce.end(), input.begin());
  for (int i = 0; i < 4; ++i) input[12 + i] = static_cast<std::uint8_t>(block >> (24 - 8 * i));
  Bytes out(16);
  EVP_CIPHER_CTX* cipher = EVP_CIPHER_CTX_new();
  int written = 0;
  EXPECT_EQ(EVP_EncryptInit_ex(cipher, EVP_aes_256_ecb(), nullptr, mask_key.data(), nullptr), 1);
  EXPECT_EQ(EVP_EncryptUpdate(cipher, out.data(), &written, input.data(), 16), 1);
  EVP_CIPHER_CTX_free(cipher);
  return out;
}

Bytes reference_masks(const wire::KeyId& key, const std::array<Bytes, 3>& components, const wire::GcmNonce& nonce,
                      std::uint32_t first, std::size_t blocks) {
  Bytes out;
  for (std::size_t b = 0; b < blocks; ++b) {
    Bytes block(16, 0);
    for (const Bytes& component : components)
      block = xor_of(block, reference_term(key, component, nonce, first + static_cast<std::uint32_t>(b)));
    out.insert(out.end(), block.begin(), block.end());
  }
  return out;
}

wire::GcmNonce local_nonce(std::uint32_t counter) {
  return make_gcm_nonce(0x1122334455667788ull, counter | wire::kLocalMaskCounterBit);
}

TEST(GcmMasksTest, ThreeReplicatedSharesOpenToTheReference) {
  const Sharing sharing = share_material(random_bytes(kMaterial));
  const wire::GcmNonce nonce = local_nonce(41);
  constexpr std::size_t kBlocks = 3;
  const Bytes expected = reference_masks(gcm_key(), sharing.components, nonce, 1, kBlocks);
  std::array<rss3::ByteShare, 3> shares;
  for (int i = 0; i < 3; ++i) {
    const SecretBytes components = replicated_mask_components(sharing.shares[i]);
    EXPECT_EQ(Bytes(components.data(), components.data() + 32), sharing.components[i]);
    EXPECT_EQ(Bytes(components.data() + 32, components.data() + 64), sharing.components[(i + 2) % 3]);
    shares[i] = replicated_masks(MaskKeys(gcm_key(), components.span()), nonce, 1, kBlocks);
  }
  Bytes x_sum(kBlocks * 16, 0);
  for (int i = 0; i < 3; ++i) {
    // v = a_i ^ x_{i-1}, three ways.
    EXPECT_EQ(xor_of(shares[i].a, shares[(i + 2) % 3].x), expected) << "party " << i;
    x_sum = xor_of(x_sum, shares[i].x);
  }
  EXPECT_EQ(x_sum, Bytes(kBlocks * 16, 0));
}

TEST(GcmMasksTest, AnyTwoServersXorSharesOpenToTheSameMasks) {
  // Two of three serve as a pair: the first (after the missing one) computes its two components,
  // the second the third one (node/pair_service.hpp).
  const Sharing sharing = share_material(random_bytes(kMaterial));
  const wire::GcmNonce nonce = local_nonce(7);
  const Bytes expected = reference_masks(gcm_key(), sharing.components, nonce, 1, 2);
  for (int missing = 0; missing < 3; ++missing) {
    const int leader = (missing + 1) % 3;
    const int second = (missing + 2) % 3;
    const SecretBytes leader_components = replicated_mask_components(sharing.shares[leader]);
    const SecretBytes second_components = replicated_mask_components(sharing.shares[second]);
    Bytes leader_share(32);
    Bytes second_share(32);
    MaskKeys(gcm_key(), leader_components.span()).xor_terms(nonce, 1, leader_share);
    MaskKeys(gcm_key(), second_components.span().first(kMaskComponentBytes)).xor_terms(nonce, 1, second_share);
    EXPECT_EQ(xor_of(leader_share, second_share), expected) << "server " << missing + 1 << " missing";
  }
}

TEST(GcmMasksTest, ATwoServerClustersXorSharesAreItsComponents) {
  const Bytes first = random_bytes(kMaterial);
  const Bytes second = random_bytes(kMaterial);
  const wire::GcmNonce nonce = local_nonce(9);
  Bytes expected(16, 0);
  for (const Bytes* share : {&first, &second})
    expected = xor_of(expected, reference_term(gcm_key(), Bytes(share->begin(), share->begin() + 32), nonce, 2));
  Bytes sum(16, 0);
  for (const Bytes* share : {&first, &second}) {
    Bytes out(16);
    MaskKeys(gcm_key(), xor_mask_component(*share).span()).xor_terms(nonce, 2, out);
    sum = xor_of(sum, out);
  }
  EXPECT_EQ(sum, expected);
}

TEST(GcmMasksTest, MasksDependOnTheKeyIdTheNonceAndTheBlock) {
  const Sharing sharing = share_material(random_bytes(kMaterial));
  const SecretBytes components = replicated_mask_components(sharing.shares[0]);
  Bytes base(16);
  Bytes other(16);
  MaskKeys(gcm_key(3), components.span()).xor_terms(local_nonce(1), 1, base);
  MaskKeys(gcm_key(4), components.span()).xor_terms(local_nonce(1), 1, other);
  EXPECT_NE(base, other);
  MaskKeys(gcm_key(3), components.span()).xor_terms(local_nonce(2), 1, other);
  EXPECT_NE(base, other);
  MaskKeys(gcm_key(3), components.span()).xor_terms(local_nonce(1), 2, other);
  EXPECT_NE(base, other);
}

TEST(GcmMasksTest, RefusesSharesAndComponentsOfTheWrongSize) {
  EXPECT_THROW(replicated_mask_components(SecretBytes(Bytes(40))), Error);
  EXPECT_THROW(xor_mask_component(Bytes(31)), Error);
  EXPECT_THROW(MaskKeys(gcm_key(), Bytes(33)), Error);
  EXPECT_THROW(MaskKeys(gcm_key(), Bytes{}), Error);
  const Bytes one(32, 1);
  EXPECT_THROW(replicated_masks(MaskKeys(gcm_key(), one), local_nonce(1), 1, 1), Error);
}

TEST(GcmMasksTest, TheMarkIsTheCountersTopBit) {
  EXPECT_TRUE(wire::is_local_mask_nonce(local_nonce(0)));
  EXPECT_FALSE(wire::is_local_mask_nonce(make_gcm_nonce(0x1122334455667788ull, 0x7fffffffu)));
}

}  // namespace
}  // namespace mpc::jobs
