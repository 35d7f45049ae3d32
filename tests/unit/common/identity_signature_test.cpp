#include "common/identity_signature.hpp"

#include <gtest/gtest.h>
#include <sodium.h>

#include <array>
#include <cstdint>
#include <vector>

namespace mpc {
namespace {

struct KeyPair {
  std::array<std::uint8_t, 32> secret{}, x25519_public{};
};

KeyPair x25519_pair() {
  KeyPair pair;
  randombytes_buf(pair.secret.data(), pair.secret.size());
  crypto_scalarmult_base(pair.x25519_public.data(), pair.secret.data());
  return pair;
}

std::vector<std::uint8_t> message(std::size_t n) {
  std::vector<std::uint8_t> m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = static_cast<std::uint8_t>(i * 7 + 1);
  return m;
}

// libsodium's own Ed25519 keys are the reference: an Ed25519 key pair converted to X25519 with
// libsodium's conversions must give back the Edwards key (sign bit cleared), and a signature made
// from the converted X25519 secret must pass libsodium's stock Ed25519 verification under it.
TEST(IdentitySignature, MatchesLibsodiumEd25519Keys) {
  ASSERT_GE(sodium_init(), 0);
  int negated = 0;
  for (int round = 0; round < 64; ++round) {
    std::array<std::uint8_t, 32> ed_public{}, x_secret{}, x_public{};
    std::array<std::uint8_t, 64> ed_secret{};
    crypto_sign_keypair(ed_public.data(), ed_secret.data());
    ASSERT_EQ(crypto_sign_ed25519_pk_to_curve25519(x_public.data(), ed_public.data()), 0);
    ASSERT_EQ(crypto_sign_ed25519_sk_to_curve25519(x_secret.data(), ed_secret.data()), 0);
    std::array<std::uint8_t, 32> expected = ed_public;
    negated += expected[31] >> 7;
    expected[31] &= 0x7f;

    const auto converted = edwards_public_key(x_public);
    ASSERT_TRUE(converted.has_value());
    EXPECT_EQ(*converted, expected);

    const IdentitySigner signer(x_secret);
    EXPECT_EQ(signer.public_key(), expected);
    const auto m = message(static_cast<std::size_t>(round) * 5);
    const IdentitySignature signature = signer.sign(m);
    EXPECT_EQ(crypto_sign_verify_detached(signature.data(), m.data(), m.size(), expected.data()), 0);
    EXPECT_TRUE(identity_signature_valid(x_public, m, signature));
  }
  // Both signs of the Edwards key occurred, so both branches of the scalar's choice ran.
  EXPECT_GT(negated, 0);
  EXPECT_LT(negated, 64);
}

TEST(IdentitySignature, RefusesAnotherMessageKeyOrSignature) {
  ASSERT_GE(sodium_init(), 0);
  const KeyPair signer_keys = x25519_pair(), other = x25519_pair();
  const IdentitySigner signer(signer_keys.secret);
  const auto m = message(100);
  const IdentitySignature signature = signer.sign(m);
  ASSERT_TRUE(identity_signature_valid(signer_keys.x25519_public, m, signature));
  EXPECT_FALSE(identity_signature_valid(other.x25519_public, m, signature));
  for (std::size_t bit = 0; bit < m.size() * 8; bit += 37) {
    auto altered = m;
    altered[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    EXPECT_FALSE(identity_signature_valid(signer_keys.x25519_public, altered, signature)) << bit;
  }
  for (std::size_t bit = 0; bit < 512; bit += 29) {
    IdentitySignature altered = signature;
    altered[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    EXPECT_FALSE(identity_signature_valid(signer_keys.x25519_public, m, altered)) << bit;
  }
  // Two signatures of one message differ (fresh nonces) and both verify.
  const IdentitySignature again = signer.sign(m);
  EXPECT_NE(again, signature);
  EXPECT_TRUE(identity_signature_valid(signer_keys.x25519_public, m, again));
}

TEST(IdentitySignature, RefusesPublicKeysThatAreNoPoint) {
  std::array<std::uint8_t, 32> p_minus_one{}, p{};
  // p = 2^255 - 19 little-endian: 0xed, 0xff x 30, 0x7f.
  p.fill(0xff);
  p[0] = 0xed;
  p[31] = 0x7f;
  p_minus_one = p;
  p_minus_one[0] = 0xec;  // u = -1: u + 1 = 0 has no inverse
  EXPECT_FALSE(edwards_public_key(p).has_value());
  EXPECT_FALSE(edwards_public_key(p_minus_one).has_value());
  std::array<std::uint8_t, 32> all_ones{};
  all_ones.fill(0xff);
  EXPECT_FALSE(edwards_public_key(all_ones).has_value());
  IdentitySignature any{};
  EXPECT_FALSE(identity_signature_valid(p, message(8), any));
}

}  // namespace
}  // namespace mpc
