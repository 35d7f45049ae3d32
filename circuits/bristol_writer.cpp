#include <ostream>

#include "circuits/bristol.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

void write_groups(const std::vector<std::uint32_t>& widths, std::ostream& out) {
  out << widths.size();
  for (std::uint32_t width : widths) out << ' ' << width;
  out << '\n';
}

}  // namespace

void write_bristol(const Circuit& circuit, std::ostream& out) {
  // Only well-formed circuits are written, so a written file always reads back.
  validate(circuit);
  out << circuit.gates.size() << ' ' << circuit.num_wires << '\n';
  write_groups(circuit.input_widths, out);
  write_groups(circuit.output_widths, out);
  out << '\n';
  for (const Gate& gate : circuit.gates) {
    switch (gate.kind) {
      case GateKind::Xor: out << "2 1 " << gate.in0 << ' ' << gate.in1 << ' ' << gate.out << " XOR\n"; break;
      case GateKind::And: out << "2 1 " << gate.in0 << ' ' << gate.in1 << ' ' << gate.out << " AND\n"; break;
      case GateKind::Inv: out << "1 1 " << gate.in0 << ' ' << gate.out << " INV\n"; break;
      case GateKind::Copy: out << "1 1 " << gate.in0 << ' ' << gate.out << " EQW\n"; break;
      case GateKind::Const: out << "1 1 " << gate.in0 << ' ' << gate.out << " EQ\n"; break;
    }
  }
  if (!out) throw FormatError(Component::Circuit, "writing the circuit failed");
}

}  // namespace mpc::circuits
