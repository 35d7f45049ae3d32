// Internal to field_kernels_*.cpp: the walk over the grid {0, 1, inf}^M of the AND check's bit
// rounds (and_check.hpp), for any vector of words V (one window per element) that has ^ and &.
// Internal linkage only, as field_kernels_impl.hpp, so that each instruction set's copy stays
// with the kernels built for it.
#pragma once

#include <cstddef>

namespace mpc::rss3::detail {
namespace {

constexpr std::size_t power_of_three(unsigned m) { return m == 0 ? 1 : 3 * power_of_three(m - 1); }

// The lowest levels of the walk are inlined into one body: 27 points without a call.
constexpr unsigned kInlinedLevels = 3;

template <class V, unsigned M, class Leaf>
void grid_walk(const V* x, const V* y, std::size_t point, Leaf& leaf);

// x and y hold two functions on {0, 1}^M (entry s: variable b is bit b of s). Calls
// leaf(p, X(p) & Y(p)) for every point p of {0, 1, inf}^M, p = point + sum of d_b 3^b (digit 2
// for inf: the XOR of the values at 0 and 1, on which X, Y and their product stay bits). Depth
// first from the highest variable, so that only one path's halves are held: 2^M vectors of
// each function on the stack at most, in the first level of cache.
template <class V, unsigned M, class Leaf>
[[gnu::always_inline]] inline void grid_step(const V* x, const V* y, std::size_t point, Leaf& leaf) {
  if constexpr (M == 0) {
    leaf(point, x[0] & y[0]);
  } else {
    constexpr std::size_t half = std::size_t{1} << (M - 1), step = power_of_three(M - 1);
    auto next = [&](const V* xn, const V* yn, std::size_t at) {
      if constexpr (M - 1 <= kInlinedLevels)
        grid_step<V, M - 1>(xn, yn, at, leaf);
      else
        grid_walk<V, M - 1>(xn, yn, at, leaf);
    };
    next(x, y, point);
    next(x + half, y + half, point + step);
    V xs[half], ys[half];
    for (std::size_t i = 0; i < half; ++i) {
      xs[i] = x[i] ^ x[i + half];
      ys[i] = y[i] ^ y[i + half];
    }
    next(xs, ys, point + 2 * step);
  }
}

template <class V, unsigned M, class Leaf>
void grid_walk(const V* x, const V* y, std::size_t point, Leaf& leaf) {
  grid_step<V, M>(x, y, point, leaf);
}

// grid_walk for a number of variables known only at run time (1 to 7).
template <class V, class Leaf>
inline void grid_walk(unsigned variables, const V* x, const V* y, Leaf& leaf) {
  switch (variables) {
    case 1: grid_walk<V, 1>(x, y, 0, leaf); break;
    case 2: grid_walk<V, 2>(x, y, 0, leaf); break;
    case 3: grid_walk<V, 3>(x, y, 0, leaf); break;
    case 4: grid_walk<V, 4>(x, y, 0, leaf); break;
    case 5: grid_walk<V, 5>(x, y, 0, leaf); break;
    case 6: grid_walk<V, 6>(x, y, 0, leaf); break;
    default: grid_walk<V, 7>(x, y, 0, leaf); break;
  }
}

}  // namespace
}  // namespace mpc::rss3::detail
