// Bitsliced: row i (bit i of all 64 lanes' elements) is the XOR of the window's words whose
// coefficient has bit i set. Words are taken four at a time from their 16 XOR combinations
// (the "four Russians" table), picked by the coefficients' bits, which are public; then each
// window's 128 rows are transposed into 64 elements. Four windows go through side by side in the
// lanes of a vector, and four such vectors per pass over the picks. The grid products of the
// sum-check's bit rounds take four windows side by side the same way.
#include "protocol/rss3/bit_combination.hpp"

#include <bit>
#include <string>
#include <utility>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/target_clones.hpp"
#include "protocol/rss3/transpose.hpp"

namespace mpc::rss3 {
namespace {

constexpr std::size_t kMaxGroups = kMaxCombinedWords / 4;

// Groups of four windows combined in one pass over the picks: each pick read serves them all.
constexpr std::size_t kBlocks = 4;

MPC_RSS3_CLONES void combine_group(const Words4 (*words)[kMaxCombinedWords], std::size_t groups,
                                   const std::uint8_t (*pick)[128], Words4 (*combos)[kMaxGroups][16],
                                   Words4 (*rows)[128]) {
  for (std::size_t b = 0; b < kBlocks; ++b)
    for (std::size_t g = 0; g < groups; ++g) {
      combos[b][g][0] = Words4{};
      for (unsigned v = 1; v < 16; ++v)
        combos[b][g][v] = combos[b][g][v & (v - 1)] ^ words[b][4 * g + static_cast<unsigned>(std::countr_zero(v))];
    }
  for (unsigned i = 0; i < 128; ++i) {
    Words4 row[kBlocks] = {};
    for (std::size_t g = 0; g < groups; ++g) {
      const unsigned p = pick[g][i];
      for (std::size_t b = 0; b < kBlocks; ++b) row[b] ^= combos[b][g][p];
    }
    for (std::size_t b = 0; b < kBlocks; ++b) rows[b][i] = row[b];
  }
}

// Element j of window m is (rows[j][m], rows[64 + j][m]): two windows' elements per
// interleave of a low row with its high row.
MPC_RSS3_CLONES void store_elements(const Words4* rows, Gf128* out) {
  for (unsigned j = 0; j < 64; ++j) {
    const Words4 even = __builtin_shuffle(rows[j], rows[64 + j], Words4{0, 4, 2, 6});
    const Words4 odd = __builtin_shuffle(rows[j], rows[64 + j], Words4{1, 5, 3, 7});
    out[j] = Gf128{even[0], even[1]};
    out[128 + j] = Gf128{even[2], even[3]};
    out[64 + j] = Gf128{odd[0], odd[1]};
    out[192 + j] = Gf128{odd[2], odd[3]};
  }
}

constexpr std::size_t kMaxGridPoints = kGridScratch / 4;

constexpr std::uint64_t zero_words[kMaxCombinedWords] = {};

// Up to four windows of entries, one per lane; missing windows read as zero. Built whole from
// four loads: lane by lane stores into a vector stall its next load.
void load_windows(const std::uint64_t* const* windows, std::size_t count, std::size_t entries, Words4* out) {
  const std::uint64_t* window[4];
  for (std::size_t m = 0; m < 4; ++m) window[m] = m < count ? windows[m] : zero_words;
  for (std::size_t s = 0; s < entries; ++s) out[s] = Words4{window[0][s], window[1][s], window[2][s], window[3][s]};
}

// Extends one function to the grid, variable by variable, between two buffers; returns the one
// holding the result.
MPC_RSS3_CLONES Words4* extend(Words4* values, Words4* spare, unsigned variables) {
  std::size_t low = 1, high = std::size_t{1} << variables >> 1;
  for (unsigned b = 0; b < variables; ++b, low *= 3, high /= 2) {
    for (std::size_t h = 0; h < high; ++h) {
      const Words4* at0 = values + low * (2 * h);
      const Words4* at1 = at0 + low;
      Words4* out = spare + low * (3 * h);
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

void grid_products(const std::uint64_t* const* x, const std::uint64_t* const* y, std::size_t count,
                   unsigned variables, std::uint64_t* products, Words4* scratch) {
  if (variables > 5) throw Error(Component::Protocol, "grid_products: " + std::to_string(variables) + " variables");
  if (count > kGridWindows) throw Error(Component::Protocol, "grid_products: " + std::to_string(count) + " windows");
  Words4* xs = scratch;
  Words4* ys = scratch + 2 * kMaxGridPoints;
  const std::size_t entries = std::size_t{1} << variables;
  load_windows(x, count, entries, xs);
  load_windows(y, count, entries, ys);
  const Words4* gx = extend(xs, xs + kMaxGridPoints, variables);
  const Words4* gy = extend(ys, ys + kMaxGridPoints, variables);
  std::size_t points = 1;
  for (unsigned b = 0; b < variables; ++b) points *= 3;
  for (std::size_t p = 0; p < points; ++p) {
    const Words4 product = gx[p] & gy[p];
    for (std::size_t m = 0; m < count; ++m) products[points * m + p] = product[m];
  }
}

void combine_bits(const std::uint64_t* words, std::size_t windows, std::size_t entries, const Gf128* coefficients,
                  Gf128* out) {
  static const detail::CombineBitsKernel gfni = detail::gfni_combine_bits();
  if (gfni != nullptr && entries % 8 == 0 && entries != 0 && entries <= kMaxCombinedWords) {
    gfni(words, windows, entries, coefficients, out);
    return;
  }
  detail::portable_combine_bits(words, windows, entries, coefficients, out);
}

void detail::portable_combine_bits(const std::uint64_t* words, std::size_t windows, std::size_t entries,
                                   const Gf128* coefficients, Gf128* out) {
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
  alignas(32) Words4 lanes[kBlocks][kMaxCombinedWords], combos[kBlocks][kMaxGroups][16], rows[kBlocks][128];
  for (std::size_t c0 = 0; c0 < windows; c0 += 4 * kBlocks) {
    for (std::size_t b = 0; b < kBlocks; ++b) {
      const std::size_t c = c0 + 4 * b;
      const std::size_t count = c >= windows ? 0 : windows - c < 4 ? windows - c : 4;
      const std::uint64_t* window[4] = {};
      for (std::size_t m = 0; m < count; ++m) window[m] = words + entries * (c + m);
      load_windows(window, count, entries, lanes[b]);
    }
    combine_group(lanes, groups, pick, combos, rows);
    for (std::size_t b = 0; b < kBlocks; ++b) {
      const std::size_t c = c0 + 4 * b;
      if (c >= windows) break;
      const std::size_t count = windows - c < 4 ? windows - c : 4;
      transpose64x4(rows[b]);
      transpose64x4(rows[b] + 64);
      if (count == 4)
        store_elements(rows[b], out + 64 * c);
      else
        for (std::size_t m = 0; m < count; ++m)
          for (unsigned j = 0; j < 64; ++j) out[64 * (c + m) + j] = Gf128{rows[b][j][m], rows[b][64 + j][m]};
    }
  }
  wipe(lanes, sizeof lanes);
  wipe(combos, sizeof combos);
  wipe(rows, sizeof rows);
}

}  // namespace mpc::rss3
