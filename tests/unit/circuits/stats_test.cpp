// The AND counts and depths the protocols are budgeted on.
#include <gtest/gtest.h>

#include "circuits/aes.hpp"
#include "circuits/stats.hpp"

namespace mpc::circuits {
namespace {

CircuitStats aes_stats(AesKeySize size, AesDirection direction, SboxVariant sbox) {
  return compute_stats(build_aes_circuit(size, direction, sbox));
}

TEST(Stats, Aes128Figures) {
  for (AesDirection direction : {AesDirection::Encrypt, AesDirection::Decrypt}) {
    const CircuitStats and32 = aes_stats(AesKeySize::Aes128, direction, SboxVariant::And32);
    EXPECT_EQ(and32.and_gates, 5120U);
    EXPECT_EQ(and32.and_depth, 60U);
    const CircuitStats depth4 = aes_stats(AesKeySize::Aes128, direction, SboxVariant::Depth4);
    EXPECT_EQ(depth4.and_gates, 5440U);
    EXPECT_EQ(depth4.and_depth, 40U);
    EXPECT_EQ(and32.input_widths, (std::vector<std::uint32_t>{11 * 128, 128}));
    EXPECT_EQ(and32.output_widths, (std::vector<std::uint32_t>{128}));
  }
}

TEST(Stats, Aes256Figures) {
  for (AesDirection direction : {AesDirection::Encrypt, AesDirection::Decrypt}) {
    const CircuitStats and32 = aes_stats(AesKeySize::Aes256, direction, SboxVariant::And32);
    EXPECT_EQ(and32.and_gates, 7168U);
    EXPECT_EQ(and32.and_depth, 84U);
    const CircuitStats depth4 = aes_stats(AesKeySize::Aes256, direction, SboxVariant::Depth4);
    EXPECT_EQ(depth4.and_gates, 7616U);
    EXPECT_EQ(depth4.and_depth, 56U);
    EXPECT_EQ(and32.input_widths, (std::vector<std::uint32_t>{15 * 128, 128}));
  }
}

TEST(Stats, KeyExpansionFigures) {
  EXPECT_EQ(compute_stats(build_aes_key_expansion_circuit(AesKeySize::Aes128, SboxVariant::And32)).and_gates, 40U * 32);
  EXPECT_EQ(compute_stats(build_aes_key_expansion_circuit(AesKeySize::Aes256, SboxVariant::And32)).and_gates, 52U * 32);
  EXPECT_EQ(compute_stats(build_aes_key_expansion_circuit(AesKeySize::Aes128, SboxVariant::Depth4)).and_depth, 40U);
}

TEST(Stats, CountsEveryKindAndFormats) {
  const Circuit circuit{7, {2}, {2}, {{GateKind::And, 0, 1, 2}, {GateKind::Xor, 2, 0, 3}, {GateKind::Const, 1, 0, 4},
                                     {GateKind::Inv, 3, 0, 5}, {GateKind::Copy, 2, 0, 6}}};
  const CircuitStats stats = compute_stats(circuit);
  EXPECT_EQ(stats.gates, 5U);
  EXPECT_EQ(stats.and_gates, 1U);
  EXPECT_EQ(stats.xor_gates, 1U);
  EXPECT_EQ(stats.inv_gates, 1U);
  EXPECT_EQ(stats.other_gates, 2U);
  EXPECT_EQ(stats.and_depth, 1U);
  EXPECT_EQ(format_stats(stats),
            "gates: 5\nand: 1\nxor: 1\ninv: 1\nother: 2\nand-depth: 1\nwires: 7\ninputs: 2\noutputs: 2\n");
}

}  // namespace
}  // namespace mpc::circuits
