// Correlated randomness: alpha_0 ^ alpha_1 ^ alpha_2 = 0, the documented counter-block
// layout (checked against AES-128-ECB of explicit counter blocks), distinct nonces,
// output-mask offsets and counter-range limits.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <random>

#include "common/error.hpp"
#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/rss3/prf_vaes.hpp"
#include "test_util.hpp"

namespace mpc::rss3 {
namespace {

std::array<std::uint8_t, 16> aes_ecb(const PrfKey& key, const std::array<std::uint8_t, 16>& in) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  std::array<std::uint8_t, 16> out{};
  int len = 0;
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nullptr, key.data(), nullptr), 1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  EXPECT_EQ(EVP_EncryptUpdate(ctx, out.data(), &len, in.data(), 16), 1);
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

std::array<std::uint8_t, 16> counter_block(BatchNonce nonce, std::uint32_t counter) {
  std::array<std::uint8_t, 16> b{};
  for (int i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(nonce.epoch >> (56 - 8 * i));
  for (int i = 0; i < 4; ++i) b[8 + i] = static_cast<std::uint8_t>(nonce.sequence >> (24 - 8 * i));
  for (int i = 0; i < 4; ++i) b[12 + i] = static_cast<std::uint8_t>(counter >> (24 - 8 * i));
  return b;
}

// Keystream byte j of F(key) at counter `base` + j / 16, computed block by block with ECB.
std::vector<std::uint8_t> reference_stream(const PrfKey& key, BatchNonce nonce, std::uint32_t base, std::size_t n) {
  std::vector<std::uint8_t> out;
  for (std::uint32_t c = base; out.size() < n; ++c) {
    const auto block = aes_ecb(key, counter_block(nonce, c));
    out.insert(out.end(), block.begin(), block.end());
  }
  out.resize(n);
  return out;
}

TEST(CorrelatedRandomness, MatchesDocumentedCounterLayout) {
  const PrfKey own{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const PrfKey previous{0xff, 0xee, 0xdd};
  const BatchNonce nonce{0x0102030405060708ull, 0x0a0b0c0du};
  CorrelatedRandomness randomness(own, previous, nonce);
  std::vector<std::uint8_t> alpha(64 + 48);
  randomness.next_alpha({alpha.data(), 64});
  randomness.next_alpha({alpha.data() + 64, 48});
  const auto f_own = reference_stream(own, nonce, 0, alpha.size());
  const auto f_previous = reference_stream(previous, nonce, 0, alpha.size());
  for (std::size_t j = 0; j < alpha.size(); ++j) ASSERT_EQ(alpha[j], f_own[j] ^ f_previous[j]) << j;

  std::vector<std::uint8_t> mask_own(40), mask_previous(40);
  randomness.output_masks(32, mask_own, mask_previous);
  const auto ref_own = reference_stream(own, nonce, kOutputMaskCounterBase + 2, 40);
  const auto ref_previous = reference_stream(previous, nonce, kOutputMaskCounterBase + 2, 40);
  EXPECT_EQ(mask_own, ref_own);
  EXPECT_EQ(mask_previous, ref_previous);
}

// One key's half of the alpha stream, as the AND check draws it (VAES where the CPU has it):
// the documented counter blocks under that key, for lengths around the VAES kernel's sixteen
// blocks per pass and its four-block tail.
TEST(CorrelatedRandomness, PrfStreamIsOneKeysHalf) {
  const PrfKey key{9, 8, 7, 6, 5, 4, 3, 2, 1};
  const BatchNonce nonce{0x1122334455667788ull, 0x99aabbccu};
  for (std::size_t blocks : {1u, 3u, 4u, 5u, 16u, 17u, 300u}) {
    std::vector<std::uint8_t> out(16 * blocks, 0x5a);
    prf_stream(key, nonce, out);
    EXPECT_EQ(out, reference_stream(key, nonce, 0, out.size())) << blocks << " blocks";
  }
}

TEST(CorrelatedRandomness, AlphasOfThreePartiesSumToZero) {
  std::mt19937_64 rng(5);
  const auto keys = test::random_keys(rng);
  const BatchNonce nonce{rng(), 17};
  std::vector<std::unique_ptr<CorrelatedRandomness>> parties;
  for (int i = 0; i < 3; ++i)
    parties.push_back(std::make_unique<CorrelatedRandomness>(keys[i], keys[previous_party(i)], nonce));
  std::size_t total = 0, nonzero = 0;
  for (std::size_t size : {16u, 256u, 4096u, 65536u, 48u, 1u << 20}) {
    std::vector<std::uint8_t> a[3];
    for (int i = 0; i < 3; ++i) {
      a[i].resize(size);
      parties[i]->next_alpha(a[i]);
    }
    for (std::size_t j = 0; j < size; ++j) {
      ASSERT_EQ(a[0][j] ^ a[1][j] ^ a[2][j], 0) << size << " " << j;
      nonzero += a[0][j] != 0;
    }
    total += size;
  }
  EXPECT_GT(nonzero, total * 9 / 10);  // alpha itself is not trivially zero
}

TEST(CorrelatedRandomness, DistinctNoncesGiveDistinctStreams) {
  std::mt19937_64 rng(6);
  const auto keys = test::random_keys(rng);
  const BatchNonce nonces[] = {{1, 0}, {1, 1}, {2, 0}, {0x100000000ull, 0}, {0, 0x80000000u}};
  std::vector<std::vector<std::uint8_t>> streams;
  for (const auto& nonce : nonces) {
    CorrelatedRandomness randomness(keys[0], keys[2], nonce);
    std::vector<std::uint8_t> alpha(4096);
    randomness.next_alpha(alpha);
    std::vector<std::uint8_t> own(64), previous(64);
    randomness.output_masks(0, own, previous);
    alpha.insert(alpha.end(), own.begin(), own.end());
    streams.push_back(alpha);
  }
  for (std::size_t i = 0; i < streams.size(); ++i)
    for (std::size_t j = i + 1; j < streams.size(); ++j) {
      std::size_t equal_blocks = 0;
      for (std::size_t b = 0; b < streams[i].size() / 16; ++b)
        equal_blocks += std::equal(streams[i].begin() + b * 16, streams[i].begin() + b * 16 + 16,
                                   streams[j].begin() + b * 16);
      EXPECT_EQ(equal_blocks, 0u) << i << " " << j;
    }
  // Same nonce, same keys: same stream (every party must draw identical alpha).
  CorrelatedRandomness a(keys[0], keys[2], nonces[0]), b(keys[0], keys[2], nonces[0]);
  std::vector<std::uint8_t> sa(256), sb(256);
  a.next_alpha(sa);
  b.next_alpha(sb);
  EXPECT_EQ(sa, sb);
}

TEST(CorrelatedRandomness, OutputMasksPartialBlocksAndPairing) {
  std::mt19937_64 rng(7);
  const auto keys = test::random_keys(rng);
  const BatchNonce nonce{99, 3};
  CorrelatedRandomness p0(keys[0], keys[2], nonce), p1(keys[1], keys[0], nonce);
  std::vector<std::uint8_t> whole_own(100), whole_previous(100);
  p0.output_masks(0, whole_own, whole_previous);
  for (std::size_t offset : {0u, 1u, 5u, 15u, 16u, 17u, 33u}) {
    for (std::size_t size : {1u, 7u, 16u, 30u, 50u}) {
      if (offset + size > 100) continue;
      std::vector<std::uint8_t> own(size), previous(size);
      p0.output_masks(offset, own, previous);
      EXPECT_TRUE(std::equal(own.begin(), own.end(), whole_own.begin() + offset)) << offset << " " << size;
      EXPECT_TRUE(std::equal(previous.begin(), previous.end(), whole_previous.begin() + offset));
    }
  }
  // Party 0's own mask F(k_0) is party 1's previous mask.
  std::vector<std::uint8_t> own1(100), previous1(100);
  p1.output_masks(0, own1, previous1);
  EXPECT_EQ(previous1, whole_own);
  EXPECT_NE(own1, whole_own);
  // Output masks come from a counter range disjoint from alpha: drawing alpha changes nothing.
  std::vector<std::uint8_t> alpha(1024);
  p0.next_alpha(alpha);
  std::vector<std::uint8_t> again_own(100), again_previous(100);
  p0.output_masks(0, again_own, again_previous);
  EXPECT_EQ(again_own, whole_own);
}

// The VAES backend (where the CPU has it) and the OpenSSL backend give identical alpha,
// for every tail length and across many calls.
TEST(CorrelatedRandomness, BackendsAgree) {
  std::mt19937_64 rng(8);
  const auto keys = test::random_keys(rng);
  const BatchNonce nonce{rng(), 0xfffffff0u};
  CorrelatedRandomness reference(keys[1], keys[0], nonce, PrfBackend::OpenSsl);
  EXPECT_EQ(reference.backend(), PrfBackend::OpenSsl);
  CorrelatedRandomness automatic(keys[1], keys[0], nonce);
  if (automatic.backend() != PrfBackend::Vaes) GTEST_SKIP() << "no VAES on this CPU";
  CorrelatedRandomness vaes(keys[1], keys[0], nonce, PrfBackend::Vaes);
  std::size_t total = 0;
  for (std::size_t blocks : {1u, 2u, 3u, 4u, 5u, 15u, 16u, 17u, 31u, 33u, 64u, 255u, 4096u, 1u, 7u}) {
    std::vector<std::uint8_t> a(blocks * 16), b(blocks * 16), c(blocks * 16, 0xee);
    reference.next_alpha(a);
    automatic.next_alpha(b);
    vaes.next_alpha(c);
    ASSERT_EQ(a, b) << blocks << " blocks after " << total;
    ASSERT_EQ(a, c) << blocks << " blocks after " << total;
    total += blocks;
  }
  // Nothing is written beyond the requested bytes.
  std::vector<std::uint8_t> guard(64, 0x5a);
  vaes.next_alpha({guard.data(), 16});
  for (std::size_t j = 16; j < guard.size(); ++j) ASSERT_EQ(guard[j], 0x5a);
}

// Each VAES width this CPU runs, called directly, against AES-128-ECB of the counter blocks:
// fused two-key alpha and one key's stream, every tail length, counters up to 2^32 - 1, and
// nothing written past the end. On an AVX-512 machine this covers the 256-bit kernels too,
// which such a machine never dispatches to.
TEST(CorrelatedRandomness, EachVaesWidthMatchesAesOfTheCounterBlocks) {
  struct Width {
    const char* name;
    bool supported;
    void (*expand)(const std::uint8_t*, detail::AesRoundKeys&);
    void (*xor2)(const detail::AesRoundKeys&, const detail::AesRoundKeys&, const std::uint8_t*, std::uint32_t,
                 std::uint8_t*, std::size_t);
    void (*one)(const detail::AesRoundKeys&, const std::uint8_t*, std::uint32_t, std::uint8_t*, std::size_t);
  };
  const Width widths[] = {
      {"zmm", detail::vaes512_supported(), detail::vaes512_expand_key, detail::vaes512_ctr_xor2, detail::vaes512_ctr},
      {"ymm", detail::vaes256_supported(), detail::vaes256_expand_key, detail::vaes256_ctr_xor2, detail::vaes256_ctr}};
  std::mt19937_64 rng(12);
  const auto keys = test::random_keys(rng);
  const BatchNonce nonce{rng(), 0x89abcdefu};
  const auto prefix_block = counter_block(nonce, 0);
  int ran = 0;
  for (const Width& width : widths) {
    if (!width.supported) continue;
    ++ran;
    detail::AesRoundKeys own{}, previous{};
    width.expand(keys[0].data(), own);
    width.expand(keys[1].data(), previous);
    for (const std::uint32_t first : {0u, 5u, 0xfffffff0u}) {
      for (std::size_t blocks : {1u, 2u, 3u, 7u, 8u, 9u, 15u, 16u}) {
        std::vector<std::uint8_t> fused(blocks * 16 + 32, 0x5a), single(blocks * 16 + 32, 0x5a);
        width.xor2(own, previous, prefix_block.data(), first, fused.data(), blocks);
        width.one(own, prefix_block.data(), first, single.data(), blocks);
        const auto a = reference_stream(keys[0], nonce, first, blocks * 16);
        const auto b = reference_stream(keys[1], nonce, first, blocks * 16);
        for (std::size_t j = 0; j < blocks * 16; ++j) {
          ASSERT_EQ(single[j], a[j]) << width.name << " from " << first << ", " << blocks << " blocks, byte " << j;
          ASSERT_EQ(fused[j], a[j] ^ b[j]) << width.name << " from " << first << ", " << blocks << " blocks, byte " << j;
        }
        for (std::size_t j = blocks * 16; j < fused.size(); ++j) {
          ASSERT_EQ(fused[j], 0x5a) << width.name << " wrote past " << blocks << " blocks";
          ASSERT_EQ(single[j], 0x5a) << width.name << " wrote past " << blocks << " blocks";
        }
      }
    }
  }
  if (ran == 0) GTEST_SKIP() << "no VAES on this CPU";
}

// Output masks from the VAES backend equal OpenSSL's for every offset within a block, lengths
// around a block, and the last counters of the reserved range; drawing them first, before any
// alpha, leaves alpha as it was.
TEST(CorrelatedRandomness, OutputMaskBackendsAgree) {
  std::mt19937_64 rng(9);
  const auto keys = test::random_keys(rng);
  const BatchNonce nonce{rng(), 77};
  CorrelatedRandomness reference(keys[2], keys[1], nonce, PrfBackend::OpenSsl);
  if (CorrelatedRandomness(keys[2], keys[1], nonce).backend() != PrfBackend::Vaes)
    GTEST_SKIP() << "no VAES on this CPU";
  CorrelatedRandomness vaes(keys[2], keys[1], nonce, PrfBackend::Vaes);
  const std::size_t last_block = (std::size_t{0x100000000} - kOutputMaskCounterBase - 1) * 16;
  for (std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{31},
                             std::size_t{4096 + 3}, last_block - 48 + 5, last_block}) {
    for (std::size_t size : {1u, 11u, 15u, 16u, 17u, 32u, 45u, 100u}) {
      if (offset + size > last_block + 16) continue;
      std::vector<std::uint8_t> own_ref(size), previous_ref(size), own(size, 0xa5), previous(size, 0x5a);
      reference.output_masks(offset, own_ref, previous_ref);
      vaes.output_masks(offset, own, previous);
      ASSERT_EQ(own, own_ref) << offset << " " << size;
      ASSERT_EQ(previous, previous_ref) << offset << " " << size;
    }
  }
  std::vector<std::uint8_t> a(256), b(256);
  reference.next_alpha(a);
  vaes.next_alpha(b);
  EXPECT_EQ(a, b);
  CorrelatedRandomness fresh(keys[2], keys[1], nonce, PrfBackend::OpenSsl);
  std::vector<std::uint8_t> c(256);
  fresh.next_alpha(c);
  EXPECT_EQ(a, c);
}

TEST(CorrelatedRandomness, RejectsBadRequests) {
  const PrfKey k0{1}, k1{2};
  CorrelatedRandomness randomness(k0, k1, BatchNonce{1, 1});
  std::vector<std::uint8_t> buffer(64);
  EXPECT_THROW(randomness.next_alpha({buffer.data(), 15}), Error);
  EXPECT_THROW(randomness.next_alpha({buffer.data(), 17}), Error);
  randomness.next_alpha({buffer.data(), 0});
  // Exhaustion is detected before any memory is touched (the span is never dereferenced).
  EXPECT_THROW(randomness.next_alpha({buffer.data(), (std::size_t{kOutputMaskCounterBase} + 1) * 16}), Error);
  std::vector<std::uint8_t> a(16), b(16), c(15);
  EXPECT_THROW(randomness.output_masks(0, a, c), Error);
  const std::size_t last_block = (std::size_t{0x100000000} - kOutputMaskCounterBase - 1) * 16;
  randomness.output_masks(last_block, a, b);  // the very last counter value
  EXPECT_THROW(randomness.output_masks(last_block + 1, a, b), Error);
  EXPECT_THROW(randomness.output_masks(last_block + 16, a, b), Error);
  EXPECT_THROW(randomness.output_masks(~std::size_t{0} - 4, a, b), Error);
}

}  // namespace
}  // namespace mpc::rss3
