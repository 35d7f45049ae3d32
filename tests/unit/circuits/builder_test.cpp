#include <gtest/gtest.h>

#include "circuits/builder.hpp"
#include "circuits/evaluate.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

TEST(Builder, NumbersInputsFirstAndOutputsLast) {
  CircuitBuilder builder;
  const auto a = builder.add_input_group(2);
  const std::uint32_t early = builder.xor_(a[0], a[1]);
  const auto b = builder.add_input_group(1);  // added after a gate: still numbered with the inputs
  const std::uint32_t product = builder.and_(early, b[0]);
  const std::uint32_t inverted = builder.inv(product);
  const Circuit circuit = builder.finish({{inverted}, {early}});
  EXPECT_NO_THROW(validate(circuit));
  EXPECT_EQ(circuit.input_widths, (std::vector<std::uint32_t>{2, 1}));
  EXPECT_EQ(circuit.output_widths, (std::vector<std::uint32_t>{1, 1}));
  EXPECT_EQ(circuit.num_wires, 6U);
  // Gates keep their order; outputs are wires 4 (inverted) and 5 (early).
  ASSERT_EQ(circuit.gates.size(), 3U);
  EXPECT_EQ(circuit.gates[0].out, 5U);
  EXPECT_EQ(circuit.gates[1].out, 3U);
  EXPECT_EQ(circuit.gates[2].out, 4U);
  EXPECT_EQ(evaluate(circuit, {1, 0, 1}), (std::vector<std::uint8_t>{0, 1}));
  EXPECT_EQ(evaluate(circuit, {1, 1, 1}), (std::vector<std::uint8_t>{1, 0}));
}

TEST(Builder, CopiesInputAndRepeatedOutputs) {
  CircuitBuilder builder;
  const auto in = builder.add_input_group(2);
  const std::uint32_t sum = builder.xor_(in[0], in[1]);
  const Circuit circuit = builder.finish({{in[1], sum, sum}, {in[1]}});
  EXPECT_NO_THROW(validate(circuit));
  std::size_t copies = 0;
  for (const Gate& gate : circuit.gates) copies += gate.kind == GateKind::Copy ? 1 : 0;
  EXPECT_EQ(copies, 3U);
  EXPECT_EQ(evaluate(circuit, {0, 1}), (std::vector<std::uint8_t>{1, 1, 1, 1}));
  EXPECT_EQ(evaluate(circuit, {1, 1}), (std::vector<std::uint8_t>{1, 0, 0, 1}));
}

TEST(Builder, DropsGatesNoOutputNeeds) {
  CircuitBuilder builder;
  const auto in = builder.add_input_group(2);
  builder.and_(in[0], in[1]);
  const std::uint32_t kept = builder.xor_(in[0], in[1]);
  builder.inv(kept);
  const Circuit circuit = builder.finish({{kept}});
  ASSERT_EQ(circuit.gates.size(), 1U);
  EXPECT_EQ(circuit.gates[0].kind, GateKind::Xor);
}

TEST(Builder, ConstantsAreShared) {
  CircuitBuilder builder;
  builder.add_input_group(1);
  EXPECT_EQ(builder.constant(true), builder.constant(true));
  EXPECT_NE(builder.constant(true), builder.constant(false));
  const Circuit circuit = builder.finish({{builder.constant(true), builder.constant(false)}});
  EXPECT_EQ(evaluate(circuit, {0}), (std::vector<std::uint8_t>{1, 0}));
}

TEST(Builder, RejectsBadUse) {
  CircuitBuilder builder;
  EXPECT_THROW(builder.add_input_group(0), FormatError);
  const auto in = builder.add_input_group(1);
  EXPECT_THROW(builder.xor_(in[0], 99), FormatError);
  EXPECT_THROW(builder.inv(5), FormatError);
  EXPECT_THROW(builder.finish({{}}), FormatError);
  EXPECT_THROW(builder.finish({{42}}), FormatError);
}

}  // namespace
}  // namespace mpc::circuits
