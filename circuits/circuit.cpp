#include "circuits/circuit.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "common/error.hpp"

namespace mpc::circuits {
namespace {

[[noreturn]] void fail(const std::string& message) { throw FormatError(Component::Circuit, message); }

std::uint32_t checked_sum(const std::vector<std::uint32_t>& widths, const char* what) {
  std::uint64_t sum = 0;
  for (std::uint32_t width : widths) sum += width;
  // A vector of uint32 cannot reach 2^64 in memory, so the 64-bit sum itself never wraps.
  if (sum > std::numeric_limits<std::uint32_t>::max()) fail(std::string(what) + " widths overflow 32 bits");
  return static_cast<std::uint32_t>(sum);
}

bool has_second_input(GateKind kind) { return kind == GateKind::Xor || kind == GateKind::And; }

}  // namespace

std::uint32_t Circuit::total_inputs() const { return checked_sum(input_widths, "input"); }

std::uint32_t Circuit::total_outputs() const { return checked_sum(output_widths, "output"); }

void validate(const Circuit& circuit) {
  for (std::uint32_t width : circuit.input_widths) {
    if (width == 0) fail("input group of width 0");
  }
  for (std::uint32_t width : circuit.output_widths) {
    if (width == 0) fail("output group of width 0");
  }
  const std::uint32_t inputs = circuit.total_inputs();
  const std::uint32_t outputs = circuit.total_outputs();
  if (inputs > circuit.num_wires) fail("more input wires than wires");
  if (outputs > circuit.num_wires) fail("more output wires than wires");

  // Input wires count as defined from the start; every other wire must be defined once by a gate.
  std::vector<bool> defined(circuit.num_wires, false);
  std::fill(defined.begin(), defined.begin() + inputs, true);

  auto check_read = [&](std::uint32_t wire, std::size_t gate_index) {
    if (wire >= circuit.num_wires) {
      fail("gate " + std::to_string(gate_index) + " reads wire " + std::to_string(wire) + " out of range");
    }
    if (!defined[wire]) {
      fail("gate " + std::to_string(gate_index) + " reads wire " + std::to_string(wire) + " before it is defined");
    }
  };

  for (std::size_t index = 0; index < circuit.gates.size(); ++index) {
    const Gate& gate = circuit.gates[index];
    switch (gate.kind) {
      case GateKind::Xor:
      case GateKind::And:
      case GateKind::Inv:
      case GateKind::Copy:
        check_read(gate.in0, index);
        if (has_second_input(gate.kind)) check_read(gate.in1, index);
        break;
      case GateKind::Const:
        if (gate.in0 > 1) fail("gate " + std::to_string(index) + " has constant other than 0 or 1");
        break;
      default:
        fail("gate " + std::to_string(index) + " has unknown kind");
    }
    if (gate.out >= circuit.num_wires) {
      fail("gate " + std::to_string(index) + " writes wire " + std::to_string(gate.out) + " out of range");
    }
    if (gate.out < inputs) {
      fail("gate " + std::to_string(index) + " writes input wire " + std::to_string(gate.out));
    }
    if (defined[gate.out]) {
      fail("gate " + std::to_string(index) + " defines wire " + std::to_string(gate.out) + " a second time");
    }
    defined[gate.out] = true;
  }

  for (std::uint32_t wire = circuit.num_wires - outputs; wire < circuit.num_wires; ++wire) {
    if (!defined[wire]) fail("output wire " + std::to_string(wire) + " is never defined");
  }
}

}  // namespace mpc::circuits
