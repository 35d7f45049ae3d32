// Gate counts and AND-depth: the costs that matter for secure evaluation (ANDs cost
// communication, AND-depth costs rounds).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "circuits/circuit.hpp"

namespace mpc::circuits {

struct CircuitStats {
  std::uint64_t gates = 0;
  std::uint64_t and_gates = 0;
  std::uint64_t xor_gates = 0;
  std::uint64_t inv_gates = 0;
  std::uint64_t other_gates = 0;  // Copy (EQW) and Const (EQ)
  std::uint32_t and_depth = 0;    // longest chain of ANDs on any path
  std::uint32_t wires = 0;
  std::vector<std::uint32_t> input_widths;
  std::vector<std::uint32_t> output_widths;
};

// Validates the circuit first (FormatError if malformed).
CircuitStats compute_stats(const Circuit& circuit);

// One "name: value" per line: gates, and, xor, inv, other, and-depth, wires, inputs, outputs.
std::string format_stats(const CircuitStats& stats);

}  // namespace mpc::circuits
