#include "circuits/evaluate.hpp"

#include <algorithm>
#include <string>

#include "common/error.hpp"

namespace mpc::circuits {
namespace {

// Word-wide gate evaluation shared by both circuit evaluators; a bit is a word with
// only lane 0 in use, masked on output.
std::vector<std::uint64_t> run_circuit(const Circuit& circuit, const std::vector<std::uint64_t>& input_words) {
  validate(circuit);
  const std::uint32_t inputs = circuit.total_inputs();
  if (input_words.size() != inputs) {
    throw FormatError(Component::Circuit, "circuit expects " + std::to_string(inputs) + " inputs, got " +
                                              std::to_string(input_words.size()));
  }
  std::vector<std::uint64_t> wires(circuit.num_wires, 0);
  std::copy(input_words.begin(), input_words.end(), wires.begin());
  for (const Gate& gate : circuit.gates) {
    switch (gate.kind) {
      case GateKind::Xor: wires[gate.out] = wires[gate.in0] ^ wires[gate.in1]; break;
      case GateKind::And: wires[gate.out] = wires[gate.in0] & wires[gate.in1]; break;
      case GateKind::Inv: wires[gate.out] = ~wires[gate.in0]; break;
      case GateKind::Copy: wires[gate.out] = wires[gate.in0]; break;
      case GateKind::Const: wires[gate.out] = gate.in0 != 0 ? ~std::uint64_t{0} : 0; break;
    }
  }
  return std::vector<std::uint64_t>(wires.begin() + circuit.first_output_wire(), wires.end());
}

}  // namespace

std::vector<std::uint8_t> evaluate(const Circuit& circuit, const std::vector<std::uint8_t>& input_bits) {
  std::vector<std::uint64_t> words(input_bits.size());
  for (std::size_t i = 0; i < input_bits.size(); ++i) {
    if (input_bits[i] > 1) throw FormatError(Component::Circuit, "input bit " + std::to_string(i) + " is not 0 or 1");
    words[i] = input_bits[i];
  }
  const std::vector<std::uint64_t> outputs = run_circuit(circuit, words);
  std::vector<std::uint8_t> bits(outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) bits[i] = static_cast<std::uint8_t>(outputs[i] & 1U);
  return bits;
}

std::vector<std::uint64_t> evaluate_packed(const Circuit& circuit, const std::vector<std::uint64_t>& input_words) {
  return run_circuit(circuit, input_words);
}

}  // namespace mpc::circuits
