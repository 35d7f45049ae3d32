// Boolean circuits as data: the intermediate form every generator produces, the
// Bristol Fashion reader/writer reads and writes, and the scheduler compiles.
//
// Wire numbering follows Bristol Fashion: input wires are 0..total_inputs()-1 in
// group order, output wires are the last total_outputs() wires in group order,
// and gates appear in an order where every input is defined before use.
//
// Bit order inside a group of our own circuits: bit j of a byte string is bit
// (j % 8) of byte (j / 8), least significant bit first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mpc::circuits {

enum class GateKind : std::uint8_t {
  Xor,    // out = in0 ^ in1
  And,    // out = in0 & in1
  Inv,    // out = !in0
  Copy,   // out = in0 (Bristol EQW)
  Const,  // out = in0 (in0 is the constant 0 or 1, not a wire; Bristol EQ)
};

struct Gate {
  GateKind kind;
  std::uint32_t in0;
  std::uint32_t in1;  // unused for Inv, Copy, Const
  std::uint32_t out;
};

struct Circuit {
  std::uint32_t num_wires = 0;
  std::vector<std::uint32_t> input_widths;   // one entry per input group
  std::vector<std::uint32_t> output_widths;  // one entry per output group
  std::vector<Gate> gates;

  std::uint32_t total_inputs() const;
  std::uint32_t total_outputs() const;
  std::uint32_t first_output_wire() const { return num_wires - total_outputs(); }
};

// `gate` with every wire it names (the inputs its kind reads, and its output) mapped by
// `wire_of`: for circuits built from other circuits' gates under new wire numbers.
template <typename WireOf>
Gate with_wires(Gate gate, WireOf&& wire_of) {
  if (gate.kind != GateKind::Const) gate.in0 = wire_of(gate.in0);
  if (gate.kind == GateKind::Xor || gate.kind == GateKind::And) gate.in1 = wire_of(gate.in1);
  gate.out = wire_of(gate.out);
  return gate;
}

// Throws FormatError(Component::Circuit) unless: every wire index is in range, every gate
// input is an input wire or defined by an earlier gate, no wire is defined twice, no gate
// defines an input wire, and every output wire is defined.
void validate(const Circuit& circuit);

}  // namespace mpc::circuits
