// Internal to field_kernels_*.cpp: the kernels of field_kernels.hpp written once over an
// arithmetic policy `F` (a product accumulated without reduction, then reduced once), compiled
// per instruction set. Internal linkage only, as in evaluator_kernels.hpp, so no PCLMULQDQ code
// can be picked by the linker for a CPU without it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/rss3/field_kernels.hpp"

namespace mpc::rss3::detail {
namespace {

inline Gf128 select(Gf128 v, std::uint64_t bit) {
  const std::uint64_t mask = 0 - bit;
  return {v.lo & mask, v.hi & mask};
}

template <class F>
struct KernelSet {
  static Gf128 mul(Gf128 a, Gf128 b) { return F::reduce(F::product(F::load(a), F::load(b))); }

  static Gf128 weighted_bits(const std::uint64_t* bits, std::size_t words, const Gf128* weight, const Gf128* lane) {
    typename F::Wide acc = F::zero();
    for (std::size_t w = 0; w < words; ++w) {
      const std::uint64_t word = bits[w];
      Gf128 sum;
      for (unsigned j = 0; j < 64; ++j) sum ^= select(lane[j], (word >> j) & 1);
      F::accumulate(acc, F::load(weight[w]), F::load(sum));
    }
    return F::reduce(acc);
  }

  static void lift(const std::uint64_t* low, const std::uint64_t* high, std::size_t words, const Gf128* weight,
                   const Gf128* lane_low, const Gf128* lane_high, Gf128* out) {
    for (std::size_t w = 0; w < words; ++w) {
      const auto rho = F::load(weight[w]);
      const std::uint64_t l = low[w], h = high[w];
      for (unsigned j = 0; j < 64; ++j) {
        const Gf128 v = select(lane_low[j], (l >> j) & 1) ^ select(lane_high[j], (h >> j) & 1);
        out[64 * w + j] = F::reduce(F::product(rho, F::load(v)));
      }
    }
  }

  static void round_sums(const Gf128* a, const Gf128* b, std::size_t len, Gf128* c0, Gf128* c2) {
    const std::size_t half = (len + 1) / 2;
    const std::size_t pairs = len - half;  // i < pairs has a partner at i + half
    typename F::Wide s0 = F::zero(), s2 = F::zero();
    for (std::size_t i = 0; i < pairs; ++i) {
      const auto al = F::load(a[i]), bl = F::load(b[i]);
      F::accumulate(s0, al, bl);
      F::accumulate(s2, F::add(al, F::load(a[i + half])), F::add(bl, F::load(b[i + half])));
    }
    for (std::size_t i = pairs; i < half; ++i) {
      const auto al = F::load(a[i]), bl = F::load(b[i]);
      F::accumulate(s0, al, bl);
      F::accumulate(s2, al, bl);
    }
    *c0 = F::reduce(s0);
    *c2 = F::reduce(s2);
  }

  static void fold(Gf128* v, std::size_t len, Gf128 t) {
    const std::size_t half = (len + 1) / 2;
    const std::size_t pairs = len - half;
    const auto tv = F::load(t);
    for (std::size_t i = 0; i < pairs; ++i) {
      const auto l = F::load(v[i]);
      v[i] = F::store(F::add(l, F::load(F::reduce(F::product(tv, F::add(l, F::load(v[i + half])))))));
    }
    for (std::size_t i = pairs; i < half; ++i) {
      const auto l = F::load(v[i]);
      v[i] = F::store(F::add(l, F::load(F::reduce(F::product(tv, l)))));
    }
  }

  static FieldKernels table(const char* name) {
    return {&mul, &weighted_bits, &lift, &round_sums, &fold, name};
  }
};

}  // namespace
}  // namespace mpc::rss3::detail
