// Cleartext evaluators: the reference every protocol implementation is tested against.
// All validate their argument first and throw FormatError(Component::Circuit) on a
// malformed circuit or program or a wrong number of inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "circuits/circuit.hpp"
#include "circuits/program.hpp"

namespace mpc::circuits {

// One bit per byte (0 or 1; other values are an error), inputs in wire order; returns
// the output bits in wire order.
std::vector<std::uint8_t> evaluate(const Circuit& circuit, const std::vector<std::uint8_t>& input_bits);

// 64 independent instances: bit i of input_words[w] is input wire w of instance i; the
// result holds one word per output wire, same lanes.
std::vector<std::uint64_t> evaluate_packed(const Circuit& circuit, const std::vector<std::uint64_t>& input_words);

// Runs a compiled Program with the execution model of program.hpp (all ANDs of a layer
// read before any writes), 64 instances as above.
std::vector<std::uint64_t> evaluate_program_packed(const Program& program,
                                                   const std::vector<std::uint64_t>& input_words);

}  // namespace mpc::circuits
