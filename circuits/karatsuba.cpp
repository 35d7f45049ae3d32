#include "circuits/karatsuba.hpp"

namespace mpc::circuits::detail {

void add_into(CircuitBuilder& builder, std::optional<std::uint32_t>& into, const std::optional<std::uint32_t>& term) {
  if (!term) return;
  into = into ? builder.xor_(*into, *term) : *term;
}

void karatsuba_spread(CircuitBuilder& builder, std::span<const std::uint32_t> a, std::vector<std::uint32_t>& leaves) {
  if (a.size() == 1) {
    leaves.push_back(a[0]);
    return;
  }
  const std::size_t half = a.size() / 2;
  std::vector<std::uint32_t> sum(half);
  for (std::size_t i = 0; i < half; ++i) sum[i] = builder.xor_(a[i], a[half + i]);
  karatsuba_spread(builder, a.first(half), leaves);
  karatsuba_spread(builder, sum, leaves);
  karatsuba_spread(builder, a.subspan(half), leaves);
}

Poly karatsuba_combine(CircuitBuilder& builder, std::span<const std::uint32_t> products, std::size_t n) {
  if (n == 1) return Poly{products[0]};
  const std::size_t half = n / 2, third = products.size() / 3;
  const Poly low = karatsuba_combine(builder, products.first(third), half);
  Poly middle = karatsuba_combine(builder, products.subspan(third, third), half);
  const Poly high = karatsuba_combine(builder, products.subspan(2 * third), half);
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

}  // namespace mpc::circuits::detail
