// Bitsliced: row i (bit i of all 64 lanes' elements) is the XOR of the window's words whose
// coefficient has bit i set. Words are taken four at a time from their 16 XOR combinations
// (the "four Russians" table), picked by the coefficients' bits, which are public; then each
// window's 128 rows are transposed into 64 elements. Four windows go through side by side in the
// lanes of a vector.
#include "protocol/rss3/bit_combination.hpp"

#include <bit>
#include <cstring>
#include <string>
#include <utility>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/target_clones.hpp"
#include "protocol/rss3/transpose.hpp"

namespace mpc::rss3 {
namespace {

constexpr std::size_t kMaxGroups = kMaxCombinedWords / 4;

MPC_RSS3_CLONES void combine_group(const Words4* words, std::size_t groups, const std::uint8_t (*pick)[128],
                                   Words4 (*combos)[16], Words4* rows) {
  for (std::size_t g = 0; g < groups; ++g) {
    combos[g][0] = Words4{};
    for (unsigned v = 1; v < 16; ++v)
      combos[g][v] = combos[g][v & (v - 1)] ^ words[4 * g + static_cast<unsigned>(std::countr_zero(v))];
  }
  for (unsigned i = 0; i < 128; ++i) {
    Words4 row{};
    for (std::size_t g = 0; g < groups; ++g) row ^= combos[g][pick[g][i]];
    rows[i] = row;
  }
}

constexpr std::size_t kMaxGridPoints = kGridScratchWords / 4;

// Extends one function to the grid, variable by variable, between two buffers; returns the one
// holding the result.
MPC_RSS3_CLONES std::uint64_t* extend(std::uint64_t* values, std::uint64_t* spare, unsigned variables) {
  std::size_t low = 1, high = std::size_t{1} << variables >> 1;
  for (unsigned b = 0; b < variables; ++b, low *= 3, high /= 2) {
    for (std::size_t h = 0; h < high; ++h) {
      const std::uint64_t* at0 = values + low * (2 * h);
      const std::uint64_t* at1 = at0 + low;
      std::uint64_t* out = spare + low * (3 * h);
      for (std::size_t l = 0; l < low; ++l) {
        out[l] = at0[l];
        out[low + l] = at1[l];
        out[2 * low + l] = at0[l] ^ at1[l];
      }
    }
    std::swap(values, spare);
  }
  return values;
}

}  // namespace

void grid_products(const std::uint64_t* x, const std::uint64_t* y, unsigned variables, std::uint64_t* products,
                   std::uint64_t* scratch) {
  if (variables > 5) throw Error(Component::Protocol, "grid_products: " + std::to_string(variables) + " variables");
  std::uint64_t* xs = scratch;
  std::uint64_t* ys = scratch + 2 * kMaxGridPoints;
  const std::size_t entries = std::size_t{1} << variables;
  std::memcpy(xs, x, entries * 8);
  std::memcpy(ys, y, entries * 8);
  const std::uint64_t* gx = extend(xs, xs + kMaxGridPoints, variables);
  const std::uint64_t* gy = extend(ys, ys + kMaxGridPoints, variables);
  std::size_t points = 1;
  for (unsigned b = 0; b < variables; ++b) points *= 3;
  for (std::size_t p = 0; p < points; ++p) products[p] = gx[p] & gy[p];
}

void combine_bits(const std::uint64_t* words, std::size_t windows, std::size_t entries, const Gf128* coefficients,
                  Gf128* out) {
  if (entries % 4 != 0 || entries > kMaxCombinedWords)
    throw Error(Component::Protocol, "combine_bits: " + std::to_string(entries) + " words per window");
  const std::size_t groups = entries / 4;
  std::uint8_t pick[kMaxGroups][128];
  for (std::size_t g = 0; g < groups; ++g)
    for (unsigned i = 0; i < 128; ++i) {
      unsigned index = 0;
      for (unsigned e = 0; e < 4; ++e) {
        const Gf128 c = coefficients[4 * g + e];
        index |= static_cast<unsigned>(((i < 64 ? c.lo >> i : c.hi >> (i - 64)) & 1) << e);
      }
      pick[g][i] = static_cast<std::uint8_t>(index);
    }
  alignas(32) Words4 lanes[kMaxCombinedWords], combos[kMaxGroups][16], rows[128];
  for (std::size_t c = 0; c < windows; c += 4) {
    const std::size_t count = windows - c < 4 ? windows - c : 4;
    for (std::size_t s = 0; s < entries; ++s) {
      Words4 lane{};
      for (std::size_t m = 0; m < count; ++m) lane[m] = words[entries * (c + m) + s];
      lanes[s] = lane;
    }
    combine_group(lanes, groups, pick, combos, rows);
    transpose64x4(rows);
    transpose64x4(rows + 64);
    for (std::size_t m = 0; m < count; ++m)
      for (unsigned j = 0; j < 64; ++j) out[64 * (c + m) + j] = Gf128{rows[j][m], rows[64 + j][m]};
  }
  wipe(lanes, sizeof lanes);
  wipe(combos, sizeof combos);
  wipe(rows, sizeof rows);
}

}  // namespace mpc::rss3
