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

  static void window_sums(const std::uint64_t* words, std::size_t windows, std::size_t stride, const Gf128* weight,
                          Gf128* out) {
    constexpr std::size_t kChunk = 32;  // accumulators held at once
    for (std::size_t l0 = 0; l0 < stride; l0 += kChunk) {
      const std::size_t count = stride - l0 < kChunk ? stride - l0 : kChunk;
      typename F::Wide acc[kChunk];
      for (std::size_t l = 0; l < count; ++l) acc[l] = F::zero();
      for (std::size_t c = 0; c < windows; ++c) {
        const auto rho = F::load(weight[c]);
        const std::uint64_t* row = words + stride * c + l0;
        for (std::size_t l = 0; l < count; ++l) F::accumulate_word(acc[l], rho, row[l]);
      }
      for (std::size_t l = 0; l < count; ++l) out[l0 + l] = F::reduce(acc[l]);
    }
  }

  static void weight_lanes(Gf128* v, std::size_t windows, const Gf128* weight) {
    for (std::size_t c = 0; c < windows; ++c) {
      Gf128 lane = weight[c];  // weight[c] * x^j
      for (unsigned j = 0; j < 64; ++j) {
        v[64 * c + j] = F::reduce(F::product(F::load(lane), F::load(v[64 * c + j])));
        const std::uint64_t carry = lane.hi >> 63;
        lane.hi = (lane.hi << 1) | (lane.lo >> 63);
        lane.lo = (lane.lo << 1) ^ (0x87 & (0 - carry));
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

  // fold(a, len, t) and fold(b, len, t), then round_sums of the folded vectors, in one pass.
  static void fold_and_sum(Gf128* a, Gf128* b, std::size_t len, Gf128 t, Gf128* c0, Gf128* c2) {
    const std::size_t half = (len + 1) / 2, next = (half + 1) / 2, pairs = half - next;
    const auto tv = F::load(t);
    auto folded = [&](Gf128* v, std::size_t i) {
      const auto l = F::load(v[i]);
      const auto r = i + half < len ? F::load(v[i + half]) : F::load(Gf128{});
      return F::add(l, F::load(F::reduce(F::product(tv, F::add(l, r)))));
    };
    typename F::Wide s0 = F::zero(), s2 = F::zero();
    for (std::size_t i = 0; i < pairs; ++i) {
      const auto a0 = folded(a, i), a1 = folded(a, i + next), b0 = folded(b, i), b1 = folded(b, i + next);
      a[i] = F::store(a0), a[i + next] = F::store(a1), b[i] = F::store(b0), b[i + next] = F::store(b1);
      F::accumulate(s0, a0, b0);
      F::accumulate(s2, F::add(a0, a1), F::add(b0, b1));
    }
    for (std::size_t i = pairs; i < next; ++i) {
      const auto a0 = folded(a, i), b0 = folded(b, i);
      a[i] = F::store(a0), b[i] = F::store(b0);
      F::accumulate(s0, a0, b0);
      F::accumulate(s2, a0, b0);
    }
    *c0 = F::reduce(s0);
    *c2 = F::reduce(s2);
  }

  static FieldKernels table(const char* name) {
    return {&mul, &window_sums, &weight_lanes, &round_sums, &fold, &fold_and_sum, name};
  }
};

}  // namespace
}  // namespace mpc::rss3::detail
