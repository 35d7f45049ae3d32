#include "protocol/lut2/masked_table.hpp"

#include "circuits/aes_reference.hpp"

namespace mpc::lut2 {

PublicRows::PublicRows() {
  for (int t = 0; t < 2; ++t)
    for (int c = 0; c < 256; ++c)
      for (int j = 0; j < 256; ++j) {
        const auto x = static_cast<std::uint8_t>(c ^ j);
        const std::uint8_t value = t == 0 ? circuits::aes_sbox(x) : circuits::aes_inverse_sbox(x);
        for (int bit = 0; bit < 8; ++bit)
          if ((value >> bit) & 1) rows[t][c][j / 64][bit] |= 1ull << (j % 64);
      }
}

const PublicRows& public_rows() {
  static const PublicRows rows;
  return rows;
}

std::array<std::uint64_t, 4> one_hot(std::uint8_t r) {
  // No memory access indexed by r: every word is computed.
  std::array<std::uint64_t, 4> out{};
  const std::uint64_t bit = 1ull << (r % 64);
  for (unsigned w = 0; w < 4; ++w) {
    const std::uint64_t differs = static_cast<std::uint64_t>((r / 64u) ^ w);
    const std::uint64_t nonzero = (differs | (0 - differs)) >> 63;
    out[w] = bit & (nonzero - 1);  // all ones only in r's word
  }
  return out;
}

}  // namespace mpc::lut2
