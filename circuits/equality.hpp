// Equality test circuit (used to check a GCM tag inside the computation, docs/ticket-format.md).
#pragma once

#include <cstdint>

#include "circuits/circuit.hpp"

namespace mpc::circuits {

// Inputs: a (bits wide), b (bits wide), least significant bit first. Output: one bit, 1 iff
// a == b. bits - 1 AND gates at AND-depth ceil(log2(bits)): 127 AND, depth 7 for 128 bits.
// Throws FormatError(Component::Circuit) for bits == 0.
Circuit build_equality_circuit(std::uint32_t bits = 128);

}  // namespace mpc::circuits
