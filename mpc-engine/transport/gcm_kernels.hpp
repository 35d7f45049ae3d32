// Internal to gcm_vaes.cpp and gcm_vaes_ymm.cpp: what AES-256-GCM's kernels do one block at a
// time (the key, the tag, the checked opening), written once for both widths; each file brings
// its counter-mode loop and names the GHASH kernels of its width. Each includer is built with
// its own ISA flags, so everything here has internal linkage: no copy built for AVX-512 can be
// picked by the linker for a CPU without it.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/aesni_key_expansion.hpp"
#include "transport/gcm_vaes.hpp"

namespace mpc::transport::detail {
namespace {

constexpr std::size_t kBlock = 16;
constexpr std::size_t kRounds = 14;

// Zeroes key material and hash state left on the stack; the barrier keeps the stores.
inline void clear(void* data, std::size_t size) {
  std::memset(data, 0, size);
  __asm__ __volatile__("" : : "r"(data) : "memory");
}

inline __m128i encrypt_block(const GcmVaesKey& key, __m128i block) {
  const auto* round_keys = reinterpret_cast<const __m128i*>(key.round_keys);
  block = _mm_xor_si128(block, _mm_load_si128(round_keys));
  for (std::size_t r = 1; r < kRounds; ++r) block = _mm_aesenc_si128(block, _mm_load_si128(round_keys + r));
  return _mm_aesenclast_si128(block, _mm_load_si128(round_keys + kRounds));
}

inline __m128i counter_block(const std::uint8_t nonce[12], std::uint32_t counter) {
  alignas(16) std::uint8_t block[kBlock];
  std::memcpy(block, nonce, 12);
  for (int i = 0; i < 4; ++i) block[12 + i] = static_cast<std::uint8_t>(counter >> (24 - 8 * i));
  return _mm_load_si128(reinterpret_cast<const __m128i*>(block));
}

inline void gcm_set_key(const GhashKernels& ghash, const std::uint8_t key[32], GcmVaesKey& out) {
  __m128i round_keys[kRounds + 1];
  aesni::expand_key_256(key, round_keys);
  for (std::size_t r = 0; r <= kRounds; ++r)
    _mm_store_si128(reinterpret_cast<__m128i*>(out.round_keys) + r, round_keys[r]);
  alignas(16) std::uint8_t h[kBlock];
  _mm_store_si128(reinterpret_cast<__m128i*>(h), encrypt_block(out, _mm_setzero_si128()));
  ghash.powers(h, out.powers);
  clear(h, sizeof h);
  clear(round_keys, sizeof round_keys);
}

inline void gcm_tag(const GhashKernels& ghash, const GcmVaesKey& key, const std::uint8_t nonce[12],
                    const std::uint8_t* aad, std::size_t aad_bytes, const std::uint8_t* ciphertext, std::size_t bytes,
                    std::uint8_t tag[16]) {
  std::uint8_t sum[kBlock] = {};
  ghash.absorb(key.powers, sum, aad, aad_bytes);
  ghash.absorb(key.powers, sum, ciphertext, bytes);
  std::uint8_t lengths[kBlock];
  const std::uint64_t aad_bits = static_cast<std::uint64_t>(aad_bytes) * 8;
  const std::uint64_t text_bits = static_cast<std::uint64_t>(bytes) * 8;
  for (int i = 0; i < 8; ++i) {
    lengths[i] = static_cast<std::uint8_t>(aad_bits >> (56 - 8 * i));
    lengths[8 + i] = static_cast<std::uint8_t>(text_bits >> (56 - 8 * i));
  }
  ghash.absorb(key.powers, sum, lengths, kBlock);
  ghash.value(sum, tag);
  clear(sum, sizeof sum);
  const __m128i mask = encrypt_block(key, counter_block(nonce, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(tag),
                   _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tag)), mask));
}

// Decrypts with `ctr_xor` (the width's counter mode, as gcm_vaes_encrypt) only if the tag is
// right; the tags are compared in constant time.
template <class CtrXor>
inline bool gcm_open(const GhashKernels& ghash, CtrXor ctr_xor, const GcmVaesKey& key, const std::uint8_t nonce[12],
                     const std::uint8_t* aad, std::size_t aad_bytes, std::uint8_t* text, std::size_t bytes,
                     const std::uint8_t tag[16]) {
  std::uint8_t expected[kBlock];
  gcm_tag(ghash, key, nonce, aad, aad_bytes, text, bytes, expected);
  const __m128i difference = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(expected)),
                                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(tag)));
  clear(expected, sizeof expected);
  if (_mm_testz_si128(difference, difference) == 0) return false;
  ctr_xor(key, nonce, 0, text, text, bytes);
  return true;
}

}  // namespace
}  // namespace mpc::transport::detail
