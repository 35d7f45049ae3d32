// Products of polynomials over GF(2) on wires by recursive Karatsuba, down to single
// coefficients: (a0 + a1 X)(b0 + b1 X) = a0 b0 + ((a0 + a1)(b0 + b1) + a0 b0 + a1 b1) X + a1 b1 X^2
// with X = x^(n/2), 3^k AND gates for n = 2^k coefficients where schoolbook takes 4^k. The
// fields built on it (gf128.hpp, share_hash.hpp) reduce the product themselves.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "circuits/builder.hpp"

namespace mpc::circuits::detail {

// A polynomial whose coefficients may be known zeros (no wire): XORs with them cost nothing.
using Poly = std::vector<std::optional<std::uint32_t>>;

// into ^= term, free when either is a known zero.
void add_into(CircuitBuilder& builder, std::optional<std::uint32_t>& into, const std::optional<std::uint32_t>& term);

// The AND inputs of a product (3^k linear combinations of an operand's 2^k coefficients),
// appended to `leaves`: an operand used in many products is spread once and reused.
void karatsuba_spread(CircuitBuilder& builder, std::span<const std::uint32_t> a, std::vector<std::uint32_t>& leaves);

// The product of n-coefficient polynomials (2n - 1 coefficients) from the ANDs of their
// spreads' leaves, in karatsuba_spread's order.
Poly karatsuba_combine(CircuitBuilder& builder, std::span<const std::uint32_t> products, std::size_t n);

}  // namespace mpc::circuits::detail
