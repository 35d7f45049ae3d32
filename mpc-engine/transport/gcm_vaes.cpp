// AES-256-GCM with VAES and VPCLMULQDQ on 512-bit registers (gcm_vaes.hpp). Built with those
// instructions on x86-64; called only where gcm_vaes_kernels(512) (kernel_support.cpp) says the
// CPU has them. Constant time: AES and GHASH run on AES-NI and carry-less multiply, and no
// branch or memory address depends on the key, the data or the tag.
#include "transport/gcm_vaes.hpp"

#if defined(__VAES__) && defined(__AES__) && defined(__VPCLMULQDQ__) && defined(__AVX512F__) && \
    defined(__AVX512BW__) && defined(__AVX512VL__)

#include <immintrin.h>

#include <cstring>

#include "transport/gcm_kernels.hpp"

namespace mpc::transport::detail {
namespace {

// Counter lanes hold the nonce's three words and the counter as a native integer; this puts
// the counter's bytes in GCM's big-endian order.
__m512i counter_bytes(__m512i lanes) {
  const __m512i order =
      _mm512_broadcast_i32x4(_mm_set_epi8(12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
  return _mm512_shuffle_epi8(lanes, order);
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
  __m512i round_keys[kRounds + 1];
  for (std::size_t r = 0; r <= kRounds; ++r)
    round_keys[r] = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(key.round_keys) + r));
  std::int32_t words[3];
  std::memcpy(words, nonce, sizeof words);
  const auto c = static_cast<std::int32_t>(first);
  __m512i lanes = _mm512_set_epi32(c + 3, words[2], words[1], words[0], c + 2, words[2], words[1], words[0], c + 1,
                                   words[2], words[1], words[0], c, words[2], words[1], words[0]);
  const __m512i four = _mm512_set_epi32(4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0);
  for (; bytes >= 256; bytes -= 256, in += 256, out += 256) {
    __m512i x[4];
    for (int g = 0; g < 4; ++g) {
      x[g] = _mm512_xor_si512(counter_bytes(lanes), round_keys[0]);
      lanes = _mm512_add_epi32(lanes, four);
    }
    for (std::size_t r = 1; r < kRounds; ++r)
      for (int g = 0; g < 4; ++g) x[g] = _mm512_aesenc_epi128(x[g], round_keys[r]);
    for (int g = 0; g < 4; ++g) {
      x[g] = _mm512_aesenclast_epi128(x[g], round_keys[kRounds]);
      _mm512_storeu_si512(out + 64 * g, _mm512_xor_si512(x[g], _mm512_loadu_si512(in + 64 * g)));
    }
  }
  for (; bytes != 0;) {
    const std::size_t take = bytes < 64 ? bytes : 64;
    const __mmask64 mask = take == 64 ? ~__mmask64{0} : (__mmask64{1} << take) - 1;
    __m512i x = _mm512_xor_si512(counter_bytes(lanes), round_keys[0]);
    lanes = _mm512_add_epi32(lanes, four);
    for (std::size_t r = 1; r < kRounds; ++r) x = _mm512_aesenc_epi128(x, round_keys[r]);
    x = _mm512_aesenclast_epi128(x, round_keys[kRounds]);
    _mm512_mask_storeu_epi8(out, mask, _mm512_xor_si512(x, _mm512_maskz_loadu_epi8(mask, in)));
    bytes -= take;
    in += take;
    out += take;
  }
  clear(round_keys, sizeof round_keys);
}

void set_key512(const std::uint8_t key[32], GcmVaesKey& out) { gcm_set_key(kGhashVpclmul512, key, out); }

void encrypt512(const GcmVaesKey& key, const std::uint8_t nonce[12], std::size_t offset, const std::uint8_t* in,
                std::uint8_t* out, std::size_t bytes) {
  ctr_xor(key, nonce, offset, in, out, bytes);
}

void tag512(const GcmVaesKey& key, const std::uint8_t nonce[12], const std::uint8_t* aad, std::size_t aad_bytes,
            const std::uint8_t* ciphertext, std::size_t bytes, std::uint8_t tag[16]) {
  gcm_tag(kGhashVpclmul512, key, nonce, aad, aad_bytes, ciphertext, bytes, tag);
}

bool open512(const GcmVaesKey& key, const std::uint8_t nonce[12], const std::uint8_t* aad, std::size_t aad_bytes,
             std::uint8_t* text, std::size_t bytes, const std::uint8_t tag[16]) {
  return gcm_open(kGhashVpclmul512, &ctr_xor, key, nonce, aad, aad_bytes, text, bytes, tag);
}

}  // namespace

const GcmVaesKernels kGcmVaes512 = {&set_key512, &encrypt512, &tag512, &open512};

}  // namespace mpc::transport::detail

#else

// Not reached: gcm_vaes_kernels(512) is null where this file is built without the instructions.
namespace mpc::transport::detail {
const GcmVaesKernels kGcmVaes512 = {nullptr, nullptr, nullptr, nullptr};
}  // namespace mpc::transport::detail

#endif
