// Bit transposes: bit-exact against a naive reference, round trips for awkward instance
// counts and record sizes, padding written as zero, offsets, and size checks.
#include <gtest/gtest.h>

#include <random>

#include "common/error.hpp"
#include "protocol/rss3/shares.hpp"
#include "protocol/rss3/transpose.hpp"

namespace mpc::rss3 {
namespace {

bool record_bit(const std::vector<std::uint8_t>& records, std::size_t record_bytes, std::size_t n, std::size_t j) {
  return (records[n * record_bytes + j / 8] >> (j % 8)) & 1;
}

bool row_bit(const std::vector<std::uint64_t>& rows, std::size_t words_per_row, std::size_t row, std::size_t n) {
  return (rows[row * words_per_row + n / 64] >> (n % 64)) & 1;
}

TEST(Transpose, MatchesNaiveAndRoundTrips) {
  std::mt19937_64 rng(21);
  for (std::size_t instances : {1u, 31u, 63u, 64u, 65u, 1000u, 2047u, 2048u, 2049u}) {
    for (std::size_t record_bytes : {1u, 3u, 8u, 9u, 16u, 32u}) {
      for (std::size_t extra_words : {0u, 2u}) {
        const std::size_t words_per_row = words_for(instances) + extra_words;
        const std::size_t first_row = extra_words;  // also exercise an offset
        std::vector<std::uint8_t> records(instances * record_bytes);
        for (auto& b : records) b = static_cast<std::uint8_t>(rng());
        std::vector<std::uint64_t> rows((first_row + record_bytes * 8 + 1) * words_per_row);
        for (auto& w : rows) w = rng();  // garbage that must be overwritten (padding) or kept
        const auto before = rows;
        slice(records, record_bytes, instances, rows, words_per_row, first_row);
        for (std::size_t j = 0; j < record_bytes * 8; ++j) {
          const std::size_t row = first_row + j;
          for (std::size_t n = 0; n < instances; ++n)
            ASSERT_EQ(row_bit(rows, words_per_row, row, n), record_bit(records, record_bytes, n, j))
                << instances << " " << record_bytes << " bit " << j << " instance " << n;
          for (std::size_t n = instances; n < words_per_row * 64; ++n)
            ASSERT_FALSE(row_bit(rows, words_per_row, row, n)) << "padding bit " << n;
        }
        for (std::size_t w = 0; w < first_row * words_per_row; ++w) ASSERT_EQ(rows[w], before[w]);
        for (std::size_t w = (first_row + record_bytes * 8) * words_per_row; w < rows.size(); ++w)
          ASSERT_EQ(rows[w], before[w]);
        std::vector<std::uint8_t> back(records.size(), 0xcc);
        unslice(rows, words_per_row, first_row, record_bytes, instances, back);
        ASSERT_EQ(back, records) << instances << " " << record_bytes;
      }
    }
  }
}

TEST(Transpose, UnsliceIgnoresPaddingBits) {
  std::vector<std::uint64_t> rows(8, ~std::uint64_t{0});
  std::vector<std::uint8_t> records(3);
  unslice(rows, 1, 0, 1, 3, records);
  EXPECT_EQ(records, (std::vector<std::uint8_t>{0xff, 0xff, 0xff}));
  std::vector<std::uint8_t> bigger(4, 0x11);
  unslice(rows, 1, 0, 1, 3, bigger);
  EXPECT_EQ(bigger[3], 0x11);  // nothing written beyond the instances
}

TEST(Transpose, RejectsShortBuffers) {
  std::vector<std::uint8_t> records(16 * 10);
  std::vector<std::uint64_t> rows(128);
  EXPECT_NO_THROW(slice(records, 16, 10, rows, 1));
  EXPECT_THROW(slice({records.data(), records.size() - 1}, 16, 10, rows, 1), Error);
  EXPECT_THROW(slice(records, 16, 10, {rows.data(), 127}, 1), Error);
  EXPECT_THROW(slice(records, 16, 10, rows, 1, 1), Error);
  EXPECT_THROW(slice(records, 16, 100, rows, 1), Error);
  EXPECT_THROW(unslice(rows, 1, 0, 16, 11, records), Error);
  EXPECT_THROW(unslice({rows.data(), 100}, 1, 0, 16, 10, records), Error);
  std::vector<std::uint64_t> two(256);
  EXPECT_THROW(slice(records, 16, 10, two, 0), Error);  // words_per_row < words_for(instances)
  // Zero instances / zero-byte records are no-ops.
  EXPECT_NO_THROW(slice({}, 16, 0, rows, 0));
  EXPECT_NO_THROW(unslice(rows, 1, 0, 0, 10, records));
}

}  // namespace
}  // namespace mpc::rss3
