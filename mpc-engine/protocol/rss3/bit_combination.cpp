// Bitsliced: row i (bit i of all 64 lanes' elements) is the XOR of the window's words whose
// coefficient has bit i set. Words are taken four at a time from their 16 XOR combinations
// (the "four Russians" table), picked by the coefficients' bits, which are public; then each
// window's 128 rows are transposed into 64 elements. Four windows go through side by side in the
// lanes of a vector, and four such vectors per pass over the picks.
#include "protocol/rss3/bit_combination.hpp"

#include <bit>
#include <string>

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

// Windows c .. c + count - 1 (count at most four), one per lane; missing windows read as zero.
// Built whole from four loads: lane by lane stores into a vector stall its next load.
void load_windows(const WindowPlanes& planes, std::size_t c, std::size_t count, Words4* out) {
  for (std::size_t s = 0; s < 2 * planes.half; ++s) {
    const std::uint64_t* plane = s < planes.half ? planes.first : planes.second;
    const std::size_t at = s % planes.half;
    std::uint64_t lane[4] = {};
    for (std::size_t m = 0; m < count; ++m) lane[m] = plane[planes.half * (c + m) + at];
    out[s] = Words4{lane[0], lane[1], lane[2], lane[3]};
  }
}

}  // namespace

void combine_bits(const WindowPlanes& planes, std::size_t windows, const Gf128* coefficients, Gf128* out) {
  static const detail::CombineBitsKernel gfni = detail::gfni_combine_bits();
  if (gfni != nullptr && planes.half % 8 == 0 && planes.half != 0 && 2 * planes.half <= kMaxCombinedWords) {
    gfni(planes, windows, coefficients, out);
    return;
  }
  detail::portable_combine_bits(planes, windows, coefficients, out);
}

void detail::portable_combine_bits(const WindowPlanes& planes, std::size_t windows, const Gf128* coefficients,
                                   Gf128* out) {
  const std::size_t entries = 2 * planes.half;
  if (planes.half % 4 != 0 || planes.half == 0 || entries > kMaxCombinedWords)
    throw Error(Component::Protocol, "combine_bits: windows of " + std::to_string(entries) + " words");
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
      load_windows(planes, c, count, lanes[b]);
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
