// AES-256-GCM with VAES and VPCLMULQDQ (gcm_vaes.hpp). Built with those instructions on x86-64;
// called only where gcm_vaes_supported() (kernel_support.cpp) says the CPU has them. Constant
// time: AES and GHASH run on AES-NI and carry-less multiply, and no branch or memory address
// depends on the key, the data or the tag.
#include "transport/gcm_vaes.hpp"

#if defined(__VAES__) && defined(__AES__) && defined(__VPCLMULQDQ__) && defined(__AVX512F__) && \
    defined(__AVX512BW__) && defined(__AVX512VL__)

#include <immintrin.h>

#include <cstring>

namespace mpc::transport::detail {
namespace {

constexpr std::size_t kBlock = 16;
constexpr std::size_t kRounds = 14;

// Zeroes key material and hash state left on the stack; the barrier keeps the stores. (This
// file calls nothing outside it that could be built for other CPUs: see gcm_vaes.hpp.)
void clear(void* data, std::size_t size) {
  std::memset(data, 0, size);
  __asm__ __volatile__("" : : "r"(data) : "memory");
}

// One step of the AES-256 key schedule (FIPS-197, 5.2): the previous key word XORed across
// the four words of `previous`, then with `assist`'s broadcast word.
__m128i schedule_step(__m128i previous, __m128i assist) {
  previous = _mm_xor_si128(previous, _mm_slli_si128(previous, 4));
  previous = _mm_xor_si128(previous, _mm_slli_si128(previous, 4));
  previous = _mm_xor_si128(previous, _mm_slli_si128(previous, 4));
  return _mm_xor_si128(previous, assist);
}

template <int Rcon>
void schedule_pair(__m128i& even, __m128i& odd, __m128i* out) {
  even = schedule_step(even, _mm_shuffle_epi32(_mm_aeskeygenassist_si128(odd, Rcon), 0xff));
  out[0] = even;
  odd = schedule_step(odd, _mm_shuffle_epi32(_mm_aeskeygenassist_si128(even, 0), 0xaa));
  out[1] = odd;
}

void expand_key(const std::uint8_t key[32], __m128i round_keys[kRounds + 1]) {
  __m128i even = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key));
  __m128i odd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key + 16));
  round_keys[0] = even;
  round_keys[1] = odd;
  schedule_pair<0x01>(even, odd, round_keys + 2);
  schedule_pair<0x02>(even, odd, round_keys + 4);
  schedule_pair<0x04>(even, odd, round_keys + 6);
  schedule_pair<0x08>(even, odd, round_keys + 8);
  schedule_pair<0x10>(even, odd, round_keys + 10);
  schedule_pair<0x20>(even, odd, round_keys + 12);
  round_keys[14] = schedule_step(even, _mm_shuffle_epi32(_mm_aeskeygenassist_si128(odd, 0x40), 0xff));
}

__m128i encrypt_block(const GcmVaesKey& key, __m128i block) {
  const auto* round_keys = reinterpret_cast<const __m128i*>(key.round_keys);
  block = _mm_xor_si128(block, _mm_load_si128(round_keys));
  for (std::size_t r = 1; r < kRounds; ++r) block = _mm_aesenc_si128(block, _mm_load_si128(round_keys + r));
  return _mm_aesenclast_si128(block, _mm_load_si128(round_keys + kRounds));
}

__m128i counter_block(const std::uint8_t nonce[12], std::uint32_t counter) {
  alignas(16) std::uint8_t block[kBlock];
  std::memcpy(block, nonce, 12);
  for (int i = 0; i < 4; ++i) block[12 + i] = static_cast<std::uint8_t>(counter >> (24 - 8 * i));
  return _mm_load_si128(reinterpret_cast<const __m128i*>(block));
}

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

void compute_tag(const GcmVaesKey& key, const std::uint8_t nonce[12], const std::uint8_t* aad, std::size_t aad_bytes,
                 const std::uint8_t* ciphertext, std::size_t bytes, std::uint8_t tag[16]) {
  std::uint8_t sum[kBlock] = {};
  ghash_vpclmul_absorb(key.powers, sum, aad, aad_bytes);
  ghash_vpclmul_absorb(key.powers, sum, ciphertext, bytes);
  std::uint8_t lengths[kBlock];
  const std::uint64_t aad_bits = static_cast<std::uint64_t>(aad_bytes) * 8;
  const std::uint64_t text_bits = static_cast<std::uint64_t>(bytes) * 8;
  for (int i = 0; i < 8; ++i) {
    lengths[i] = static_cast<std::uint8_t>(aad_bits >> (56 - 8 * i));
    lengths[8 + i] = static_cast<std::uint8_t>(text_bits >> (56 - 8 * i));
  }
  ghash_vpclmul_absorb(key.powers, sum, lengths, kBlock);
  ghash_vpclmul_value(sum, tag);
  clear(sum, sizeof sum);
  const __m128i mask = encrypt_block(key, counter_block(nonce, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(tag),
                   _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tag)), mask));
}

}  // namespace

void gcm_vaes_set_key(const std::uint8_t key[32], GcmVaesKey& out) {
  __m128i round_keys[kRounds + 1];
  expand_key(key, round_keys);
  for (std::size_t r = 0; r <= kRounds; ++r)
    _mm_store_si128(reinterpret_cast<__m128i*>(out.round_keys) + r, round_keys[r]);
  alignas(16) std::uint8_t h[kBlock];
  _mm_store_si128(reinterpret_cast<__m128i*>(h), encrypt_block(out, _mm_setzero_si128()));
  ghash_vpclmul_powers(h, out.powers);
  clear(h, sizeof h);
  clear(round_keys, sizeof round_keys);
}

void gcm_vaes_encrypt(const GcmVaesKey& key, const std::uint8_t nonce[12], std::size_t offset, const std::uint8_t* in,
                      std::uint8_t* out, std::size_t bytes) {
  ctr_xor(key, nonce, offset, in, out, bytes);
}

void gcm_vaes_tag(const GcmVaesKey& key, const std::uint8_t nonce[12], const std::uint8_t* aad, std::size_t aad_bytes,
                  const std::uint8_t* ciphertext, std::size_t bytes, std::uint8_t tag[16]) {
  compute_tag(key, nonce, aad, aad_bytes, ciphertext, bytes, tag);
}

bool gcm_vaes_open(const GcmVaesKey& key, const std::uint8_t nonce[12], const std::uint8_t* aad, std::size_t aad_bytes,
                   std::uint8_t* text, std::size_t bytes, const std::uint8_t tag[16]) {
  std::uint8_t expected[kBlock];
  compute_tag(key, nonce, aad, aad_bytes, text, bytes, expected);
  const __m128i difference = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(expected)),
                                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(tag)));
  clear(expected, sizeof expected);
  if (_mm_testz_si128(difference, difference) == 0) return false;
  ctr_xor(key, nonce, 0, text, text, bytes);
  return true;
}

}  // namespace mpc::transport::detail

#else

// Not reached: gcm_vaes_supported() is false where this file is built without the instructions.
namespace mpc::transport::detail {
void gcm_vaes_set_key(const std::uint8_t[32], GcmVaesKey&) {}
void gcm_vaes_encrypt(const GcmVaesKey&, const std::uint8_t[12], std::size_t, const std::uint8_t*, std::uint8_t*,
                      std::size_t) {}
void gcm_vaes_tag(const GcmVaesKey&, const std::uint8_t[12], const std::uint8_t*, std::size_t, const std::uint8_t*,
                  std::size_t, std::uint8_t[16]) {}
bool gcm_vaes_open(const GcmVaesKey&, const std::uint8_t[12], const std::uint8_t*, std::size_t, std::uint8_t*,
                   std::size_t, const std::uint8_t[16]) {
  return false;
}
}  // namespace mpc::transport::detail

#endif
