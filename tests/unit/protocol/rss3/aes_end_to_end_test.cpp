// End to end: AES-128/256 encryption and decryption circuits (both S-box variants)
// evaluated by three parties on secret-shared round keys and blocks, against OpenSSL.
#include <gtest/gtest.h>

#include <openssl/evp.h>

#include <random>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/program.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "protocol/rss3/transpose.hpp"
#include "test_util.hpp"

namespace mpc::rss3 {
namespace {

using circuits::AesDirection;
using circuits::AesKeySize;
using circuits::SboxVariant;

std::vector<std::uint8_t> openssl_ecb(AesKeySize size, AesDirection direction, const std::vector<std::uint8_t>& key,
                                      const std::vector<std::uint8_t>& block) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  const EVP_CIPHER* cipher = size == AesKeySize::Aes128 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
  std::vector<std::uint8_t> out(16);
  int len = 0;
  if (direction == AesDirection::Encrypt) {
    EVP_EncryptInit_ex(ctx, cipher, nullptr, key.data(), nullptr);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    EVP_EncryptUpdate(ctx, out.data(), &len, block.data(), 16);
  } else {
    EVP_DecryptInit_ex(ctx, cipher, nullptr, key.data(), nullptr);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    EVP_DecryptUpdate(ctx, out.data(), &len, block.data(), 16);
  }
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

// Evaluates the AES circuit on (keys[n], blocks[n]) for every instance n by three parties.
std::vector<std::vector<std::uint8_t>> mpc_aes(const circuits::Program& program, AesKeySize size,
                                               const std::vector<std::vector<std::uint8_t>>& keys,
                                               const std::vector<std::vector<std::uint8_t>>& blocks, SimdLevel level,
                                               std::mt19937_64& rng) {
  const std::size_t n = keys.size();
  const std::size_t round_key_bytes = circuits::aes_round_key_bits(size) / 8;
  std::vector<std::uint8_t> round_keys(n * round_key_bytes), block_bytes(n * 16);
  for (std::size_t i = 0; i < n; ++i) {
    const auto expanded = circuits::aes_expand_key(keys[i]);
    EXPECT_EQ(expanded.size(), round_key_bytes);
    std::copy(expanded.begin(), expanded.end(), round_keys.begin() + i * round_key_bytes);
    std::copy(blocks[i].begin(), blocks[i].end(), block_bytes.begin() + i * 16);
  }
  const std::size_t rows = round_key_bytes * 8 + 128;
  EXPECT_EQ(rows, program.num_inputs);
  const std::size_t words = words_for(n);
  std::vector<std::uint64_t> clear(rows * words);
  slice(round_keys, round_key_bytes, n, clear, words, 0);
  slice(block_bytes, 16, n, clear, words, round_key_bytes * 8);
  const auto shares = share_matrix(clear, rows, n);
  const auto out = evaluate_three_parties(program, shares, level, BatchNonce{rng(), 1}, test::random_keys(rng));
  const auto opened = open_matrix(out);
  EXPECT_EQ(opened.size(), 128 * words);
  std::vector<std::uint8_t> result_bytes(n * 16);
  unslice(opened, words, 0, 16, n, result_bytes);
  std::vector<std::vector<std::uint8_t>> result(n);
  for (std::size_t i = 0; i < n; ++i) result[i].assign(result_bytes.begin() + i * 16, result_bytes.begin() + i * 16 + 16);
  return result;
}

struct AesCase {
  AesKeySize size;
  AesDirection direction;
  SboxVariant sbox;
};

class AesEndToEnd : public ::testing::TestWithParam<AesCase> {};

TEST_P(AesEndToEnd, MatchesOpenSsl) {
  const AesCase c = GetParam();
  const auto program = circuits::compile(circuits::build_aes_circuit(c.size, c.direction, c.sbox));
  const std::size_t key_bytes = c.size == AesKeySize::Aes128 ? 16 : 32;
  std::mt19937_64 rng(static_cast<std::uint64_t>(c.size) * 100 + static_cast<std::uint64_t>(c.direction) * 10 +
                      static_cast<std::uint64_t>(c.sbox));
  auto random_bytes = [&](std::size_t k) {
    std::vector<std::uint8_t> v(k);
    for (auto& b : v) b = static_cast<std::uint8_t>(rng());
    return v;
  };
  for (SimdLevel level : test::supported_levels()) {
    // ~10,000 blocks at the best level, a smaller odd batch at the others.
    const std::size_t n = level == best_simd_level() ? 10007 : 2049 + 64;
    std::vector<std::vector<std::uint8_t>> keys, blocks;
    // Instance 0: the FIPS-197 appendix C example key and block.
    std::vector<std::uint8_t> fips_key(key_bytes), fips_block(16);
    for (std::size_t i = 0; i < key_bytes; ++i) fips_key[i] = static_cast<std::uint8_t>(i);
    for (std::size_t i = 0; i < 16; ++i) fips_block[i] = static_cast<std::uint8_t>(0x11 * i);
    keys.push_back(fips_key);
    blocks.push_back(fips_block);
    for (std::size_t i = 1; i < n; ++i) {
      keys.push_back(random_bytes(key_bytes));
      blocks.push_back(random_bytes(16));
    }
    const auto result = mpc_aes(program, c.size, keys, blocks, level, rng);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < n; ++i) mismatches += result[i] != openssl_ecb(c.size, c.direction, keys[i], blocks[i]);
    EXPECT_EQ(mismatches, 0u) << simd_level_name(level);
    if (c.direction == AesDirection::Encrypt) {
      const std::vector<std::uint8_t> expected =
          c.size == AesKeySize::Aes128
              ? std::vector<std::uint8_t>{0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                                          0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a}
              : std::vector<std::uint8_t>{0x8e, 0xa2, 0xb7, 0xca, 0x51, 0x67, 0x45, 0xbf,
                                          0xea, 0xfc, 0x49, 0x90, 0x4b, 0x49, 0x60, 0x89};
      EXPECT_EQ(result[0], expected) << "FIPS-197 appendix C";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllVariants, AesEndToEnd,
    ::testing::Values(AesCase{AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::And32},
                      AesCase{AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::Depth4},
                      AesCase{AesKeySize::Aes128, AesDirection::Decrypt, SboxVariant::And32},
                      AesCase{AesKeySize::Aes128, AesDirection::Decrypt, SboxVariant::Depth4},
                      AesCase{AesKeySize::Aes256, AesDirection::Encrypt, SboxVariant::And32},
                      AesCase{AesKeySize::Aes256, AesDirection::Encrypt, SboxVariant::Depth4},
                      AesCase{AesKeySize::Aes256, AesDirection::Decrypt, SboxVariant::And32},
                      AesCase{AesKeySize::Aes256, AesDirection::Decrypt, SboxVariant::Depth4}));

}  // namespace
}  // namespace mpc::rss3
