#include "circuits/extra_inputs.hpp"

#include <numeric>

namespace mpc::circuits {

Circuit with_extra_inputs(const Circuit& circuit, std::span<const std::uint32_t> widths) {
  validate(circuit);
  const std::uint32_t inputs = circuit.total_inputs();
  const std::uint32_t shift = std::accumulate(widths.begin(), widths.end(), std::uint32_t{0});
  const auto moved = [&](std::uint32_t wire) { return wire < inputs ? wire : wire + shift; };
  Circuit out;
  out.input_widths = circuit.input_widths;
  out.input_widths.insert(out.input_widths.end(), widths.begin(), widths.end());
  out.output_widths = circuit.output_widths;
  out.num_wires = circuit.num_wires + shift;
  out.gates.reserve(circuit.gates.size());
  for (const Gate& gate : circuit.gates) out.gates.push_back(with_wires(gate, moved));
  validate(out);
  return out;
}

}  // namespace mpc::circuits
