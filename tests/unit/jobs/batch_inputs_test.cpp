#include "jobs/batch_inputs.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <random>

#include "common/error.hpp"

namespace mpc::jobs {
namespace {

TEST(AddToCounter, CarriesAcrossAllSixteenBytesLikeOpenSslCtr) {
  std::array<std::uint8_t, 16> counter{};
  counter.fill(0xff);
  counter[0] = 0x00;
  const auto next = add_to_counter(counter, 1);
  EXPECT_EQ(next[0], 0x01);
  for (int i = 1; i < 16; ++i) EXPECT_EQ(next[static_cast<std::size_t>(i)], 0x00);
  counter.fill(0xff);
  const std::array<std::uint8_t, 16> wrapped{};
  EXPECT_EQ(add_to_counter(counter, 1), wrapped);  // wraps modulo 2^128
  std::array<std::uint8_t, 16> zero{};
  const auto big = add_to_counter(zero, 0x0102030405060708ull);
  EXPECT_EQ(big[8], 0x01);
  EXPECT_EQ(big[15], 0x08);
}

TEST(AddToCounter, MatchesOpenSslCtrKeystreamBlocks) {
  // OpenSSL's CTR keystream for counter c is ECB(c), ECB(c+1), ...: check the counters agree.
  const std::array<std::uint8_t, 16> key{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  std::array<std::uint8_t, 16> counter{};
  counter.fill(0xff);
  counter[7] = 0x10;  // the low 64 bits wrap after one block
  constexpr int kBlocks = 3;
  std::vector<std::uint8_t> zeros(16 * kBlocks), ctr(16 * kBlocks), ecb_in, ecb(16 * kBlocks);
  for (int i = 0; i < kBlocks; ++i) {
    const auto block = add_to_counter(counter, static_cast<std::uint64_t>(i));
    ecb_in.insert(ecb_in.end(), block.begin(), block.end());
  }
  int length = 0;
  EVP_CIPHER_CTX* context = EVP_CIPHER_CTX_new();
  ASSERT_EQ(EVP_EncryptInit_ex(context, EVP_aes_128_ctr(), nullptr, key.data(), counter.data()), 1);
  ASSERT_EQ(EVP_EncryptUpdate(context, ctr.data(), &length, zeros.data(), static_cast<int>(zeros.size())), 1);
  ASSERT_EQ(EVP_EncryptInit_ex(context, EVP_aes_128_ecb(), nullptr, key.data(), nullptr), 1);
  EVP_CIPHER_CTX_set_padding(context, 0);
  ASSERT_EQ(EVP_EncryptUpdate(context, ecb.data(), &length, ecb_in.data(), static_cast<int>(ecb_in.size())), 1);
  EVP_CIPHER_CTX_free(context);
  EXPECT_EQ(ctr, ecb);
}

TEST(BroadcastBits, FillsExactlyTheRangeWithEachBit) {
  std::mt19937_64 random(42);
  for (std::size_t first : {0u, 1u, 63u, 64u, 65u, 100u}) {
    for (std::size_t count : {1u, 2u, 63u, 64u, 65u, 130u}) {
      const std::size_t words = 5;
      std::vector<std::uint64_t> component(16 * words);
      for (auto& word : component) word = random();
      const auto before = component;
      const std::vector<std::uint8_t> value{0xa5, 0x3c};
      broadcast_bits(component, words, 0, value, first, count);
      for (std::size_t row = 0; row < 16; ++row) {
        const bool bit = (value[row / 8] >> (row % 8)) & 1;
        for (std::size_t instance = 0; instance < words * 64; ++instance) {
          const bool got = (component[row * words + instance / 64] >> (instance % 64)) & 1;
          const bool was = (before[row * words + instance / 64] >> (instance % 64)) & 1;
          const bool inside = instance >= first && instance < first + count;
          ASSERT_EQ(got, inside ? bit : was) << "row " << row << " instance " << instance;
        }
      }
    }
  }
}

TEST(PublicBlocks, CountsFromTheSliceOffsetForCtrAndCopiesForEcb) {
  wire::ComputeRequest ctr;
  ctr.operation = wire::Operation::CtrKeystream;
  ctr.counter[15] = 0xfe;
  ctr.blocks = 10;
  std::vector<std::uint8_t> out(32);
  public_blocks(ctr, 1, 2, out);
  EXPECT_EQ(out[15], 0xff);
  EXPECT_EQ(out[14], 0x00);
  EXPECT_EQ(out[31], 0x00);
  EXPECT_EQ(out[30], 0x01);

  wire::ComputeRequest ecb;
  ecb.operation = wire::Operation::EcbEncrypt;
  ecb.blocks = 3;
  for (std::size_t i = 0; i < 48; ++i) ecb.input.push_back(static_cast<std::uint8_t>(i));
  public_blocks(ecb, 2, 1, std::span(out).first(16));
  EXPECT_EQ(out[0], 32);
  EXPECT_EQ(out[15], 47);
}

TEST(UnsliceOutputRecords, PacksBitsIntoBytesAndZeroesThePadding) {
  // Row r of instance n holds bit (r * 7 + n * 3) % 5 == 0, for 70 instances (two words a row).
  const std::size_t instances = 70;
  const std::size_t words = 2;
  for (std::size_t bits : {std::size_t{1}, std::size_t{3}, std::size_t{8}, std::size_t{96}, std::size_t{129}}) {
    std::vector<std::uint64_t> rows(bits * words, 0);
    auto bit_of = [](std::size_t r, std::size_t n) { return (r * 7 + n * 3) % 5 == 0 ? 1u : 0u; };
    for (std::size_t r = 0; r < bits; ++r)
      for (std::size_t n = 0; n < instances; ++n)
        rows[r * words + n / 64] |= static_cast<std::uint64_t>(bit_of(r, n)) << (n % 64);
    // Padding lanes of the last word hold garbage: they must not leak into the records.
    for (std::size_t r = 0; r < bits; ++r) rows[r * words + 1] |= ~0ull << (instances % 64);
    const std::size_t record = (bits + 7) / 8;
    std::vector<std::uint8_t> records(record * instances, 0xaa);
    unslice_output_records(rows, words, bits, instances, records);
    for (std::size_t n = 0; n < instances; ++n)
      for (std::size_t b = 0; b < record * 8; ++b) {
        const unsigned expected = b < bits ? bit_of(b, n) : 0u;
        ASSERT_EQ((records[n * record + b / 8] >> (b % 8)) & 1u, expected) << bits << " bits, instance " << n << " bit " << b;
      }
  }
  std::vector<std::uint64_t> rows(16 * 2);
  std::vector<std::uint8_t> wrong(3 * 70);
  EXPECT_THROW(unslice_output_records(rows, 2, 16, 70, wrong), Error);
  std::vector<std::uint8_t> records(3 * 70);
  EXPECT_THROW(unslice_output_records(rows, 2, 17, 70, records), Error);  // rows missing
}

}  // namespace
}  // namespace mpc::jobs
