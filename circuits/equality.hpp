// Equality test circuit (used to check a GCM tag inside the computation, docs/ticket-format.md).
#pragma once

#include <cstdint>
#include <span>

#include "circuits/builder.hpp"
#include "circuits/circuit.hpp"

namespace mpc::circuits {

// Inputs: a (bits wide), b (bits wide), least significant bit first. Output: one bit, 1 iff
// a == b. bits - 1 AND gates at AND-depth ceil(log2(bits)): 127 AND, depth 7 for 128 bits.
// Throws FormatError(Component::Circuit) for bits == 0.
Circuit build_equality_circuit(std::uint32_t bits = 128);

namespace detail {
// The same comparison inside a larger circuit: a wire that is 1 iff a == b bit for bit.
// Throws FormatError(Component::Circuit) when a is empty or the widths differ.
std::uint32_t equal_bits(CircuitBuilder& builder, std::span<const std::uint32_t> a, std::span<const std::uint32_t> b);
}  // namespace detail

}  // namespace mpc::circuits
