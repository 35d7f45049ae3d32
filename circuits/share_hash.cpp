#include "circuits/share_hash.hpp"

#include <array>

#include "circuits/builder.hpp"
#include "circuits/karatsuba.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

constexpr std::size_t kBits = 64;
constexpr std::size_t kLeaves = 729;  // 3^6

using Element = std::array<std::uint32_t, kBits>;

// A product's 127 coefficients reduced with x^64 = x^4 + x^3 + x + 1, highest terms first.
Element reduce(CircuitBuilder& builder, detail::Poly product) {
  product.resize(2 * kBits - 1);
  for (std::size_t i = product.size() - 1; i >= kBits; --i) {
    if (!product[i]) continue;
    for (const std::size_t shift : {4u, 3u, 1u, 0u}) detail::add_into(builder, product[i - kBits + shift], product[i]);
  }
  Element out{};
  for (std::size_t i = 0; i < kBits; ++i) out[i] = product[i] ? *product[i] : builder.constant(false);
  return out;
}

Element multiply(CircuitBuilder& builder, const Element& a, const std::vector<std::uint32_t>& key_leaves) {
  std::vector<std::uint32_t> leaves;
  leaves.reserve(kLeaves);
  detail::karatsuba_spread(builder, a, leaves);
  std::vector<std::uint32_t> products(kLeaves);
  for (std::size_t i = 0; i < kLeaves; ++i) products[i] = builder.and_(leaves[i], key_leaves[i]);
  return reduce(builder, detail::karatsuba_combine(builder, products, kBits));
}

}  // namespace

Circuit build_share_hash_check(std::uint32_t share_bits) {
  if (share_bits == 0) throw FormatError(Component::Circuit, "a share check of no bits");
  CircuitBuilder builder;
  const auto share = builder.add_input_group(share_bits);
  const auto blinding = builder.add_input_group(kBits);
  const auto key = builder.add_input_group(kBits);
  const auto tag = builder.add_input_group(kBits);
  std::vector<std::uint32_t> key_leaves;
  key_leaves.reserve(kLeaves);
  detail::karatsuba_spread(builder, key, key_leaves);
  // Horner: h = (h ^ S_k) a, from h = 0, block by block.
  Element hash{};
  const std::size_t blocks = (share_bits + kBits - 1) / kBits;
  for (std::size_t k = 0; k < blocks; ++k) {
    Element sum{};
    for (std::size_t i = 0; i < kBits; ++i) {
      const std::size_t j = k * kBits + i;
      const bool has_share = j < share_bits;
      if (k == 0) sum[i] = has_share ? share[j] : builder.constant(false);
      else sum[i] = has_share ? builder.xor_(hash[i], share[j]) : hash[i];
    }
    hash = multiply(builder, sum, key_leaves);
  }
  // The verdict: every bit of H ^ b ^ t is zero.
  std::uint32_t verdict = 0;
  for (std::size_t i = 0; i < kBits; ++i) {
    const std::uint32_t same = builder.inv(builder.xor_(builder.xor_(hash[i], blinding[i]), tag[i]));
    verdict = i == 0 ? same : builder.and_(verdict, same);
  }
  return builder.finish({{verdict}});
}

std::uint64_t share_hash_check_ands(std::uint32_t share_bits) {
  return kLeaves * ((share_bits + kBits - 1) / kBits) + (kBits - 1);
}

}  // namespace mpc::circuits
