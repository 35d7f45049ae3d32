// Field elements from bitsliced words: the step of the AND check (and_check.hpp) that turns bits
// bound at the sum-check's challenges into GF(2^128) elements, one per lane.
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/rss3/gf128.hpp"
#include "protocol/rss3/transpose.hpp"

namespace mpc::rss3 {

inline constexpr std::size_t kMaxCombinedWords = 32;

// For each window c of `entries` consecutive words (entries a multiple of 4, at most 32):
// out[64 c + j] = sum over s < entries of coefficients[s] * (bit j of words[entries * c + s]).
// Constant time in the words: they are combined, never used as an index or a branch.
// Takes the GFNI kernel below where the CPU has it and entries is a multiple of 8.
void combine_bits(const std::uint64_t* words, std::size_t windows, std::size_t entries, const Gf128* coefficients,
                  Gf128* out);

namespace detail {
using CombineBitsKernel = void (*)(const std::uint64_t* words, std::size_t windows, std::size_t entries,
                                   const Gf128* coefficients, Gf128* out);
// combine_bits without the choice of kernel: AVX2 or baseline, for any entries it accepts.
void portable_combine_bits(const std::uint64_t* words, std::size_t windows, std::size_t entries,
                           const Gf128* coefficients, Gf128* out);
// GFNI and AVX-512 (BW, VBMI), for entries a multiple of 8 (at most 32); null when not built
// in or this CPU lacks them.
CombineBitsKernel gfni_combine_bits();
}  // namespace detail

// For two multilinear functions X, Y of `variables` bit variables (at most 5), given on
// {0, 1}^variables as words (entry s: variable b is bit b of s; 64 lanes side by side), writes
// X(p) & Y(p) for every point p of {0, 1, inf}^variables, p = sum of d_b 3^b with digit 2 for inf
// (the leading coefficient: the XOR of the values at 0 and 1). On these points X, Y and the
// product of the two stay bits.
// Up to four windows at once, side by side in the lanes of a vector: x[m], y[m] for m < count;
// window m's products go to products[3^variables m + p].
// `scratch` holds kGridScratch vectors, 32-byte aligned (an array, not a std::vector, whose
// allocator ignores the vector type's alignment); the caller wipes it when done.
inline constexpr std::size_t kGridWindows = 4;
inline constexpr std::size_t kGridScratch = 4 * 243;
void grid_products(const std::uint64_t* const* x, const std::uint64_t* const* y, std::size_t count,
                   unsigned variables, std::uint64_t* products, Words4* scratch);

}  // namespace mpc::rss3
