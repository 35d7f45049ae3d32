#include <gtest/gtest.h>

#include "circuits/builder.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/sbox.hpp"
#include "circuits/stats.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

Circuit single_sbox_circuit(SboxVariant variant, bool inverse) {
  CircuitBuilder builder;
  const auto bits = builder.add_input_group(8);
  ByteWires in{};
  std::copy(bits.begin(), bits.end(), in.begin());
  const ByteWires out = inverse ? add_inverse_sbox(builder, in, variant) : add_sbox(builder, in, variant);
  return builder.finish({std::vector<std::uint32_t>(out.begin(), out.end())});
}

// Evaluates the one-byte circuit on all 256 inputs.
std::array<std::uint8_t, 256> exhaustive_table(const Circuit& circuit) {
  std::array<std::uint8_t, 256> table{};
  for (unsigned base = 0; base < 256; base += 64) {
    std::vector<test::Bytes> inputs;
    for (unsigned lane = 0; lane < 64; ++lane) inputs.push_back({static_cast<std::uint8_t>(base + lane)});
    const auto outputs = evaluate_packed(circuit, test::pack_lanes(inputs));
    for (unsigned lane = 0; lane < 64; ++lane) table[base + lane] = test::unpack_lane(outputs, lane)[0];
  }
  return table;
}

class SboxTest : public ::testing::TestWithParam<SboxVariant> {};

TEST_P(SboxTest, ForwardMatchesDefinitionOnAllInputs) {
  const auto expected = test::definition_sbox_table();
  const auto actual = exhaustive_table(single_sbox_circuit(GetParam(), false));
  for (unsigned x = 0; x < 256; ++x) EXPECT_EQ(actual[x], expected[x]) << "input " << x;
}

TEST_P(SboxTest, InverseMatchesDefinitionOnAllInputs) {
  const auto forward = test::definition_sbox_table();
  std::array<std::uint8_t, 256> expected{};
  for (unsigned x = 0; x < 256; ++x) expected[forward[x]] = static_cast<std::uint8_t>(x);
  const auto actual = exhaustive_table(single_sbox_circuit(GetParam(), true));
  for (unsigned y = 0; y < 256; ++y) EXPECT_EQ(actual[y], expected[y]) << "input " << y;
}

TEST_P(SboxTest, ForwardAndInverseCostTheSameAnds) {
  const CircuitStats forward = compute_stats(single_sbox_circuit(GetParam(), false));
  const CircuitStats inverse = compute_stats(single_sbox_circuit(GetParam(), true));
  const bool and32 = GetParam() == SboxVariant::And32;
  EXPECT_EQ(forward.and_gates, and32 ? 32U : 34U);
  EXPECT_EQ(forward.and_depth, and32 ? 6U : 4U);
  EXPECT_EQ(inverse.and_gates, forward.and_gates);
  EXPECT_EQ(inverse.and_depth, forward.and_depth);
}

INSTANTIATE_TEST_SUITE_P(Variants, SboxTest, ::testing::Values(SboxVariant::And32, SboxVariant::Depth4),
                         [](const auto& info) { return info.param == SboxVariant::And32 ? "And32" : "Depth4"; });

TEST(Sbox, PublishedGateCounts) {
  // 113-gate circuit: 32 AND, 77 XOR, 4 XNOR (each XNOR is XOR + INV here).
  const CircuitStats small = compute_stats(single_sbox_circuit(SboxVariant::And32, false));
  EXPECT_EQ(small.xor_gates, 77U + 4U);
  EXPECT_EQ(small.inv_gates, 4U);
  // Depth-16 circuit: 34 AND, 90 XOR, 4 XNOR.
  const CircuitStats shallow = compute_stats(single_sbox_circuit(SboxVariant::Depth4, false));
  EXPECT_EQ(shallow.xor_gates, 90U + 4U);
  EXPECT_EQ(shallow.inv_gates, 4U);
}

}  // namespace
}  // namespace mpc::circuits
