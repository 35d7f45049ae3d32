#include "circuits/stats.hpp"

#include <algorithm>
#include <sstream>

namespace mpc::circuits {

CircuitStats compute_stats(const Circuit& circuit) {
  validate(circuit);
  CircuitStats stats;
  stats.gates = circuit.gates.size();
  stats.wires = circuit.num_wires;
  stats.input_widths = circuit.input_widths;
  stats.output_widths = circuit.output_widths;
  std::vector<std::uint32_t> depth(circuit.num_wires, 0);
  for (const Gate& gate : circuit.gates) {
    switch (gate.kind) {
      case GateKind::And:
        ++stats.and_gates;
        depth[gate.out] = std::max(depth[gate.in0], depth[gate.in1]) + 1;
        break;
      case GateKind::Xor:
        ++stats.xor_gates;
        depth[gate.out] = std::max(depth[gate.in0], depth[gate.in1]);
        break;
      case GateKind::Inv:
        ++stats.inv_gates;
        depth[gate.out] = depth[gate.in0];
        break;
      case GateKind::Copy:
        ++stats.other_gates;
        depth[gate.out] = depth[gate.in0];
        break;
      case GateKind::Const:
        ++stats.other_gates;
        break;
    }
    stats.and_depth = std::max(stats.and_depth, depth[gate.out]);
  }
  return stats;
}

std::string format_stats(const CircuitStats& stats) {
  std::ostringstream out;
  auto widths = [&](const std::vector<std::uint32_t>& values) {
    for (std::size_t i = 0; i < values.size(); ++i) out << (i == 0 ? "" : " ") << values[i];
  };
  out << "gates: " << stats.gates << '\n'
      << "and: " << stats.and_gates << '\n'
      << "xor: " << stats.xor_gates << '\n'
      << "inv: " << stats.inv_gates << '\n'
      << "other: " << stats.other_gates << '\n'
      << "and-depth: " << stats.and_depth << '\n'
      << "wires: " << stats.wires << '\n'
      << "inputs: ";
  widths(stats.input_widths);
  out << '\n' << "outputs: ";
  widths(stats.output_widths);
  out << '\n';
  return out.str();
}

}  // namespace mpc::circuits
