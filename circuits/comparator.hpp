// Unsigned comparison circuit.
#pragma once

#include <cstdint>

#include "circuits/circuit.hpp"

namespace mpc::circuits {

// Inputs: a (bits wide), b (bits wide), least significant bit first. Output: one bit,
// 1 iff a > b as unsigned integers. AND-depth at most 1 + ceil(log2(bits)). Throws FormatError
// for bits == 0.
Circuit build_greater_than_circuit(std::uint32_t bits = 64);

}  // namespace mpc::circuits
