// Internal to prf_vaes.cpp and prf_vaes_ymm.cpp: AES-128-CTR with VAES written once over a
// register width, each of those files compiled with its own ISA flags and a width of its own
// (Ops below). Everything here has internal linkage, so no copy built with AVX-512 flags can be
// picked by the linker for code that runs on a CPU without them (as evaluator_kernels.hpp).
//
// Ops: V (the register), kBlocks (AES blocks per register), round_key(bytes) (a round key in
// every lane), add_lanes(V) (lane j's low dword + j), advance(V) (every lane's low dword +
// kBlocks), reverse(V) (each lane's bytes reversed), xor_(V, V), aesenc(V, V), aesenclast(V, V),
// store(out, V) (kBlocks blocks), store_first(out, left, V) (the first left < kBlocks blocks).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "common/aesni_key_expansion.hpp"
#include "protocol/rss3/prf_vaes.hpp"

namespace mpc::rss3::detail {
namespace {

inline void expand_key_aesni(const std::uint8_t key[16], AesRoundKeys& round_keys) {
  __m128i k[11];
  aesni::expand_key_128(key, k);
  for (int r = 0; r < 11; ++r) _mm_store_si128(reinterpret_cast<__m128i*>(round_keys.bytes + 16 * r), k[r]);
  for (int r = 0; r < 11; ++r) k[r] = _mm_setzero_si128();
  __asm__ __volatile__("" : : "r"(k) : "memory");
}

template <class Ops>
struct VaesCtr {
  using V = typename Ops::V;

  struct Schedule {
    V k[11];
    explicit Schedule(const AesRoundKeys& round_keys) {
      for (int r = 0; r < 11; ++r) k[r] = Ops::round_key(round_keys.bytes + 16 * r);
    }
    // Expanded keys live in registers and on this stack frame: cleared when it goes.
    ~Schedule() {
      for (auto& key : k) key = V{};
      __asm__ __volatile__("" : : "r"(k) : "memory");
    }
  };

  // Counter blocks kept byte-reversed: the big-endian 32-bit counter is the low dword of each
  // lane and advances with a 32-bit add (no carry: the caller keeps counter + blocks <= 2^32);
  // reverse() turns them back before encryption.
  struct Counters {
    Counters(const std::uint8_t prefix[12], std::uint32_t counter) {
      alignas(16) std::uint8_t reversed[16];
      for (int i = 0; i < 12; ++i) reversed[15 - i] = prefix[i];
      for (int i = 0; i < 4; ++i) reversed[3 - i] = static_cast<std::uint8_t>(counter >> (24 - 8 * i));
      next = Ops::add_lanes(Ops::round_key(reversed));
    }
    V take() {
      const V out = Ops::reverse(next);
      next = Ops::advance(next);
      return out;
    }
    V next;
  };

  static V encrypt(V x, const Schedule& s) {
    x = Ops::xor_(x, s.k[0]);
    for (int r = 1; r < 10; ++r) x = Ops::aesenc(x, s.k[r]);
    return Ops::aesenclast(x, s.k[10]);
  }

  // Four registers through every round: 4 * kBlocks AES chains in flight, enough to cover the
  // instruction's latency.
  static void encrypt4(V (&x)[4], const Schedule& s) {
    for (auto& v : x) v = Ops::xor_(v, s.k[0]);
    for (int r = 1; r < 10; ++r)
      for (auto& v : x) v = Ops::aesenc(v, s.k[r]);
    for (auto& v : x) v = Ops::aesenclast(v, s.k[10]);
  }

  static void store_some(std::uint8_t* out, std::size_t left, V v) {
    if (left >= Ops::kBlocks) Ops::store(out, v);
    else Ops::store_first(out, left, v);
  }

  static void xor2(const AesRoundKeys& own, const AesRoundKeys& previous, const std::uint8_t prefix[12],
                   std::uint32_t counter, std::uint8_t* out, std::size_t blocks) {
    const Schedule a(own), b(previous);
    Counters counters(prefix, counter);
    constexpr std::size_t kStep = 4 * Ops::kBlocks;
    std::size_t done = 0;
    for (; done + kStep <= blocks; done += kStep) {
      V c[4] = {counters.take(), counters.take(), counters.take(), counters.take()};
      V d[4] = {c[0], c[1], c[2], c[3]};
      encrypt4(c, a);
      encrypt4(d, b);
      for (int i = 0; i < 4; ++i) Ops::store(out + (done + i * Ops::kBlocks) * 16, Ops::xor_(c[i], d[i]));
    }
    for (; done < blocks; done += Ops::kBlocks) {
      const V c = counters.take();
      store_some(out + done * 16, blocks - done, Ops::xor_(encrypt(c, a), encrypt(c, b)));
    }
  }

  static void one(const AesRoundKeys& key, const std::uint8_t prefix[12], std::uint32_t counter, std::uint8_t* out,
                  std::size_t blocks) {
    const Schedule a(key);
    Counters counters(prefix, counter);
    constexpr std::size_t kStep = 4 * Ops::kBlocks;
    std::size_t done = 0;
    for (; done + kStep <= blocks; done += kStep) {
      V c[4] = {counters.take(), counters.take(), counters.take(), counters.take()};
      encrypt4(c, a);
      for (int i = 0; i < 4; ++i) Ops::store(out + (done + i * Ops::kBlocks) * 16, c[i]);
    }
    for (; done < blocks; done += Ops::kBlocks) store_some(out + done * 16, blocks - done, encrypt(counters.take(), a));
  }
};

}  // namespace
}  // namespace mpc::rss3::detail
