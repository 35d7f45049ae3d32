// Equality circuit: exhaustive for small widths, random and single-bit differences at 128
// bits (direct and through the compiled program), cost, catalogue entry.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "circuits/catalogue.hpp"
#include "circuits/equality.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/program.hpp"
#include "circuits/stats.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

using Bits = std::vector<std::uint8_t>;

Bits concat(const Bits& a, const Bits& b) {
  Bits input(a);
  input.insert(input.end(), b.begin(), b.end());
  return input;
}

Bits random_bits(std::mt19937_64& rng, std::size_t n) {
  Bits bits(n);
  for (auto& bit : bits) bit = static_cast<std::uint8_t>(rng() & 1U);
  return bits;
}

TEST(Equality, Example) {
  const Circuit circuit = build_equality_circuit(4);
  EXPECT_EQ(evaluate(circuit, {1, 0, 1, 1, 1, 0, 1, 1}), Bits{1});
  EXPECT_EQ(evaluate(circuit, {1, 0, 1, 1, 1, 0, 1, 0}), Bits{0});
}

TEST(Equality, SmallWidthsExhaustive) {
  for (std::uint32_t bits = 1; bits <= 6; ++bits) {
    const Circuit circuit = build_equality_circuit(bits);
    for (std::uint32_t a = 0; a < (1U << bits); ++a) {
      for (std::uint32_t b = 0; b < (1U << bits); ++b) {
        Bits input;
        for (std::uint32_t i = 0; i < bits; ++i) input.push_back((a >> i) & 1U);
        for (std::uint32_t i = 0; i < bits; ++i) input.push_back((b >> i) & 1U);
        ASSERT_EQ(evaluate(circuit, input), Bits{a == b ? std::uint8_t{1} : std::uint8_t{0}}) << bits << " " << a
                                                                                              << " " << b;
      }
    }
  }
}

TEST(Equality, Random128AndSingleBitDifferences) {
  const Circuit circuit = build_equality_circuit();
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    const Bits a = random_bits(rng, 128);
    EXPECT_EQ(evaluate(circuit, concat(a, a)), Bits{1});
    EXPECT_EQ(evaluate(circuit, concat(a, random_bits(rng, 128))), Bits{0});  // equal with prob. 2^-128
    for (std::size_t i = 0; i < 128; ++i) {
      Bits b = a;
      b[i] ^= 1U;
      ASSERT_EQ(evaluate(circuit, concat(a, b)), Bits{0}) << i;
      ASSERT_EQ(evaluate(circuit, concat(b, a)), Bits{0}) << i;
    }
  }
  EXPECT_EQ(evaluate(circuit, Bits(256, 0)), Bits{1});
  EXPECT_EQ(evaluate(circuit, Bits(256, 1)), Bits{1});
}

// 64 lanes per batch through circuits::compile and the layered program evaluator: lane 0
// equal, lanes 1..63 differ in one bit each (spread over all 128 positions across batches),
// odd lanes of odd batches fully random.
TEST(Equality, CompiledProgramPacked) {
  const Circuit circuit = build_equality_circuit();
  const Program program = compile(circuit);
  validate(program);
  EXPECT_EQ(program.and_gates, 127U);
  EXPECT_EQ(program.and_depth, 7U);
  std::mt19937_64 rng(12);
  for (int batch = 0; batch < 8; ++batch) {
    std::vector<std::uint64_t> words(256, 0);
    bool expected[64];
    for (int lane = 0; lane < 64; ++lane) {
      const Bits a = random_bits(rng, 128);
      Bits b = a;
      if (lane != 0) {
        if (batch % 2 == 1 && lane % 2 == 1) {
          b = random_bits(rng, 128);
        } else {
          b[static_cast<std::size_t>((batch * 63 + lane) % 128)] ^= 1U;
        }
      }
      expected[lane] = a == b;
      for (int i = 0; i < 128; ++i) {
        words[static_cast<std::size_t>(i)] |= static_cast<std::uint64_t>(a[static_cast<std::size_t>(i)]) << lane;
        words[static_cast<std::size_t>(128 + i)] |= static_cast<std::uint64_t>(b[static_cast<std::size_t>(i)]) << lane;
      }
    }
    const auto from_program = evaluate_program_packed(program, words);
    const auto from_circuit = evaluate_packed(circuit, words);
    ASSERT_EQ(from_program.size(), 1U);
    for (int lane = 0; lane < 64; ++lane) {
      ASSERT_EQ((from_program[0] >> lane) & 1U, expected[lane] ? 1U : 0U) << batch << " " << lane;
      ASSERT_EQ((from_circuit[0] >> lane) & 1U, expected[lane] ? 1U : 0U) << batch << " " << lane;
    }
  }
}

TEST(Equality, CostAndDepth) {
  const CircuitStats stats = compute_stats(build_equality_circuit());
  EXPECT_EQ(stats.and_gates, 127U);
  EXPECT_EQ(stats.and_depth, 7U);
  EXPECT_EQ(stats.input_widths, (std::vector<std::uint32_t>{128, 128}));
  EXPECT_EQ(stats.output_widths, (std::vector<std::uint32_t>{1}));
  for (std::uint32_t bits : {1U, 2U, 3U, 5U, 33U, 64U, 100U, 129U}) {
    const CircuitStats s = compute_stats(build_equality_circuit(bits));
    std::uint32_t depth = 0;
    while ((1ULL << depth) < bits) ++depth;
    EXPECT_EQ(s.and_gates, bits - 1U) << bits;
    EXPECT_EQ(s.and_depth, depth) << bits;
  }
}

TEST(Equality, RejectsZeroWidth) { EXPECT_THROW(build_equality_circuit(0), FormatError); }

TEST(Equality, InCatalogue) {
  const auto names = catalogue_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "eq128"), names.end());
  const Circuit circuit = build_named_circuit("eq128");
  EXPECT_EQ(compute_stats(circuit).and_gates, 127U);
  Bits input(256, 0);
  EXPECT_EQ(evaluate(circuit, input), Bits{1});
  input[200] = 1;
  EXPECT_EQ(evaluate(circuit, input), Bits{0});
}

}  // namespace
}  // namespace mpc::circuits
