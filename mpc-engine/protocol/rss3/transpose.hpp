// Bit-matrix transposes between "one record per instance" (bytes) and bitsliced rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace mpc::rss3 {

// In place: afterwards bit i of a[j] is the former bit j of a[i] (i, j < 64).
void transpose64(std::uint64_t* a);

// Four words side by side: lane m of a Words4 belongs to matrix m.
using Words4 = std::uint64_t __attribute__((vector_size(32)));
// Four transposes as transpose64 at once, matrix m in lane m of a[0..63].
void transpose64x4(Words4* a);

// records: `instances` records of `record_bytes` bytes each, back to back.
// rows: record_bytes * 8 rows of `words_per_row` words; bit j of a record (bit j % 8 of
// byte j / 8) goes to row `first_row + j`, instance n to bit n % 64 of word n / 64.
// words_per_row >= words_for(instances). Padding bits are written as zero.
void slice(std::span<const std::uint8_t> records, std::size_t record_bytes, std::size_t instances,
           std::span<std::uint64_t> rows, std::size_t words_per_row, std::size_t first_row = 0);

// Inverse of slice for rows [first_row, first_row + record_bytes * 8).
void unslice(std::span<const std::uint64_t> rows, std::size_t words_per_row, std::size_t first_row,
             std::size_t record_bytes, std::size_t instances, std::span<std::uint8_t> records);

}  // namespace mpc::rss3
