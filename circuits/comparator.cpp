// Logarithmic-depth unsigned comparator.
//
// Implements the recursive comparison of Garay, Schoenmakers and Villegas, "Practical
// and Secure Solutions for Integer Comparison", PKC 2007, over GF(2): for a range of
// bits, G = "a > b on this range" and E = "a == b on this range" combine from the high
// half H and the low half L as
//   G = G_H ^ (E_H & G_L)   (the two terms exclude each other, so OR is XOR)
//   E = E_H & E_L
// with leaves G_i = a_i & !b_i and E_i = !(a_i ^ b_i). E is built only where a parent
// needs it, so 64 bits cost 64 + 63 + 57 = 184 AND at AND-depth 7.
#include "circuits/comparator.hpp"

#include <optional>
#include <vector>

#include "circuits/builder.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

struct Comparison {
  std::uint32_t greater;
  std::optional<std::uint32_t> equal;
};

Comparison compare_range(CircuitBuilder& builder, const std::vector<std::uint32_t>& a,
                         const std::vector<std::uint32_t>& b, std::size_t low, std::size_t high, bool need_equal) {
  if (high - low == 1) {
    Comparison leaf{builder.and_(a[low], builder.inv(b[low])), std::nullopt};
    if (need_equal) leaf.equal = builder.inv(builder.xor_(a[low], b[low]));
    return leaf;
  }
  // The high half gets the extra bit of an odd range: its result feeds both combining ANDs.
  const std::size_t middle = low + (high - low) / 2;
  const Comparison upper = compare_range(builder, a, b, middle, high, true);
  const Comparison lower = compare_range(builder, a, b, low, middle, need_equal);
  Comparison combined{builder.xor_(upper.greater, builder.and_(*upper.equal, lower.greater)), std::nullopt};
  if (need_equal) combined.equal = builder.and_(*upper.equal, *lower.equal);
  return combined;
}

}  // namespace

Circuit build_greater_than_circuit(std::uint32_t bits) {
  if (bits == 0) throw FormatError(Component::Circuit, "comparator needs at least one bit");
  CircuitBuilder builder;
  const std::vector<std::uint32_t> a = builder.add_input_group(bits);
  const std::vector<std::uint32_t> b = builder.add_input_group(bits);
  const Comparison result = compare_range(builder, a, b, 0, bits, false);
  return builder.finish({{result.greater}});
}

}  // namespace mpc::circuits
