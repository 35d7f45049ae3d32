// Internal to the CPU evaluator: the tile interpreter, written once over a GCC/Clang
// vector type and compiled per instruction set (evaluator_portable.cpp, _avx2.cpp,
// _avx512.cpp). Araki et al., CCS 2016 (eprint 2016/768): XOR/NOT/copy are local, the
// AND local phase is r = x0&x1 ^ a0&a1 ^ alpha, the finish phase (r ^ r_prev, r).
//
// Everything here has internal linkage (anonymous namespace) and uses no library
// templates, so the copies compiled with -mavx2 / -mavx512f cannot be picked by the
// linker for code that runs on a CPU without those extensions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "protocol/rss3/evaluator_plan.hpp"

namespace mpc::rss3::detail {
namespace {

// V: a vector of 64-bit lanes (vector_size attribute); W: words per component per slot.
template <class V, std::size_t W>
struct TileInterpreter {
  static constexpr std::size_t kLanes = sizeof(V) / sizeof(std::uint64_t);
  static_assert(W % kLanes == 0, "tile width must be a whole number of vectors");
  static_assert(32 % W == 0, "tile width must divide the chunk width");
  static constexpr std::size_t kVecs = W / kLanes;
  static constexpr std::size_t kSlotWords = 2 * W;

  __attribute__((always_inline)) static inline V load(const void* p) {
    V v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
  }
  __attribute__((always_inline)) static inline void store(void* p, V v) { __builtin_memcpy(p, &v, sizeof v); }
  __attribute__((always_inline)) static inline V* slot(std::uint64_t* state, std::uint32_t s) {
    return reinterpret_cast<V*>(state + static_cast<std::size_t>(s) * kSlotWords);
  }

  static void run(const TileArgs& t) {
    const std::uint32_t* pc = t.code;
    std::uint64_t* const st = t.state;
    for (;;) {
      const std::uint32_t header = *pc++;
      std::uint32_t n = header >> kOpBits;
      switch (header & kOpMask) {
        case kOpXor:
          for (; n != 0; --n, pc += 3) {
            V* o = slot(st, pc[0]);
            const V* p = slot(st, pc[1]);
            const V* q = slot(st, pc[2]);
            for (std::size_t i = 0; i < 2 * kVecs; ++i) o[i] = p[i] ^ q[i];
          }
          break;
        case kOpInv:
          for (; n != 0; --n, pc += 2) {
            V* o = slot(st, pc[0]);
            const V* p = slot(st, pc[1]);
            for (std::size_t i = 0; i < kVecs; ++i) o[i] = p[i];
            for (std::size_t i = kVecs; i < 2 * kVecs; ++i) o[i] = ~p[i];
          }
          break;
        case kOpCopy:
          for (; n != 0; --n, pc += 2) {
            V* o = slot(st, pc[0]);
            const V* p = slot(st, pc[1]);
            for (std::size_t i = 0; i < 2 * kVecs; ++i) o[i] = p[i];
          }
          break;
        case kOpConst0:
        case kOpConst1: {
          const V zero = V{};
          const V a = (header & kOpMask) == kOpConst1 ? ~zero : zero;
          for (; n != 0; --n, pc += 1) {
            V* o = slot(st, pc[0]);
            for (std::size_t i = 0; i < kVecs; ++i) o[i] = zero;
            for (std::size_t i = kVecs; i < 2 * kVecs; ++i) o[i] = a;
          }
          break;
        }
        case kOpLoad:
          for (; n != 0; --n, pc += 2) {
            V* o = slot(st, pc[0]);
            const std::uint64_t* sx = t.in_x + static_cast<std::size_t>(pc[1]) * t.in_stride;
            const std::uint64_t* sa = t.in_a + static_cast<std::size_t>(pc[1]) * t.in_stride;
            if (t.in_words == W) {
              for (std::size_t i = 0; i < kVecs; ++i) o[i] = load(sx + i * kLanes);
              for (std::size_t i = 0; i < kVecs; ++i) o[kVecs + i] = load(sa + i * kLanes);
            } else {
              std::uint64_t* ow = reinterpret_cast<std::uint64_t*>(o);
              for (std::size_t w = 0; w < W; ++w) {
                ow[w] = w < t.in_words ? sx[w] : 0;
                ow[W + w] = w < t.in_words ? sa[w] : 0;
              }
            }
          }
          break;
        case kOpAnd:
          if (t.record[0] != nullptr) {
            for (; n != 0; --n, pc += 3) {
              const std::size_t offset = static_cast<std::size_t>(pc[0]) * t.msg_stride;
              std::uint8_t* m = t.and_msg + offset;
              const V* p = slot(st, pc[1]);
              const V* q = slot(st, pc[2]);
              for (std::size_t i = 0; i < kVecs; ++i) {
                const std::size_t at = offset + i * sizeof(V);
                store(t.record[0] + at, p[i] ^ p[kVecs + i]);
                store(t.record[1] + at, p[kVecs + i]);
                store(t.record[2] + at, q[i] ^ q[kVecs + i]);
                store(t.record[3] + at, q[kVecs + i]);
                store(m + i * sizeof(V), load(m + i * sizeof(V)) ^ (p[i] & q[i]) ^ (p[kVecs + i] & q[kVecs + i]));
              }
            }
            break;
          }
          for (; n != 0; --n, pc += 3) {
            std::uint8_t* m = t.and_msg + static_cast<std::size_t>(pc[0]) * t.msg_stride;
            const V* p = slot(st, pc[1]);
            const V* q = slot(st, pc[2]);
            for (std::size_t i = 0; i < kVecs; ++i) {
              const V r = load(m + i * sizeof(V)) ^ (p[i] & q[i]) ^ (p[kVecs + i] & q[kVecs + i]);
              store(m + i * sizeof(V), r);
            }
          }
          break;
        case kOpFinish:
          for (; n != 0; --n, pc += 2) {
            V* o = slot(st, pc[0]);
            const std::size_t offset = static_cast<std::size_t>(pc[1]) * t.msg_stride;
            const std::uint8_t* mine = t.fin_out + offset;
            const std::uint8_t* theirs = t.fin_in + offset;
            for (std::size_t i = 0; i < kVecs; ++i) {
              const V r = load(mine + i * sizeof(V));
              o[i] = r ^ load(theirs + i * sizeof(V));
              o[kVecs + i] = r;
            }
          }
          break;
        case kOpOutput:
          for (; n != 0; --n, pc += 2) {
            const V* p = slot(st, pc[0]);
            std::uint64_t* dx = t.out_x + static_cast<std::size_t>(pc[1]) * t.out_stride;
            std::uint64_t* da = t.out_a + static_cast<std::size_t>(pc[1]) * t.out_stride;
            if (t.out_words == W) {
              for (std::size_t i = 0; i < kVecs; ++i) store(dx + i * kLanes, p[i]);
              for (std::size_t i = 0; i < kVecs; ++i) store(da + i * kLanes, p[kVecs + i]);
            } else {
              const std::uint64_t* pw = reinterpret_cast<const std::uint64_t*>(p);
              for (std::size_t w = 0; w < t.out_words; ++w) {
                dx[w] = pw[w];
                da[w] = pw[W + w];
              }
            }
          }
          break;
        default:  // kOpEnd
          return;
      }
    }
  }
};

}  // namespace
}  // namespace mpc::rss3::detail
