// tests/unit/protocol/two_party/fixed_key_hash_test.cpp: the fixed-key permutation is AES-128 under the
// documented key (OpenSSL as the reference), and the TCCR hash is sigma, tweak, pi and the
// feed-forward, the same on the AES-NI and portable paths.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "protocol/two_party/fixed_key_hash.hpp"

namespace {

using mpc::two_party::Block;

std::vector<Block> random_blocks(std::mt19937_64& rng, std::size_t n) {
  std::vector<Block> out(n);
  for (auto& b : out) b = {rng(), rng()};
  return out;
}

std::vector<Block> openssl_aes(const std::vector<Block>& in) {
  const std::string label = "mpc-kdc fixed-key AES v1";
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(label.data()), label.size(), digest);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nullptr, digest, nullptr), 1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  std::vector<Block> out(in.size());
  int written = 0;
  EXPECT_EQ(EVP_EncryptUpdate(ctx, reinterpret_cast<unsigned char*>(out.data()), &written,
                              reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size() * 16)),
            1);
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

TEST(FixedKeyHash, PermutationIsAesUnderTheDocumentedKey) {
  std::mt19937_64 rng(1);
  for (std::size_t n : {1u, 7u, 8u, 9u, 100u}) {
    auto blocks = random_blocks(rng, n);
    const auto expected = openssl_aes(blocks);
    mpc::two_party::fixed_key_permute(blocks.data(), n);
    EXPECT_EQ(blocks, expected) << n;
  }
}

TEST(FixedKeyHash, TccrMatchesItsDefinition) {
  std::mt19937_64 rng(2);
  for (std::size_t n : {1u, 8u, 13u, 64u}) {
    const auto in = random_blocks(rng, n);
    std::vector<Block> out(n);
    const std::uint64_t high = rng(), first = rng(), step = 3;
    mpc::two_party::tccr_hash(in.data(), out.data(), n, high, first, step);
    std::vector<Block> sigma(n), permuted(n);
    for (std::size_t e = 0; e < n; ++e) {
      sigma[e] = Block{in[e].hi, in[e].lo ^ in[e].hi};
      permuted[e] = sigma[e] ^ Block{first + e * step, high};
    }
    permuted = openssl_aes(permuted);
    for (std::size_t e = 0; e < n; ++e) EXPECT_EQ(out[e], permuted[e] ^ sigma[e]) << e;
  }
}

TEST(FixedKeyHash, DifferentTweaksGiveDifferentOutputs) {
  std::mt19937_64 rng(3);
  const auto in = random_blocks(rng, 1);
  Block a, b;
  mpc::two_party::tccr_hash(in.data(), &a, 1, 5, 0, 1);
  mpc::two_party::tccr_hash(in.data(), &b, 1, 5, 1, 1);
  EXPECT_NE(a, b);
  mpc::two_party::tccr_hash(in.data(), &b, 1, 6, 0, 1);
  EXPECT_NE(a, b);
}

}  // namespace
