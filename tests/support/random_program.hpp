// Test support for the rss3 evaluator: random layered Programs that obey every
// guarantee of circuits::compile(), and a cleartext reference interpreter for Programs.
// Independent of the circuit generators, so the evaluator can be tested on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "circuits/program.hpp"

namespace mpc::rss3::testing {

struct RandomProgramShape {
  std::uint32_t inputs = 16;
  std::uint32_t outputs = 16;
  std::uint32_t slots = 64;
  std::uint32_t and_layers = 4;         // layers with ANDs; one final linear layer follows
  std::uint32_t linear_per_layer = 40;  // linear ops per layer (besides input loads)
  std::uint32_t ands_per_layer = 12;
  // Share of linear ops that are not XOR (INV, COPY, CONST), in percent.
  std::uint32_t unusual_percent = 25;
};

circuits::Program random_program(std::mt19937_64& rng, const RandomProgramShape& shape);

// Cleartext evaluation: inputs and result are rows of words_for(instances) words; the
// result's padding bits are zero.
std::vector<std::uint64_t> evaluate_cleartext(const circuits::Program& program,
                                              const std::vector<std::uint64_t>& input_rows,
                                              std::size_t instances);

std::vector<std::uint64_t> random_words(std::mt19937_64& rng, std::size_t count);

// Rows of words_for(instances) words (as evaluate_cleartext takes and returns them) as one
// byte per bit, row-major: bit e of row r at r * instances + e.
std::vector<std::uint8_t> row_bits(const std::vector<std::uint64_t>& words, std::size_t rows, std::size_t instances);

}  // namespace mpc::rss3::testing
