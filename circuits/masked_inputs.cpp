#include "circuits/masked_inputs.hpp"

#include <string>

#include "common/error.hpp"

namespace mpc::circuits {

Circuit with_masked_inputs(const Circuit& circuit, std::uint32_t after, std::uint32_t offset, std::uint32_t mask) {
  if (mask == 0) return circuit;
  const std::uint32_t inputs = circuit.total_inputs();
  if (static_cast<std::uint64_t>(after) + offset + mask > inputs)
    throw FormatError(Component::Circuit, "masked inputs past the circuit's " + std::to_string(inputs) + " inputs");
  Circuit out;
  std::uint64_t width_so_far = 0;
  bool placed = after == 0;
  if (placed) out.input_widths.push_back(mask);
  for (std::uint32_t width : circuit.input_widths) {
    out.input_widths.push_back(width);
    width_so_far += width;
    if (!placed && width_so_far == after) {
      out.input_widths.push_back(mask);
      placed = true;
    }
  }
  if (!placed) throw FormatError(Component::Circuit, "no input group ends at input " + std::to_string(after));
  out.output_widths = circuit.output_widths;
  out.num_wires = circuit.num_wires + 2 * mask;

  // New numbering: inputs [0, after) as before, the mask rows [after, after + mask), C's other
  // inputs after them, the XORs [inputs + mask, inputs + 2 mask), C's gates' wires last.
  const std::uint32_t masked_begin = after + offset;
  const std::uint32_t masked_end = masked_begin + mask;
  const std::uint32_t unmasked_xor = inputs + mask;
  const auto renumber = [&](std::uint32_t wire) -> std::uint32_t {
    if (wire < after) return wire;
    if (wire >= inputs) return wire + 2 * mask;
    if (wire >= masked_begin && wire < masked_end) return unmasked_xor + (wire - masked_begin);
    return wire + mask;
  };
  out.gates.reserve(circuit.gates.size() + mask);
  for (std::uint32_t i = 0; i < mask; ++i)
    out.gates.push_back(Gate{GateKind::Xor, masked_begin + i + mask, after + i, unmasked_xor + i});
  for (const Gate& gate : circuit.gates) out.gates.push_back(with_wires(gate, renumber));
  return out;
}

}  // namespace mpc::circuits
