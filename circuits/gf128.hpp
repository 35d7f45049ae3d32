// Arithmetic in GCM's field GF(2^128) = GF(2)[x] / (x^128 + x^7 + x^2 + x + 1) on wires, for
// circuits that compute GHASH keys inside the computation (gcm_key_material.hpp).
//
// An element is 128 wires, coefficient of x^i on wire i: not GCM's byte order, where byte b's
// most significant bit is x^(8b): from_gcm_bytes and to_gcm_bytes rewire between the two.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/builder.hpp"

namespace mpc::circuits::detail {

using Gf128Wires = std::array<std::uint32_t, 128>;

// Pure rewiring: byte b bit k (value 2^k) at wire 8b + k <-> coefficient of x^(8b + 7 - k).
Gf128Wires from_gcm_bytes(std::span<const std::uint32_t> bytes);
std::vector<std::uint32_t> to_gcm_bytes(const Gf128Wires& element);

// a^2: linear over GF(2), XOR gates only.
Gf128Wires gf128_square(CircuitBuilder& builder, const Gf128Wires& a);

// The AND inputs of a Karatsuba product (3^7 = 2187 linear combinations of an operand's
// coefficients): an operand used in many products is spread once and its spread reused.
struct Gf128Spread {
  std::vector<std::uint32_t> leaves;
};
Gf128Spread gf128_spread(CircuitBuilder& builder, const Gf128Wires& a);

// a * b from both spreads: 2187 AND gates at AND depth 1 above the spreads, then XORs.
Gf128Wires gf128_multiply(CircuitBuilder& builder, const Gf128Spread& a, const Gf128Spread& b);

}  // namespace mpc::circuits::detail
