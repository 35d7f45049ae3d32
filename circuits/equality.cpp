// Equality circuit: e_i = !(a_i ^ b_i) for every bit, then a balanced AND tree over the e_i,
// level by level (an odd wire out at a level is carried up unchanged), so n bits cost n - 1
// AND gates at AND-depth ceil(log2(n)).
#include "circuits/equality.hpp"

#include <utility>
#include <vector>

#include "circuits/builder.hpp"
#include "common/error.hpp"

namespace mpc::circuits {

namespace detail {

std::uint32_t equal_bits(CircuitBuilder& builder, std::span<const std::uint32_t> a, std::span<const std::uint32_t> b) {
  if (a.empty()) throw FormatError(Component::Circuit, "equality circuit needs at least one bit");
  if (a.size() != b.size()) throw FormatError(Component::Circuit, "equality of operands of different widths");
  std::vector<std::uint32_t> level;
  level.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) level.push_back(builder.inv(builder.xor_(a[i], b[i])));
  while (level.size() > 1) {
    std::vector<std::uint32_t> next;
    next.reserve((level.size() + 1) / 2);
    for (std::size_t i = 0; i + 1 < level.size(); i += 2) next.push_back(builder.and_(level[i], level[i + 1]));
    if (level.size() % 2 != 0) next.push_back(level.back());
    level = std::move(next);
  }
  return level.front();
}

}  // namespace detail

Circuit build_equality_circuit(std::uint32_t bits) {
  if (bits == 0) throw FormatError(Component::Circuit, "equality circuit needs at least one bit");
  CircuitBuilder builder;
  const std::vector<std::uint32_t> a = builder.add_input_group(bits);
  const std::vector<std::uint32_t> b = builder.add_input_group(bits);
  return builder.finish({{detail::equal_bits(builder, a, b)}});
}

}  // namespace mpc::circuits
