// AES-256-GCM with VAES and VPCLMULQDQ on 256-bit registers (gcm_vaes.hpp), for CPUs with them
// and AVX2 but no AVX-512: the bytes of gcm_vaes.cpp, two counter blocks per instruction and
// sixteen in flight. Built with those instructions on x86-64; called only where
// gcm_vaes_kernels(256) (kernel_support.cpp) says the CPU has them. Constant time: AES and
// GHASH run on AES-NI and carry-less multiply, and no branch or memory address depends on the
// key, the data or the tag.
#include "transport/gcm_vaes.hpp"

#if defined(__VAES__) && defined(__AES__) && defined(__VPCLMULQDQ__) && defined(__AVX2__)

#include <immintrin.h>

#include <cstring>

#include "transport/gcm_kernels.hpp"

namespace mpc::transport::detail {
namespace {

constexpr int kInFlight = 8;  // registers of two blocks each per step

// Counter lanes hold the nonce's three words and the counter as a native integer; this puts
// the counter's bytes in GCM's big-endian order.
__m256i counter_bytes(__m256i lanes) {
  const __m256i order =
      _mm256_broadcastsi128_si256(_mm_set_epi8(12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
  return _mm256_shuffle_epi8(lanes, order);
}

// out = in XOR the text's keystream from byte `offset` of the text on: counter blocks 2, 3, ...
// (inc32: modulo 2^32) cover text bytes 0-15, 16-31, ...
void ctr_xor(const GcmVaesKey& key, const std::uint8_t nonce[12], std::size_t offset, const std::uint8_t* in,
             std::uint8_t* out, std::size_t bytes) {
  auto first = static_cast<std::uint32_t>(2 + offset / kBlock);
  if (const std::size_t skip = offset % kBlock; skip != 0 && bytes != 0) {
    alignas(16) std::uint8_t stream[kBlock];
    _mm_store_si128(reinterpret_cast<__m128i*>(stream), encrypt_block(key, counter_block(nonce, first++)));
    const std::size_t take = bytes < kBlock - skip ? bytes : kBlock - skip;
    for (std::size_t i = 0; i < take; ++i) out[i] = static_cast<std::uint8_t>(in[i] ^ stream[skip + i]);
    clear(stream, sizeof stream);
    in += take;
    out += take;
    bytes -= take;
  }
  __m256i round_keys[kRounds + 1];
  for (std::size_t r = 0; r <= kRounds; ++r)
    round_keys[r] = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(key.round_keys) + r));
  std::int32_t words[3];
  std::memcpy(words, nonce, sizeof words);
  const auto c = static_cast<std::int32_t>(first);
  __m256i lanes = _mm256_set_epi32(c + 1, words[2], words[1], words[0], c, words[2], words[1], words[0]);
  const __m256i two = _mm256_set_epi32(2, 0, 0, 0, 2, 0, 0, 0);
  constexpr std::size_t kStep = 32 * kInFlight;
  for (; bytes >= kStep; bytes -= kStep, in += kStep, out += kStep) {
    __m256i x[kInFlight];
    for (int g = 0; g < kInFlight; ++g) {
      x[g] = _mm256_xor_si256(counter_bytes(lanes), round_keys[0]);
      lanes = _mm256_add_epi32(lanes, two);
    }
    for (std::size_t r = 1; r < kRounds; ++r)
      for (int g = 0; g < kInFlight; ++g) x[g] = _mm256_aesenc_epi128(x[g], round_keys[r]);
    for (int g = 0; g < kInFlight; ++g) {
      x[g] = _mm256_aesenclast_epi128(x[g], round_keys[kRounds]);
      const auto* source = reinterpret_cast<const __m256i*>(in + 32 * g);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * g), _mm256_xor_si256(x[g], _mm256_loadu_si256(source)));
    }
  }
  // The rest, two blocks at a time; a last part under 32 bytes through a copy on the stack.
  alignas(32) std::uint8_t part[32];
  for (; bytes != 0;) {
    const std::size_t take = bytes < 32 ? bytes : 32;
    __m256i x = _mm256_xor_si256(counter_bytes(lanes), round_keys[0]);
    lanes = _mm256_add_epi32(lanes, two);
    for (std::size_t r = 1; r < kRounds; ++r) x = _mm256_aesenc_epi128(x, round_keys[r]);
    x = _mm256_aesenclast_epi128(x, round_keys[kRounds]);
    std::memset(part, 0, sizeof part);
    std::memcpy(part, in, take);
    _mm256_store_si256(reinterpret_cast<__m256i*>(part),
                       _mm256_xor_si256(x, _mm256_load_si256(reinterpret_cast<const __m256i*>(part))));
    std::memcpy(out, part, take);
    bytes -= take;
    in += take;
    out += take;
  }
  clear(part, sizeof part);
  clear(round_keys, sizeof round_keys);
}

void set_key256(const std::uint8_t key[32], GcmVaesKey& out) { gcm_set_key(kGhashVpclmul256, key, out); }

void encrypt256(const GcmVaesKey& key, const std::uint8_t nonce[12], std::size_t offset, const std::uint8_t* in,
                std::uint8_t* out, std::size_t bytes) {
  ctr_xor(key, nonce, offset, in, out, bytes);
}

void tag256(const GcmVaesKey& key, const std::uint8_t nonce[12], const std::uint8_t* aad, std::size_t aad_bytes,
            const std::uint8_t* ciphertext, std::size_t bytes, std::uint8_t tag[16]) {
  gcm_tag(kGhashVpclmul256, key, nonce, aad, aad_bytes, ciphertext, bytes, tag);
}

bool open256(const GcmVaesKey& key, const std::uint8_t nonce[12], const std::uint8_t* aad, std::size_t aad_bytes,
             std::uint8_t* text, std::size_t bytes, const std::uint8_t tag[16]) {
  return gcm_open(kGhashVpclmul256, &ctr_xor, key, nonce, aad, aad_bytes, text, bytes, tag);
}

}  // namespace

const GcmVaesKernels kGcmVaes256 = {&set_key256, &encrypt256, &tag256, &open256};

}  // namespace mpc::transport::detail

#else

// Not reached: gcm_vaes_kernels(256) is null where this file is built without the instructions.
namespace mpc::transport::detail {
const GcmVaesKernels kGcmVaes256 = {nullptr, nullptr, nullptr, nullptr};
}  // namespace mpc::transport::detail

#endif
