// The evaluator on Programs produced by circuits::compile from random circuits, against
// the circuits library's own cleartext evaluator (an outside reference).
#include <gtest/gtest.h>

#include <random>

#include "circuits/circuit.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/program.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "test_util.hpp"

namespace mpc::rss3 {
namespace {

circuits::Circuit random_circuit(std::mt19937_64& rng, std::uint32_t inputs, std::uint32_t gates,
                                 std::uint32_t outputs) {
  circuits::Circuit c;
  c.input_widths = {inputs / 2, inputs - inputs / 2};
  c.output_widths = {outputs};
  c.num_wires = inputs + gates;
  for (std::uint32_t w = inputs; w < inputs + gates; ++w) {
    const auto pick = [&] { return static_cast<std::uint32_t>(rng() % w); };
    circuits::Gate g{circuits::GateKind::Xor, pick(), pick(), w};
    switch (rng() % 10) {
      case 0: case 1: case 2: g.kind = circuits::GateKind::And; break;
      case 3: g.kind = circuits::GateKind::Inv; break;
      case 4: g.kind = circuits::GateKind::Copy; break;
      case 5: g.kind = circuits::GateKind::Const; g.in0 = static_cast<std::uint32_t>(rng() % 2); break;
      default: break;
    }
    c.gates.push_back(g);
  }
  return c;
}

TEST(CompiledCircuits, MatchTheCircuitLibrarysEvaluator) {
  std::mt19937_64 rng(91);
  for (int round = 0; round < 6; ++round) {
    const auto circuit = random_circuit(rng, 40, 600, 30);
    circuits::validate(circuit);
    const circuits::Program program = circuits::compile(circuit);
    circuits::validate(program);
    for (std::size_t n : {1u, 130u, 2049u}) {
      const std::size_t words = words_for(n);
      std::vector<std::uint64_t> clear(circuit.total_inputs() * words);
      for (auto& w : clear) w = rng();
      const auto inputs = share_matrix(clear, circuit.total_inputs(), n);
      for (SimdLevel level : test::supported_levels()) {
        const auto opened =
            open_matrix(evaluate_three_parties(program, inputs, level, BatchNonce{rng(), 0}, test::random_keys(rng)));
        for (std::size_t w = 0; w < words; ++w) {
          std::vector<std::uint64_t> lane_inputs(circuit.total_inputs());
          for (std::size_t r = 0; r < lane_inputs.size(); ++r) lane_inputs[r] = clear[r * words + w];
          auto expected = circuits::evaluate_packed(circuit, lane_inputs);
          ASSERT_EQ(expected.size(), program.num_outputs);
          const std::uint64_t mask = (w + 1 == words && n % 64) ? (std::uint64_t{1} << (n % 64)) - 1 : ~std::uint64_t{0};
          for (std::size_t j = 0; j < expected.size(); ++j)
            ASSERT_EQ(opened[j * words + w], expected[j] & mask)
                << "round " << round << " n=" << n << " output " << j << " " << simd_level_name(level);
        }
      }
    }
  }
}

}  // namespace
}  // namespace mpc::rss3
