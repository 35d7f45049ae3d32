#include "circuits/n_fold.hpp"

#include <numeric>

#include "common/error.hpp"

namespace mpc::circuits {
namespace {

constexpr std::size_t kRotationBits = 13;

// Adds `chunk` to `sum` (equal lengths, big-endian) with one's-complement (end-around carry)
// addition.
void ones_complement_add(std::vector<std::uint8_t>& sum, std::span<const std::uint8_t> chunk) {
  unsigned carry = 0;
  for (std::size_t i = sum.size(); i-- > 0;) {
    const unsigned total = sum[i] + chunk[i] + carry;
    sum[i] = static_cast<std::uint8_t>(total);
    carry = total >> 8;
  }
  while (carry != 0) {
    for (std::size_t i = sum.size(); i-- > 0 && carry != 0;) {
      const unsigned total = sum[i] + carry;
      sum[i] = static_cast<std::uint8_t>(total);
      carry = total >> 8;
    }
  }
}

}  // namespace

std::vector<std::uint8_t> n_fold(std::span<const std::uint8_t> input, std::size_t output_bytes) {
  if (input.empty() || output_bytes == 0)
    throw FormatError(Component::Circuit, "n-fold needs a non-empty input and output");
  const std::size_t input_bits = input.size() * 8;
  const std::size_t total_bytes = std::lcm(input.size(), output_bytes);
  // Repetition j is the input rotated right by 13 * j bits: output bit p of it is input bit
  // (p - 13 j) mod input_bits, bits numbered from the most significant bit of byte 0.
  std::vector<std::uint8_t> repeated(total_bytes, 0);
  for (std::size_t j = 0; j < total_bytes / input.size(); ++j) {
    const std::size_t rotation = (kRotationBits * j) % input_bits;
    for (std::size_t p = 0; p < input_bits; ++p) {
      const std::size_t source = (p + input_bits - rotation) % input_bits;
      const unsigned bit = (input[source / 8] >> (7 - source % 8)) & 1u;
      repeated[j * input.size() + p / 8] |= static_cast<std::uint8_t>(bit << (7 - p % 8));
    }
  }
  std::vector<std::uint8_t> out(output_bytes, 0);
  for (std::size_t offset = 0; offset < total_bytes; offset += output_bytes)
    ones_complement_add(out, std::span<const std::uint8_t>(repeated).subspan(offset, output_bytes));
  return out;
}

}  // namespace mpc::circuits
