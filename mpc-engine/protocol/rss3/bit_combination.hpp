// Field elements from bitsliced words: the step of the AND check (and_check.hpp) that turns bits
// bound at the sum-check's challenges into GF(2^128) elements, one per lane.
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/rss3/gf128.hpp"

namespace mpc::rss3 {

inline constexpr std::size_t kMaxCombinedWords = 32;

// For each window c of `entries` consecutive words (entries a multiple of 4, at most 32):
// out[64 c + j] = sum over s < entries of coefficients[s] * (bit j of words[entries * c + s]).
// Constant time in the words: they are combined, never used as an index or a branch.
void combine_bits(const std::uint64_t* words, std::size_t windows, std::size_t entries, const Gf128* coefficients,
                  Gf128* out);

}  // namespace mpc::rss3
