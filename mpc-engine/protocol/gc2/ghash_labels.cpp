#include "protocol/gc2/ghash_labels.hpp"

#include <array>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace mpc::gc2 {
namespace {

using GcmBytes = std::array<std::uint8_t, 16>;

// V * x in GCM's bit order: every coefficient moves up one place (one bit towards the least
// significant end of the bytes), and x^128 folds back as R = 0xE1 || 0^120.
GcmBytes times_x(const GcmBytes& v) {
  GcmBytes out{};
  const bool carry = (v[15] & 1) != 0;
  std::uint8_t in = 0;
  for (std::size_t i = 0; i < 16; ++i) {
    out[i] = static_cast<std::uint8_t>((v[i] >> 1) | (in << 7));
    in = v[i] & 1;
  }
  if (carry) out[0] ^= 0xE1;
  return out;
}

// The coefficient (power of x) that label row r carries: GCM numbers a byte's bits from the
// most significant one.
constexpr std::size_t coefficient_of_row(std::size_t r) { return 8 * (r / 8) + 7 - r % 8; }

// out ^= X * P, P given by its 128 labels.
void add_product(const GcmBytes& x, const Block* power, Block* out) {
  std::array<GcmBytes, 128> columns;  // columns[c] = X * x^c
  columns[0] = x;
  for (std::size_t c = 1; c < 128; ++c) columns[c] = times_x(columns[c - 1]);
  for (std::size_t r = 0; r < 128; ++r) {
    const GcmBytes& column = columns[coefficient_of_row(r)];
    const Block label = power[r];
    // The branches depend on the public block alone.
    for (std::size_t j = 0; j < 128; ++j)
      if ((column[j / 8] >> (j % 8)) & 1) out[j] ^= label;
  }
}

void append_padded(std::vector<GcmBytes>& blocks, std::span<const std::uint8_t> bytes) {
  for (std::size_t at = 0; at < bytes.size(); at += 16) {
    GcmBytes block{};
    for (std::size_t i = 0; i < 16 && at + i < bytes.size(); ++i) block[i] = bytes[at + i];
    blocks.push_back(block);
  }
}

}  // namespace

Labels ghash_labels(std::span<const Block> power_labels, std::span<const std::uint8_t> aad,
                    std::span<const std::uint8_t> text) {
  constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 60;  // bit lengths fit 64 bits
  if (aad.size() >= kMaxBytes || text.size() >= kMaxBytes)
    throw Error(Component::Protocol, "GHASH input too long for GCM's length fields");
  std::vector<GcmBytes> blocks;
  append_padded(blocks, aad);
  append_padded(blocks, text);
  GcmBytes lengths{};
  const std::uint64_t aad_bits = static_cast<std::uint64_t>(aad.size()) * 8;
  const std::uint64_t text_bits = static_cast<std::uint64_t>(text.size()) * 8;
  for (int i = 0; i < 8; ++i) {
    lengths[7 - i] = static_cast<std::uint8_t>(aad_bits >> (8 * i));
    lengths[15 - i] = static_cast<std::uint8_t>(text_bits >> (8 * i));
  }
  blocks.push_back(lengths);
  const std::size_t powers = power_labels.size() / 128;
  if (power_labels.size() % 128 != 0 || blocks.size() > powers)
    throw Error(Component::Protocol, "GHASH of " + std::to_string(blocks.size()) + " blocks needs as many hash key " +
                                         "powers; " + std::to_string(powers) + " given");
  Labels out(128);
  const std::size_t m = blocks.size();
  for (std::size_t i = 0; i < m; ++i) add_product(blocks[i], power_labels.data() + (m - 1 - i) * 128, out.data());
  return out;
}

}  // namespace mpc::gc2
