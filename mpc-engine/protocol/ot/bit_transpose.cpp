#include "protocol/ot/bit_transpose.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "common/secret.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mpc::ot {
namespace {

using two_party::Block;

constexpr std::size_t kTile = 128;

#if defined(__SSE2__)

// a[r] byte c -> a[c] byte r. Each round maps (vector v, byte p) to (v' = 2(v mod 8) + p / 8,
// p' = 2(p mod 8) + v / 8): a left rotation of the 8-bit index (v, p); four rounds swap v and p.
inline void transpose_16x16_bytes(__m128i* a) {
  __m128i b[16];
  for (int round = 0; round < 4; ++round) {
    for (int k = 0; k < 8; ++k) {
      b[2 * k] = _mm_unpacklo_epi8(a[k], a[k + 8]);
      b[2 * k + 1] = _mm_unpackhi_epi8(a[k], a[k + 8]);
    }
    for (int k = 0; k < 16; ++k) a[k] = b[k];
  }
}

// One 128 x 128 tile: in = 128 column slices of 16 bytes (`stride` apart), out = 128 rows.
void transpose_tile(const std::uint8_t* in, std::size_t stride, Block* out) {
  auto* out_bytes = reinterpret_cast<std::uint8_t*>(out);
  for (std::size_t group = 0; group < kTile / 16; ++group) {  // columns 16 * group ... + 15
    __m128i a[16];
    for (std::size_t r = 0; r < 16; ++r)
      a[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + (group * 16 + r) * stride));
    transpose_16x16_bytes(a);  // a[c] byte r = byte c of column 16 * group + r
    for (std::size_t c = 0; c < 16; ++c) {
      __m128i v = a[c];
      // The top bit of each byte is row 8c + 7; shifting the 64-bit lanes left by one brings
      // up the next lower bit of every byte (the bit shifted in from the neighbouring byte
      // reaches the top only after eight shifts).
      for (int bit = 7; bit >= 0; --bit) {
        const auto mask = static_cast<std::uint16_t>(_mm_movemask_epi8(v));
        std::memcpy(out_bytes + (8 * c + static_cast<std::size_t>(bit)) * sizeof(Block) + 2 * group, &mask, 2);
        v = _mm_slli_epi64(v, 1);
      }
    }
  }
}

#else

void transpose_tile(const std::uint8_t* in, std::size_t stride, Block* out) {
  for (std::size_t j = 0; j < kTile; ++j) out[j] = Block{};
  for (std::size_t i = 0; i < kTile; ++i) {
    const std::uint8_t* column = in + i * stride;
    const std::uint64_t bit = 1ull << (i % 64);
    for (std::size_t j = 0; j < kTile; ++j) {
      std::uint64_t& half = i < 64 ? out[j].lo : out[j].hi;
      half |= bit & (0 - static_cast<std::uint64_t>((column[j / 8] >> (j % 8)) & 1));
    }
  }
}

#endif

}  // namespace

void transpose_columns(const std::uint8_t* columns, std::size_t stride, std::size_t n, Block* rows) {
  if (stride % 16 != 0 || n > 8 * stride) throw Error(Component::Protocol, "OT transpose: columns too short");
  std::size_t first = 0;
  for (; first + kTile <= n; first += kTile) transpose_tile(columns + first / 8, stride, rows + first);
  if (first < n) {  // a partial last tile: the columns are padded to whole tiles
    Block tail[kTile];
    transpose_tile(columns + first / 8, stride, tail);
    std::copy(tail, tail + (n - first), rows + first);
    wipe(tail, sizeof tail);
  }
}

}  // namespace mpc::ot
