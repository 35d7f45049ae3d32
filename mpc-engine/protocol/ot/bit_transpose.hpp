// The bit-matrix transpose of IKNP OT extension: 128 columns (one per base OT, the PRG
// output, n bits each) become n rows of 128 bits (one Block per extended OT).
//
// Done in 128 x 128 tiles. On x86-64 each tile is sixteen 16 x 16 byte transposes (four
// rounds of SSE2 byte unpacks) followed by the movemask trick of emp-tool's sse_trans
// (_mm_movemask_epi8 collects the top bit of 16 bytes, a 64-bit shift brings up the next
// bit); elsewhere a portable bit loop computes the same.
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/two_party/block.hpp"

namespace mpc::ot {

// columns: 128 columns of `stride` bytes each, back to back; bit j of column i is bit j % 8
// of byte j / 8. rows[j] for j < n receives bit j of every column: bit i of rows[j] (bit
// i % 64 of lo for i < 64, of hi otherwise) is bit j of column i. Requires stride a multiple
// of 16 with n <= 8 * stride.
void transpose_columns(const std::uint8_t* columns, std::size_t stride, std::size_t n, two_party::Block* rows);

}  // namespace mpc::ot
