#include "circuits/input_wiring.hpp"

#include <numeric>
#include <string>

#include "common/error.hpp"

namespace mpc::circuits {

Circuit with_input_wiring(const Circuit& circuit, std::vector<std::uint32_t> input_widths,
                          std::span<const InputSource> sources) {
  validate(circuit);
  const std::uint32_t old_inputs = circuit.total_inputs();
  if (sources.size() != old_inputs)
    throw FormatError(Component::Circuit, std::to_string(sources.size()) + " input sources for " +
                                              std::to_string(old_inputs) + " inputs");
  const std::uint64_t total = std::accumulate(input_widths.begin(), input_widths.end(), std::uint64_t{0});
  const auto inputs = static_cast<std::uint32_t>(total);
  Circuit out;
  out.input_widths = std::move(input_widths);
  out.output_widths = circuit.output_widths;
  std::vector<std::uint32_t> wire_of(old_inputs);
  std::uint32_t next = inputs;
  for (std::uint32_t i = 0; i < old_inputs; ++i) {
    const InputSource& source = sources[i];
    if (source.first >= inputs || (source.second && *source.second >= inputs))
      throw FormatError(Component::Circuit, "an input source past the circuit's " + std::to_string(inputs) + " inputs");
    if (!source.second) {
      wire_of[i] = source.first;
      continue;
    }
    out.gates.push_back(Gate{GateKind::Xor, source.first, *source.second, next});
    wire_of[i] = next++;
  }
  const std::uint32_t shift = next;  // C's other wires follow the XORs
  const auto renumber = [&](std::uint32_t wire) { return wire < old_inputs ? wire_of[wire] : wire - old_inputs + shift; };
  out.gates.reserve(out.gates.size() + circuit.gates.size());
  for (const Gate& gate : circuit.gates) out.gates.push_back(with_wires(gate, renumber));
  out.num_wires = circuit.num_wires - old_inputs + shift;
  validate(out);
  return out;
}

}  // namespace mpc::circuits
