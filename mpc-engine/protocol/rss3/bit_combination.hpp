// Field elements from bitsliced words: the step of the AND check (and_check.hpp) that turns bits
// bound at the sum-check's challenges into GF(2^128) elements, one per lane.
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/rss3/gf128.hpp"

namespace mpc::rss3 {

inline constexpr std::size_t kMaxCombinedWords = 64;

// A window of 2 * half entries read from two planes: entry s < half of window c is
// first[half c + s], entry half + s is second[half c + s]. (The AND check's two products of a
// gate: sigma, the highest variable of a window, picks the plane.)
struct WindowPlanes {
  const std::uint64_t* first = nullptr;
  const std::uint64_t* second = nullptr;
  std::size_t half = 0;
};

// For each window c < windows: out[64 c + j] = sum over s < 2 half of coefficients[s] * (bit j
// of entry s of window c). half a multiple of 4, 2 half at most kMaxCombinedWords.
// Constant time in the words: they are combined, never used as an index or a branch.
// Takes the GFNI kernel below where the CPU has it and half is a multiple of 8.
void combine_bits(const WindowPlanes& planes, std::size_t windows, const Gf128* coefficients, Gf128* out);

namespace detail {
using CombineBitsKernel = void (*)(const WindowPlanes& planes, std::size_t windows, const Gf128* coefficients,
                                   Gf128* out);
// combine_bits without the choice of kernel: AVX2 or baseline, for any half it accepts.
void portable_combine_bits(const WindowPlanes& planes, std::size_t windows, const Gf128* coefficients, Gf128* out);
// GFNI and AVX-512 (BW, VBMI), for half a multiple of 8; null when not built in or this CPU
// lacks them.
CombineBitsKernel gfni_combine_bits();
}  // namespace detail

}  // namespace mpc::rss3
