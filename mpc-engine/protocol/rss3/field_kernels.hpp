// The loops of the AND check (and_check.hpp) over vectors of GF(2^128) elements, built twice:
// with PCLMULQDQ where the CPU has it, and portable. Every kernel is constant time in the
// values (shares of secrets pass through them); lengths are public.
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/rss3/gf128.hpp"

namespace mpc::rss3::detail {

struct FieldKernels {
  Gf128 (*mul)(Gf128 a, Gf128 b);
  // sum over w < words and the set bits j of bits[w] of weight[w] * lane[j] (64 lanes).
  Gf128 (*weighted_bits)(const std::uint64_t* bits, std::size_t words, const Gf128* weight, const Gf128* lane);
  // out[64 w + j] = weight[w] * (bit j of low[w] * lane_low[j] + bit j of high[w] * lane_high[j])
  // for w < words, j < 64.
  void (*lift)(const std::uint64_t* low, const std::uint64_t* high, std::size_t words, const Gf128* weight,
               const Gf128* lane_low, const Gf128* lane_high, Gf128* out);
  // With h = ceil(len / 2) and entries at len and beyond read as zero:
  // c0 = sum_{i<h} a[i] b[i], c2 = sum_{i<h} (a[i] + a[i+h]) (b[i] + b[i+h]).
  void (*round_sums)(const Gf128* a, const Gf128* b, std::size_t len, Gf128* c0, Gf128* c2);
  // v[i] = v[i] + t (v[i] + v[i+h]) for i < h = ceil(len / 2), entries at len and beyond zero.
  void (*fold)(Gf128* v, std::size_t len, Gf128 t);
  const char* name;
};

const FieldKernels& portable_field_kernels();
// Null when PCLMULQDQ is not built in; call only on a CPU that has it.
const FieldKernels* pclmul_field_kernels();
// The fastest this CPU runs.
const FieldKernels& field_kernels();

}  // namespace mpc::rss3::detail
