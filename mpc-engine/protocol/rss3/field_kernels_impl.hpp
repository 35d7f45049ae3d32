// Internal to field_kernels_*.cpp: the kernels of field_kernels.hpp written once over an
// arithmetic policy `F` (a product accumulated without reduction, then reduced once), compiled
// per instruction set. Internal linkage only, as in evaluator_kernels.hpp, so no PCLMULQDQ code
// can be picked by the linker for a CPU without it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/secret.hpp"
#include "protocol/rss3/field_kernels.hpp"
#include "protocol/rss3/grid_walk.hpp"
#include "protocol/rss3/transpose.hpp"

namespace mpc::rss3::detail {
namespace {

inline Gf128 select(Gf128 v, std::uint64_t bit) {
  const std::uint64_t mask = 0 - bit;
  return {v.lo & mask, v.hi & mask};
}

template <class F>
struct KernelSet {
  static Gf128 mul(Gf128 a, Gf128 b) { return F::reduce(F::product(F::load(a), F::load(b))); }

  static void window_sums(const std::uint64_t* words, std::size_t windows, std::size_t stride,
                          const std::uint64_t* weight, Gf128* out) {
    constexpr std::size_t kChunk = 32;  // accumulators held at once
    for (std::size_t l0 = 0; l0 < stride; l0 += kChunk) {
      const std::size_t count = stride - l0 < kChunk ? stride - l0 : kChunk;
      typename F::Wide acc[kChunk];
      for (std::size_t l = 0; l < count; ++l) acc[l] = F::zero();
      for (std::size_t c = 0; c < windows; ++c) {
        const std::uint64_t* row = words + stride * c + l0;
        for (std::size_t l = 0; l < count; ++l) F::accumulate_words(acc[l], weight[c], row[l]);
      }
      for (std::size_t l = 0; l < count; ++l) out[l0 + l] = F::reduce(acc[l]);
    }
  }

  static void weight_lanes(Gf128* v, std::size_t windows, const std::uint64_t* weight) {
    for (std::size_t c = 0; c < windows; ++c) {
      Gf128 lane{weight[c], 0};  // weight[c] * x^j
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

  static void bind_points(const Gf128* v, std::size_t n, const Gf128* basis, Gf128* out) {
    const auto b0 = F::load(basis[0]), b1 = F::load(basis[1]), b2 = F::load(basis[2]);
    for (std::size_t m = 0; m < n; ++m) {
      typename F::Wide acc = F::zero();
      F::accumulate(acc, b0, F::load(v[3 * m]));
      F::accumulate(acc, b1, F::load(v[3 * m + 1]));
      F::accumulate(acc, b2, F::load(v[3 * m + 2]));
      out[m] = F::reduce(acc);
    }
  }

  // Four windows side by side in the lanes of a vector through the grid walk; each product
  // word is accumulated with its window's weight.
  static void grid_sums(const GridOperands& g, std::size_t windows, const std::uint64_t* weight, Gf128* grid) {
    const std::size_t points = power_of_three(g.variables), entries = std::size_t{1} << g.variables;
    std::vector<typename F::Wide> acc(points, F::zero());
    Words4 x[std::size_t{1} << kMaxGridVariables], y[std::size_t{1} << kMaxGridVariables];
    for (std::size_t c0 = 0; c0 < windows; c0 += 4) {
      const std::size_t count = windows - c0 < 4 ? windows - c0 : 4;
      load4(g.x, c0, count, x);
      load4(g.y, c0, count, y);
      std::uint64_t rho[4];
      for (std::size_t m = 0; m < 4; ++m) rho[m] = m < count ? weight[c0 + m] : 0;
      auto leaf = [&](std::size_t p, Words4 product) {
        for (std::size_t m = 0; m < 4; ++m) F::accumulate_words(acc[p], rho[m], product[m]);
      };
      grid_walk(g.variables, x, y, leaf);
    }
    for (std::size_t p = 0; p < points; ++p) grid[p] = grid[p] ^ F::reduce(acc[p]);
    wipe(acc.data(), acc.size() * sizeof(typename F::Wide));
    wipe(x, entries * sizeof(Words4));
    wipe(y, entries * sizeof(Words4));
  }

  // Entries of windows c0 .. c0 + count - 1 (count at most four) side by side; zero past count.
  static void load4(const WindowPlanes& planes, std::size_t c0, std::size_t count, Words4* out) {
    for (std::size_t s = 0; s < 2 * planes.half; ++s) {
      const std::uint64_t* plane = s < planes.half ? planes.first : planes.second;
      std::uint64_t lane[4] = {};
      for (std::size_t m = 0; m < count; ++m) lane[m] = plane[planes.half * (c0 + m) + s % planes.half];
      out[s] = Words4{lane[0], lane[1], lane[2], lane[3]};
    }
  }

  static FieldKernels table(const char* name) {
    return {&mul, &window_sums, &weight_lanes, &round_sums, &fold, &fold_and_sum, &bind_points, &grid_sums, name};
  }
};

}  // namespace
}  // namespace mpc::rss3::detail
