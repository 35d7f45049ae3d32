// One-time masked S-box tables for two parties (the online phase of TinyTable, Damgard et al.
// CRYPTO 2017, and OP-LUT, Dessouky et al. NDSS 2017), in a compact form: an entry is an XOR
// sharing of a random mask r and of the one-hot vector e_r (bit j set only for j = r). For any
// table F and the opened c = x ^ r,
//
//   F(x) = F(c ^ r) = XOR_j e_r[j] * F(c ^ j),
//
// which is linear in e_r: each party gets its share of F(x) from its share of e_r alone, as
// the parity of (its 256-bit share AND a public 256-bit row per output bit). One entry serves
// the S-box or its inverse alike, and costs 33 bytes per party instead of a 256-byte table,
// so the pool holds eight times more lookups and the online phase reads memory sequentially.
// Measured (lut2_bench): with AVX-512 one lookup costs a few ns, less than reading one byte of a
// 256-byte table share streamed from memory, which also needs 7.8 times the memory and the
// dealer's traffic.
#pragma once

#include <array>
#include <cstdint>

namespace mpc::lut2 {

// One party's share of one entry.
struct Entry {
  std::array<std::uint64_t, 4> one_hot{};  // share of e_r
  std::uint8_t mask = 0;                   // share of r
};

enum class Table : std::uint8_t { Sbox, InverseSbox };

// rows[table][c][w][b]: word w of the public 256-bit set {j : bit b of F(c ^ j)} (128 KiB).
// Word-major, so the eight output bits' words w fill one 64-byte line: a vector unit ANDs one
// word of the entry into all eight rows at once (round_kernels_avx512.cpp).
struct PublicRows {
  alignas(64) std::uint64_t rows[2][256][4][8]{};
  PublicRows();
};
const PublicRows& public_rows();

// This party's share of F(opened ^ r) (F the AES S-box or its inverse). Inline, so the caller's
// loop is compiled for the POPCNT instruction where the CPU has one (see round_kernels.cpp).
// `opened` is public (both parties see it), so indexing by it leaks nothing.
inline std::uint8_t lookup_share(const PublicRows& all, const Entry& entry, std::uint8_t opened, Table table) {
  const auto& rows = all.rows[table == Table::Sbox ? 0 : 1][opened];
  std::uint8_t out = 0;
  for (int b = 0; b < 8; ++b) {
    const std::uint64_t folded = (entry.one_hot[0] & rows[0][b]) ^ (entry.one_hot[1] & rows[1][b]) ^
                                 (entry.one_hot[2] & rows[2][b]) ^ (entry.one_hot[3] & rows[3][b]);
    out |= static_cast<std::uint8_t>((__builtin_popcountll(folded) & 1) << b);
  }
  return out;
}

// The one-hot vector of r, as the entries hold it (bit j of word j / 64).
std::array<std::uint64_t, 4> one_hot(std::uint8_t r);

}  // namespace mpc::lut2
