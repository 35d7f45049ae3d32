#include <gtest/gtest.h>

#include <functional>

#include "circuits/circuit.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

// 2 inputs (wires 0, 1), gate 2 = 0 ^ 1, gate 3 = 2 & 0 (the output).
Circuit small_circuit() { return Circuit{4, {2}, {1}, {{GateKind::Xor, 0, 1, 2}, {GateKind::And, 2, 0, 3}}}; }

TEST(Circuit, Totals) {
  const Circuit circuit{10, {3, 2}, {4}, {}};
  EXPECT_EQ(circuit.total_inputs(), 5U);
  EXPECT_EQ(circuit.total_outputs(), 4U);
  EXPECT_EQ(circuit.first_output_wire(), 6U);
  const Circuit overflowing{10, {0xffffffffU, 1}, {1}, {}};
  EXPECT_THROW(overflowing.total_inputs(), FormatError);
}

TEST(Circuit, ValidateAcceptsWellFormed) {
  EXPECT_NO_THROW(validate(small_circuit()));
  EXPECT_NO_THROW(validate(Circuit{1, {1}, {1}, {}}));  // identity: the output is the input
}

TEST(Circuit, ValidateRejectsMalformed) {
  const std::pair<const char*, std::function<void(Circuit&)>> breakages[] = {
      {"read out of range", [](Circuit& c) { c.gates[0].in1 = 4; }},
      {"read before definition", [](Circuit& c) { c.gates[0].in1 = 3; }},
      {"write out of range", [](Circuit& c) { c.gates[1].out = 4; }},
      {"writes an input", [](Circuit& c) { c.gates[0].out = 1; }},
      {"defined twice", [](Circuit& c) { c.gates.push_back({GateKind::Inv, 0, 0, 2}); }},
      {"output never defined", [](Circuit& c) { c.gates.pop_back(); }},
      {"bad constant", [](Circuit& c) { c.gates.push_back({GateKind::Const, 2, 0, 3}); c.gates.erase(c.gates.begin() + 1); }},
      {"unknown kind", [](Circuit& c) { c.gates[0].kind = static_cast<GateKind>(9); }},
      {"too many inputs", [](Circuit& c) { c.input_widths = {5}; }},
      {"too many outputs", [](Circuit& c) { c.output_widths = {5}; }},
      {"zero-width group", [](Circuit& c) { c.output_widths = {1, 0}; }},
  };
  for (const auto& [name, breakage] : breakages) {
    Circuit circuit = small_circuit();
    breakage(circuit);
    EXPECT_THROW(validate(circuit), FormatError) << name;
  }
}

}  // namespace
}  // namespace mpc::circuits
