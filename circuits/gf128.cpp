// GF(2^128) on wires (gf128.hpp). Products by Karatsuba (karatsuba.hpp): 3^7 AND gates for 128
// coefficients where schoolbook takes 2^14. Then the degree-254 product is reduced with
// x^128 = x^7 + x^2 + x + 1, highest terms first.
#include "circuits/gf128.hpp"

#include "circuits/karatsuba.hpp"

#include <optional>

#include "common/error.hpp"

namespace mpc::circuits::detail {
namespace {

constexpr std::size_t kBits = 128;
constexpr std::size_t kLeaves = 2187;  // 3^7

// Reduction of a polynomial of degree below 255 modulo x^128 + x^7 + x^2 + x + 1.
Gf128Wires reduce(CircuitBuilder& builder, Poly product) {
  product.resize(2 * kBits - 1);
  for (std::size_t i = product.size() - 1; i >= kBits; --i) {
    if (!product[i]) continue;
    for (const std::size_t shift : {7u, 2u, 1u, 0u}) add_into(builder, product[i - kBits + shift], product[i]);
  }
  Gf128Wires out{};
  for (std::size_t i = 0; i < kBits; ++i) out[i] = product[i] ? *product[i] : builder.constant(false);
  return out;
}

}  // namespace

Gf128Wires from_gcm_bytes(std::span<const std::uint32_t> bytes) {
  if (bytes.size() != kBits) throw FormatError(Component::Circuit, "a GF(2^128) element is 128 wires");
  Gf128Wires out{};
  for (std::size_t i = 0; i < kBits; ++i) out[i] = bytes[8 * (i / 8) + 7 - i % 8];
  return out;
}

std::vector<std::uint32_t> to_gcm_bytes(const Gf128Wires& element) {
  std::vector<std::uint32_t> out(kBits);
  for (std::size_t i = 0; i < kBits; ++i) out[8 * (i / 8) + 7 - i % 8] = element[i];
  return out;
}

Gf128Wires gf128_square(CircuitBuilder& builder, const Gf128Wires& a) {
  Poly square(2 * kBits - 1);
  for (std::size_t i = 0; i < kBits; ++i) square[2 * i] = a[i];
  return reduce(builder, std::move(square));
}

Gf128Spread gf128_spread(CircuitBuilder& builder, const Gf128Wires& a) {
  Gf128Spread out;
  out.leaves.reserve(kLeaves);
  karatsuba_spread(builder, a, out.leaves);
  return out;
}

Gf128Wires gf128_multiply(CircuitBuilder& builder, const Gf128Spread& a, const Gf128Spread& b) {
  if (a.leaves.size() != kLeaves || b.leaves.size() != kLeaves)
    throw FormatError(Component::Circuit, "GF(2^128) spreads of the wrong size");
  std::vector<std::uint32_t> products(kLeaves);
  for (std::size_t i = 0; i < kLeaves; ++i) products[i] = builder.and_(a.leaves[i], b.leaves[i]);
  return reduce(builder, karatsuba_combine(builder, products, kBits));
}

}  // namespace mpc::circuits::detail
