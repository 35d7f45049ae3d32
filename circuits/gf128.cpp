// GF(2^128) on wires (gf128.hpp). Products by recursive Karatsuba over GF(2)[x] down to single
// coefficients, (a0 + a1 X)(b0 + b1 X) = a0 b0 + ((a0 + a1)(b0 + b1) + a0 b0 + a1 b1) X + a1 b1 X^2
// with X = x^(n/2): 3^7 AND gates for 128 coefficients where schoolbook takes 2^14. Then the
// degree-254 product is reduced with x^128 = x^7 + x^2 + x + 1, highest terms first.
#include "circuits/gf128.hpp"

#include <optional>

#include "common/error.hpp"

namespace mpc::circuits::detail {
namespace {

constexpr std::size_t kBits = 128;
constexpr std::size_t kLeaves = 2187;  // 3^7

// A polynomial whose coefficients may be known zeros (no wire): XORs with them cost nothing.
using Poly = std::vector<std::optional<std::uint32_t>>;

void add_into(CircuitBuilder& builder, std::optional<std::uint32_t>& into, const std::optional<std::uint32_t>& term) {
  if (!term) return;
  into = into ? builder.xor_(*into, *term) : *term;
}

void spread(CircuitBuilder& builder, std::span<const std::uint32_t> a, std::vector<std::uint32_t>& leaves) {
  if (a.size() == 1) {
    leaves.push_back(a[0]);
    return;
  }
  const std::size_t half = a.size() / 2;
  std::vector<std::uint32_t> sum(half);
  for (std::size_t i = 0; i < half; ++i) sum[i] = builder.xor_(a[i], a[half + i]);
  spread(builder, a.first(half), leaves);
  spread(builder, sum, leaves);
  spread(builder, a.subspan(half), leaves);
}

// The product of n-coefficient polynomials (2n - 1 coefficients) from the products of their
// leaves, in spread()'s order.
Poly combine(CircuitBuilder& builder, std::span<const std::uint32_t> products, std::size_t n) {
  if (n == 1) return Poly{products[0]};
  const std::size_t half = n / 2, third = products.size() / 3;
  const Poly low = combine(builder, products.first(third), half);
  Poly middle = combine(builder, products.subspan(third, third), half);
  const Poly high = combine(builder, products.subspan(2 * third), half);
  for (std::size_t i = 0; i < middle.size(); ++i) {
    add_into(builder, middle[i], low[i]);
    add_into(builder, middle[i], high[i]);
  }
  Poly out(2 * n - 1);
  for (std::size_t i = 0; i < low.size(); ++i) {
    add_into(builder, out[i], low[i]);
    add_into(builder, out[n + i], high[i]);
  }
  for (std::size_t i = 0; i < middle.size(); ++i) add_into(builder, out[half + i], middle[i]);
  return out;
}

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
  spread(builder, a, out.leaves);
  return out;
}

Gf128Wires gf128_multiply(CircuitBuilder& builder, const Gf128Spread& a, const Gf128Spread& b) {
  if (a.leaves.size() != kLeaves || b.leaves.size() != kLeaves)
    throw FormatError(Component::Circuit, "GF(2^128) spreads of the wrong size");
  std::vector<std::uint32_t> products(kLeaves);
  for (std::size_t i = 0; i < kLeaves; ++i) products[i] = builder.and_(a.leaves[i], b.leaves[i]);
  return reduce(builder, combine(builder, products, kBits));
}

}  // namespace mpc::circuits::detail
