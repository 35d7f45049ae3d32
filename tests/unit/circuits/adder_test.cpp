// Word adders on builder wires against integer addition, 64 random cases per evaluation.
#include <gtest/gtest.h>

#include <random>

#include "circuits/adder.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/stats.hpp"
#include "common/error.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using detail::Word32;
using detail::WordGates;

Word32 word_from_group(const std::vector<std::uint32_t>& wires) {
  Word32 word{};
  std::copy(wires.begin(), wires.end(), word.begin());
  return word;
}

std::vector<std::uint32_t> group_from_word(const Word32& word) { return {word.begin(), word.end()}; }

// Evaluates `circuit` (three 32-bit input groups, one 32-bit output, each little-endian) on 64
// random triples and checks every lane against `expected`.
template <typename Expected>
void expect_matches(const Circuit& circuit, Expected expected, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::array<std::uint32_t, 3>> cases(64);
  std::vector<test::Bytes> instances;
  for (auto& triple : cases) {
    test::Bytes instance;
    for (auto& value : triple) {
      value = static_cast<std::uint32_t>(rng());
      for (int byte = 0; byte < 4; ++byte) instance.push_back(static_cast<std::uint8_t>(value >> (8 * byte)));
    }
    instances.push_back(instance);
  }
  // Carry-edge cases: all ones plus one, and a value plus its complement.
  cases[0] = {0xFFFFFFFFU, 1U, 0xFFFFFFFFU};
  cases[1] = {0x12345678U, ~0x12345678U, 0x80000000U};
  for (std::size_t lane = 0; lane < 2; ++lane) {
    instances[lane].clear();
    for (auto value : cases[lane])
      for (int byte = 0; byte < 4; ++byte) instances[lane].push_back(static_cast<std::uint8_t>(value >> (8 * byte)));
  }
  const auto outputs = evaluate_packed(circuit, test::pack_lanes(instances));
  for (std::size_t lane = 0; lane < cases.size(); ++lane) {
    const test::Bytes bytes = test::unpack_lane(outputs, lane);
    const std::uint32_t got = static_cast<std::uint32_t>(bytes[0]) | static_cast<std::uint32_t>(bytes[1]) << 8 |
                              static_cast<std::uint32_t>(bytes[2]) << 16 | static_cast<std::uint32_t>(bytes[3]) << 24;
    ASSERT_EQ(got, expected(cases[lane][0], cases[lane][1], cases[lane][2])) << "lane " << lane;
  }
}

template <typename Build>
Circuit build_three_input(Build build) {
  CircuitBuilder builder;
  WordGates gates(builder);
  const Word32 x = word_from_group(builder.add_input_group(32));
  const Word32 y = word_from_group(builder.add_input_group(32));
  const Word32 z = word_from_group(builder.add_input_group(32));
  return builder.finish({group_from_word(build(gates, x, y, z))});
}

TEST(Adder, PrefixAdderAddsModulo2To32AtDepth6) {
  const Circuit circuit = build_three_input([](WordGates& g, const Word32& x, const Word32& y, const Word32&) { return g.add(x, y); });
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    expect_matches(circuit, [](std::uint32_t x, std::uint32_t y, std::uint32_t) { return x + y; }, seed);
  }
  const CircuitStats stats = compute_stats(circuit);
  EXPECT_EQ(stats.and_depth, 6U);  // generate layer + log2(32) prefix layers
  EXPECT_EQ(stats.and_gates, 151U);  // 31 generate, 75 group generate, 45 group propagate
}

TEST(Adder, CompressorKeepsTheSumAtDepth1) {
  for (bool take_carry : {false, true}) {
    const Circuit circuit = build_three_input([&](WordGates& g, const Word32& x, const Word32& y, const Word32& z) {
      const detail::CarrySave reduced = g.compress(x, y, z);
      return take_carry ? reduced.carry : reduced.sum;
    });
    if (take_carry) {
      expect_matches(circuit, [](std::uint32_t x, std::uint32_t y, std::uint32_t z) {
        return ((x & y) | (x & z) | (y & z)) << 1;
      }, 7);
      EXPECT_EQ(compute_stats(circuit).and_gates, 31U);  // one per bit, the top carry dropped
      EXPECT_EQ(compute_stats(circuit).and_depth, 1U);
    } else {
      expect_matches(circuit, [](std::uint32_t x, std::uint32_t y, std::uint32_t z) { return x ^ y ^ z; }, 8);
    }
  }
}

TEST(Adder, CarrySaveSumOfThreeCostsNoMoreLayersThanAnAdd) {
  const Circuit circuit = build_three_input([](WordGates& g, const Word32& x, const Word32& y, const Word32& z) { return g.sum({x, y, z}); });
  for (std::uint64_t seed = 30; seed < 40; ++seed) {
    expect_matches(circuit, [](std::uint32_t x, std::uint32_t y, std::uint32_t z) { return x + y + z; }, seed);
  }
  // The 3:2 layer's carries come one layer late, but the carry into bit 0 is 0, which shortens
  // every prefix group reaching bit 0 by one AND: still 6 layers.
  EXPECT_EQ(compute_stats(circuit).and_depth, 6U);
}

TEST(Adder, SumOfFiveWithAConstant) {
  constexpr std::uint32_t kConstant = 0x8F1BBCDCU;
  const Circuit circuit = build_three_input([](WordGates& g, const Word32& x, const Word32& y, const Word32& z) {
    return g.sum({x, y, z, g.constant(kConstant), detail::rotl(x, 5)});
  });
  for (std::uint64_t seed = 40; seed < 50; ++seed) {
    expect_matches(circuit, [](std::uint32_t x, std::uint32_t y, std::uint32_t z) {
      return x + y + z + kConstant + ((x << 5) | (x >> 27));
    }, seed);
  }
}

TEST(Adder, AddingAPublicConstantCostsNoMoreThanAGeneralAdd) {
  for (std::uint32_t constant : {0x5A827999U, 0xFFFFFFFFU, 1U, 0U}) {
    const Circuit circuit = build_three_input([&](WordGates& g, const Word32& x, const Word32&, const Word32&) {
      return g.add(x, g.constant(constant));
    });
    expect_matches(circuit, [&](std::uint32_t x, std::uint32_t, std::uint32_t) { return x + constant; }, constant);
    const CircuitStats stats = compute_stats(circuit);
    EXPECT_LE(stats.and_depth, 5U) << constant;  // the generate layer folds away
    EXPECT_LT(stats.and_gates, 151U) << constant;
  }
}

TEST(Adder, RotationAndBigEndianWordsAreRewiring) {
  CircuitBuilder builder;
  const std::vector<std::uint32_t> wires = builder.add_input_group(32);
  const Word32 word = detail::word_from_be_bits(wires);
  // Byte 0 holds the most significant bits; bit 0 of the word is bit 0 of byte 3.
  EXPECT_EQ(word[0], wires[24]);
  EXPECT_EQ(word[31], wires[7]);
  std::vector<std::uint32_t> back;
  detail::append_be_bits(word, back);
  EXPECT_EQ(back, wires);
  EXPECT_EQ(detail::rotl(word, 5)[5], word[0]);
  EXPECT_EQ(detail::rotl(word, 5)[0], word[27]);
  EXPECT_THROW(detail::word_from_be_bits(std::span<const std::uint32_t>(wires).first(31)), FormatError);
}

}  // namespace
}  // namespace mpc::circuits
