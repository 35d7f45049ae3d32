// Bit-matrix transposes between records and bitsliced rows, 64 x 64 bits at a time
// with the classic recursive block swap (Warren, Hacker's Delight, 7-3): six rounds of
// masked shift/XOR, vectorised by the compiler (and cloned for AVX2 where supported).
#include "protocol/rss3/transpose.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/shares.hpp"
#include "protocol/rss3/target_clones.hpp"

namespace mpc::rss3 {
namespace {

inline std::uint64_t load_le(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, p, n);
  } else {
    for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  }
  return v;
}

inline void store_le(std::uint8_t* p, std::uint64_t v, std::size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, n);
  } else {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
  }
}

// In place: afterwards bit i of a[j] is the former bit j of a[i].
template <int J, class Word>
inline void swap_round(Word* a, std::uint64_t mask) {
  for (int k = 0; k < 64; k += 2 * J) {
    for (int i = k; i < k + J; ++i) {
      const Word t = ((a[i] >> J) ^ a[i + J]) & mask;
      a[i] ^= t << J;
      a[i + J] ^= t;
    }
  }
}


template <class Word>
inline void transpose_rounds(Word* a) {
  swap_round<32>(a, 0x00000000FFFFFFFFull);
  swap_round<16>(a, 0x0000FFFF0000FFFFull);
  swap_round<8>(a, 0x00FF00FF00FF00FFull);
  swap_round<4>(a, 0x0F0F0F0F0F0F0F0Full);
  swap_round<2>(a, 0x3333333333333333ull);
  swap_round<1>(a, 0x5555555555555555ull);
}

void check_shapes(std::size_t records_size, std::size_t record_bytes, std::size_t instances, std::size_t rows_size,
                  std::size_t words_per_row, std::size_t first_row) {
  if (record_bytes != 0 && instances > records_size / record_bytes)
    throw Error(Component::Protocol, "transpose: record buffer holds fewer than " + std::to_string(instances) +
                                         " records of " + std::to_string(record_bytes) + " bytes");
  if (words_per_row < words_for(instances))
    throw Error(Component::Protocol, "transpose: rows too short for the instance count");
  const std::size_t row_count = record_bytes * 8;
  if (record_bytes > (SIZE_MAX / 8) || first_row > SIZE_MAX - row_count ||
      (words_per_row != 0 && first_row + row_count > rows_size / words_per_row))
    throw Error(Component::Protocol, "transpose: row buffer too small");
}

}  // namespace

MPC_RSS3_CLONES void transpose64(std::uint64_t* a) { transpose_rounds(a); }

MPC_RSS3_CLONES void transpose64x4(Words4* a) { transpose_rounds(a); }

// Both directions work on blocks of kBlockWords consecutive words (512 instances) so that
// each row access touches whole cache lines: rows are far apart (often a power of two),
// and single-word accesses to them would thrash the L1 sets.
constexpr std::size_t kBlockWords = 8;

void slice(std::span<const std::uint8_t> records, std::size_t record_bytes, std::size_t instances,
           std::span<std::uint64_t> rows, std::size_t words_per_row, std::size_t first_row) {
  check_shapes(records.size(), record_bytes, instances, rows.size(), words_per_row, first_row);
  const std::size_t words = words_for(instances);
  const std::uint8_t* src = records.data();
  std::uint64_t* dst = rows.data();
  alignas(64) std::uint64_t m[kBlockWords][64];
  for (std::size_t w0 = 0; w0 < words; w0 += kBlockWords) {
    const std::size_t block_words = std::min(kBlockWords, words - w0);
    for (std::size_t g = 0; g * 8 < record_bytes; ++g) {
      const std::size_t group_bytes = std::min<std::size_t>(8, record_bytes - g * 8);
      for (std::size_t b = 0; b < block_words; ++b) {
        const std::size_t first = (w0 + b) * 64;
        const std::size_t count = std::min<std::size_t>(64, instances - first);
        const std::uint8_t* base = src + first * record_bytes + g * 8;
        if (group_bytes == 8) {
          for (std::size_t i = 0; i < count; ++i) m[b][i] = load_le(base + i * record_bytes, 8);
        } else {
          for (std::size_t i = 0; i < count; ++i) m[b][i] = load_le(base + i * record_bytes, group_bytes);
        }
        for (std::size_t i = count; i < 64; ++i) m[b][i] = 0;
        transpose64(m[b]);
      }
      std::uint64_t* out = dst + (first_row + g * 64) * words_per_row + w0;
      for (std::size_t j = 0; j < group_bytes * 8; ++j)
        for (std::size_t b = 0; b < block_words; ++b) out[j * words_per_row + b] = m[b][j];
    }
  }
  if (words < words_per_row) {
    for (std::size_t r = 0; r < record_bytes * 8; ++r)
      std::fill(dst + (first_row + r) * words_per_row + words, dst + (first_row + r + 1) * words_per_row,
                std::uint64_t{0});
  }
  wipe(m, sizeof m);
}

void unslice(std::span<const std::uint64_t> rows, std::size_t words_per_row, std::size_t first_row,
             std::size_t record_bytes, std::size_t instances, std::span<std::uint8_t> records) {
  check_shapes(records.size(), record_bytes, instances, rows.size(), words_per_row, first_row);
  const std::size_t words = words_for(instances);
  const std::uint64_t* src = rows.data();
  std::uint8_t* dst = records.data();
  alignas(64) std::uint64_t m[kBlockWords][64];
  for (std::size_t w0 = 0; w0 < words; w0 += kBlockWords) {
    const std::size_t block_words = std::min(kBlockWords, words - w0);
    for (std::size_t g = 0; g * 8 < record_bytes; ++g) {
      const std::size_t group_bytes = std::min<std::size_t>(8, record_bytes - g * 8);
      const std::size_t bits = group_bytes * 8;
      const std::uint64_t* in = src + (first_row + g * 64) * words_per_row + w0;
      for (std::size_t j = 0; j < bits; ++j)
        for (std::size_t b = 0; b < block_words; ++b) m[b][j] = in[j * words_per_row + b];
      for (std::size_t b = 0; b < block_words; ++b) {
        for (std::size_t j = bits; j < 64; ++j) m[b][j] = 0;
        transpose64(m[b]);
        const std::size_t first = (w0 + b) * 64;
        const std::size_t count = std::min<std::size_t>(64, instances - first);
        std::uint8_t* base = dst + first * record_bytes + g * 8;
        if (group_bytes == 8) {
          for (std::size_t i = 0; i < count; ++i) store_le(base + i * record_bytes, m[b][i], 8);
        } else {
          for (std::size_t i = 0; i < count; ++i) store_le(base + i * record_bytes, m[b][i], group_bytes);
        }
      }
    }
  }
  wipe(m, sizeof m);
}

}  // namespace mpc::rss3
