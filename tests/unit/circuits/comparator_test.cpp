#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "circuits/comparator.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/program.hpp"
#include "circuits/stats.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

std::vector<std::uint8_t> operand_bits(std::uint64_t a, std::uint64_t b, std::uint32_t bits) {
  std::vector<std::uint8_t> input;
  for (std::uint32_t i = 0; i < bits; ++i) input.push_back((a >> i) & 1U);
  for (std::uint32_t i = 0; i < bits; ++i) input.push_back((b >> i) & 1U);
  return input;
}

bool greater(const Circuit& circuit, std::uint64_t a, std::uint64_t b, std::uint32_t bits = 64) {
  const auto out = evaluate(circuit, operand_bits(a, b, bits));
  EXPECT_EQ(out.size(), 1U);
  return out.at(0) == 1;
}

TEST(Comparator, EdgeCases) {
  const Circuit circuit = build_greater_than_circuit();
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t values[] = {0, 1, 2, 0x7fffffffffffffff, 0x8000000000000000, kMax - 1, kMax, 0x5555, 1ULL << 32};
  for (std::uint64_t a : values) {
    for (std::uint64_t b : values) EXPECT_EQ(greater(circuit, a, b), a > b) << a << " > " << b;
    EXPECT_FALSE(greater(circuit, a, a));
    if (a != kMax) {
      EXPECT_TRUE(greater(circuit, a + 1, a));
      EXPECT_FALSE(greater(circuit, a, a + 1));
    }
  }
}

TEST(Comparator, RandomPairsPacked) {
  const Circuit circuit = build_greater_than_circuit();
  const Program program = compile(circuit);
  validate(program);
  std::mt19937_64 rng(5);
  for (int batch = 0; batch < 200; ++batch) {
    std::uint64_t a[64], b[64];
    std::vector<std::uint64_t> words(128, 0);
    for (int lane = 0; lane < 64; ++lane) {
      a[lane] = rng();
      // Every fourth pair shares its high bits so the low half decides.
      b[lane] = lane % 4 == 0 ? (a[lane] & ~0xffffULL) | (rng() & 0xffff) : rng();
      if (lane == 1) b[lane] = a[lane];
      for (int i = 0; i < 64; ++i) {
        words[i] |= ((a[lane] >> i) & 1U) << lane;
        words[64 + i] |= ((b[lane] >> i) & 1U) << lane;
      }
    }
    const auto from_circuit = evaluate_packed(circuit, words);
    const auto from_program = evaluate_program_packed(program, words);
    for (int lane = 0; lane < 64; ++lane) {
      ASSERT_EQ((from_circuit[0] >> lane) & 1U, a[lane] > b[lane] ? 1U : 0U);
      ASSERT_EQ((from_program[0] >> lane) & 1U, a[lane] > b[lane] ? 1U : 0U);
    }
  }
}

TEST(Comparator, SmallWidthsExhaustive) {
  for (std::uint32_t bits = 1; bits <= 6; ++bits) {
    const Circuit circuit = build_greater_than_circuit(bits);
    for (std::uint64_t a = 0; a < (1U << bits); ++a) {
      for (std::uint64_t b = 0; b < (1U << bits); ++b) ASSERT_EQ(greater(circuit, a, b, bits), a > b) << bits;
    }
  }
}

TEST(Comparator, LogarithmicDepth) {
  const CircuitStats stats = compute_stats(build_greater_than_circuit());
  EXPECT_EQ(stats.and_depth, 7U);  // 1 + log2(64)
  EXPECT_EQ(stats.and_gates, 184U);
  EXPECT_LE(compute_stats(build_greater_than_circuit(33)).and_depth, 7U);  // 1 + ceil(log2(33))
  EXPECT_EQ(compute_stats(build_greater_than_circuit(1)).and_depth, 1U);
}

TEST(Comparator, RejectsZeroWidth) { EXPECT_THROW(build_greater_than_circuit(0), FormatError); }

}  // namespace
}  // namespace mpc::circuits
