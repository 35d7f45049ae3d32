// The loops of the AND check (and_check.hpp) over vectors of GF(2^128) elements, built twice:
// with PCLMULQDQ where the CPU has it, and portable. Every kernel is constant time in the
// values (shares of secrets pass through them); lengths are public.
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/rss3/bit_combination.hpp"
#include "protocol/rss3/gf128.hpp"

namespace mpc::rss3::detail {

// The prover's two operand functions in the AND check's bit rounds, read window by window:
// 2 half = 2^variables entries each, variable b being bit b of the entry index (so the highest
// picks the plane).
struct GridOperands {
  WindowPlanes x, y;
  unsigned variables = 0;  // 1 to kMaxGridVariables
};
inline constexpr unsigned kMaxGridVariables = 7;

// A window's weight (`weight[c]` below) is an element of degree < 64, given by its 64
// coefficients: its product with a word read as such an element needs no reduction.
struct FieldKernels {
  Gf128 (*mul)(Gf128 a, Gf128 b);
  // A 64-bit word read as the element of degree < 64 whose coefficient of x^j is bit j, times a
  // weight: out[l] = sum over c < windows of weight[c] * words[stride * c + l], for l < stride.
  void (*window_sums)(const std::uint64_t* words, std::size_t windows, std::size_t stride, const std::uint64_t* weight,
                      Gf128* out);
  // v[64 c + j] = weight[c] * x^j * v[64 c + j] for c < windows, j < 64.
  void (*weight_lanes)(Gf128* v, std::size_t windows, const std::uint64_t* weight);
  // With h = ceil(len / 2) and entries at len and beyond read as zero:
  // c0 = sum_{i<h} a[i] b[i], c2 = sum_{i<h} (a[i] + a[i+h]) (b[i] + b[i+h]).
  void (*round_sums)(const Gf128* a, const Gf128* b, std::size_t len, Gf128* c0, Gf128* c2);
  // v[i] = v[i] + t (v[i] + v[i+h]) for i < h = ceil(len / 2), entries at len and beyond zero.
  void (*fold)(Gf128* v, std::size_t len, Gf128 t);
  // fold(a, len, t), fold(b, len, t), then round_sums(a, b, ceil(len / 2), c0, c2); one pass.
  void (*fold_and_sum)(Gf128* a, Gf128* b, std::size_t len, Gf128 t, Gf128* c0, Gf128* c2);
  // out[m] = basis[0] v[3 m] + basis[1] v[3 m + 1] + basis[2] v[3 m + 2] for m < n: one variable of
  // the grid bound (out may be v).
  void (*bind_points)(const Gf128* v, std::size_t n, const Gf128* basis, Gf128* out);
  // grid[p] += sum over windows c < windows and lanes j of weight[c] x^j (X_c(p) & Y_c(p))_j for
  // every point p of {0, 1, inf}^variables, p = sum of d_b 3^b with digit 2 for inf (the XOR of
  // the values at 0 and 1: on these points X, Y and their product stay bits).
  void (*grid_sums)(const GridOperands& operands, std::size_t windows, const std::uint64_t* weight, Gf128* grid);
  const char* name;
};

const FieldKernels& portable_field_kernels();
// Null when PCLMULQDQ is not built in or this CPU lacks it.
const FieldKernels* pclmul_field_kernels();
// Four elements per instruction with AVX-512 VPCLMULQDQ; null when not built in or this CPU lacks it.
const FieldKernels* vpclmul_field_kernels();
// Two elements per instruction with VPCLMULQDQ on AVX2; null when not built in or this CPU lacks it.
const FieldKernels* vpclmul_ymm_field_kernels();
// The fastest this CPU runs.
const FieldKernels& field_kernels();

}  // namespace mpc::rss3::detail
