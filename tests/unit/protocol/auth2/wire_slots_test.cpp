// The slots the passes of authenticated garbling keep their per-wire values in: a circuit run
// through its slots computes what the circuit computes, though slots are reused as soon as a
// wire is read for the last time, and a circuit that is not one is refused (the passes no
// longer validate it apart).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "aes_case.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/extra_inputs.hpp"
#include "common/error.hpp"
#include "protocol/auth2/padded_circuit.hpp"
#include "protocol/auth2/wire_slots.hpp"

namespace mpc::auth2 {
namespace {

using circuits::Circuit;
using circuits::Gate;
using circuits::GateKind;

// The circuit's outputs computed through its slots, as the passes walk them.
std::vector<std::uint8_t> evaluate_in_slots(const Circuit& circuit, const std::vector<std::uint8_t>& inputs) {
  const WireSlots plan = plan_slots(circuit);
  std::vector<std::uint8_t> slot(plan.slots, 0);
  for (std::size_t w = 0; w < inputs.size(); ++w) slot[plan.input_slots[w]] = inputs[w] & 1;
  for (const auto& gate : plan.gates) {
    std::uint8_t value = 0;
    switch (gate.kind) {
      case GateKind::Xor: value = slot[gate.in0] ^ slot[gate.in1]; break;
      case GateKind::And: value = slot[gate.in0] & slot[gate.in1]; break;
      case GateKind::Inv: value = slot[gate.in0] ^ 1; break;
      case GateKind::Copy: value = slot[gate.in0]; break;
      case GateKind::Const: value = static_cast<std::uint8_t>(gate.in0 & 1); break;
    }
    slot[gate.out] = value;
  }
  std::vector<std::uint8_t> outputs;
  for (const auto s : plan.output_slots) outputs.push_back(slot[s]);
  return outputs;
}

std::vector<std::uint8_t> random_bits(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint8_t> bits(n);
  for (auto& bit : bits) bit = static_cast<std::uint8_t>(rng() & 1);
  return bits;
}

TEST(WireSlots, AesThroughItsSlotsIsTheCircuitsAesInAFractionOfTheWires) {
  const Circuit aes = test_support::shared_key_aes();
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 4; ++trial) {
    const auto inputs = random_bits(rng, aes.total_inputs());
    EXPECT_EQ(evaluate_in_slots(aes, inputs), circuits::evaluate(aes, inputs));
  }
  const WireSlots plan = plan_slots(aes);
  EXPECT_EQ(plan.gates.size(), aes.gates.size());
  EXPECT_EQ(plan.and_gates, 5120u);
  EXPECT_LT(plan.slots * 8, aes.num_wires) << "slots are reused once their wire is read for the last time";
}

TEST(WireSlots, APaddedCircuitWithConstantsAndUnreadInputsComputesAsTheCircuit) {
  // Extra inputs nobody reads, and the padding's XORs of input wires into outputs.
  const std::uint32_t extra[] = {64, 3};
  const Circuit padded = padded_circuit(circuits::with_extra_inputs(test_support::shared_key_aes(), extra), 0, 0);
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 4; ++trial) {
    const auto inputs = random_bits(rng, padded.total_inputs());
    EXPECT_EQ(evaluate_in_slots(padded, inputs), circuits::evaluate(padded, inputs));
  }
}

TEST(WireSlots, AGateThatReadsOneWireTwiceAndReusesItsSlotIsRight) {
  // in: w0, w1. w2 = w0 & w0 (last read of w0), w3 = w2 ^ w1, w4 = ~w3, w5 = const 1, w6 = w4 & w5;
  // outputs w6 and a copy of w1 read early.
  Circuit c;
  c.num_wires = 8;
  c.input_widths = {2};
  c.output_widths = {2};
  c.gates = {Gate{GateKind::And, 0, 0, 2}, Gate{GateKind::Xor, 2, 1, 3}, Gate{GateKind::Inv, 3, 0, 4},
             Gate{GateKind::Const, 1, 0, 5}, Gate{GateKind::And, 4, 5, 6}, Gate{GateKind::Copy, 1, 0, 7}};
  for (std::uint8_t a = 0; a < 2; ++a)
    for (std::uint8_t b = 0; b < 2; ++b) {
      const std::vector<std::uint8_t> inputs{a, b};
      EXPECT_EQ(evaluate_in_slots(c, inputs), circuits::evaluate(c, inputs)) << int(a) << int(b);
    }
}

Circuit two_inputs_one_output() {
  Circuit c;
  c.num_wires = 3;
  c.input_widths = {2};
  c.output_widths = {1};
  c.gates = {Gate{GateKind::Xor, 0, 1, 2}};
  return c;
}

TEST(WireSlots, CircuitsThatAreNotCircuitsAreRefused) {
  EXPECT_NO_THROW(plan_slots(two_inputs_one_output()));
  Circuit read_early = two_inputs_one_output();
  read_early.num_wires = 4;
  read_early.gates = {Gate{GateKind::Xor, 0, 3, 2}, Gate{GateKind::Copy, 0, 0, 3}};
  EXPECT_THROW(plan_slots(read_early), FormatError);
  Circuit made_twice = two_inputs_one_output();
  made_twice.gates.push_back(Gate{GateKind::And, 0, 1, 2});
  EXPECT_THROW(plan_slots(made_twice), FormatError);
  Circuit input_made = two_inputs_one_output();
  input_made.gates.push_back(Gate{GateKind::Inv, 2, 0, 1});
  EXPECT_THROW(plan_slots(input_made), FormatError);
  Circuit out_of_range = two_inputs_one_output();
  out_of_range.gates[0].in1 = 9;
  EXPECT_THROW(plan_slots(out_of_range), FormatError);
  Circuit output_unmade = two_inputs_one_output();
  output_unmade.gates.clear();
  EXPECT_THROW(plan_slots(output_unmade), FormatError);
}

}  // namespace
}  // namespace mpc::auth2
