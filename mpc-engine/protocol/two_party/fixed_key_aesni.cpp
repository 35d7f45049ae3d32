#include "protocol/two_party/fixed_key_aesni.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <wmmintrin.h>

#include "common/aesni_key_expansion.hpp"
#endif

#include "common/error.hpp"

namespace mpc::two_party::detail {

#if defined(__x86_64__)

bool aesni_supported() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  return (ecx & bit_AES) != 0 && (ecx & bit_SSE4_1) != 0;
}

namespace {

struct Keys {
  __m128i k[11];
  explicit Keys(const FixedRoundKeys& round_keys) {
    for (int r = 0; r < 11; ++r) k[r] = _mm_load_si128(reinterpret_cast<const __m128i*>(round_keys.bytes + 16 * r));
  }
};

// Eight independent blocks through the ten rounds at once: AES-NI's latency is hidden by the
// other seven.
inline void encrypt8(const Keys& keys, __m128i* b) {
  for (int j = 0; j < 8; ++j) b[j] = _mm_xor_si128(b[j], keys.k[0]);
  for (int r = 1; r < 10; ++r)
    for (int j = 0; j < 8; ++j) b[j] = _mm_aesenc_si128(b[j], keys.k[r]);
  for (int j = 0; j < 8; ++j) b[j] = _mm_aesenclast_si128(b[j], keys.k[10]);
}

inline __m128i encrypt1(const Keys& keys, __m128i b) {
  b = _mm_xor_si128(b, keys.k[0]);
  for (int r = 1; r < 10; ++r) b = _mm_aesenc_si128(b, keys.k[r]);
  return _mm_aesenclast_si128(b, keys.k[10]);
}

// sigma(x_L || x_R) = (x_L ^ x_R) || x_L with x_L the high half: (lo, hi) -> (hi, lo ^ hi).
inline __m128i sigma(__m128i x) {
  const __m128i swapped = _mm_shuffle_epi32(x, 0x4e);                // (hi, lo)
  const __m128i high_only = _mm_unpackhi_epi64(_mm_setzero_si128(), x);  // (0, hi)
  return _mm_xor_si128(swapped, high_only);                          // (hi, lo ^ hi)
}

}  // namespace

void aesni_expand_key(const std::uint8_t key[16], FixedRoundKeys& round_keys) {
  __m128i k[11];
  aesni::expand_key_128(key, k);
  for (int r = 0; r < 11; ++r) _mm_store_si128(reinterpret_cast<__m128i*>(round_keys.bytes + 16 * r), k[r]);
}

void aesni_encrypt_in_place(const FixedRoundKeys& round_keys, Block* blocks, std::size_t n) {
  const Keys keys(round_keys);
  auto* p = reinterpret_cast<__m128i*>(blocks);
  std::size_t e = 0;
  for (; e + 8 <= n; e += 8) {
    __m128i b[8];
    for (int j = 0; j < 8; ++j) b[j] = _mm_load_si128(p + e + j);
    encrypt8(keys, b);
    for (int j = 0; j < 8; ++j) _mm_store_si128(p + e + j, b[j]);
  }
  for (; e < n; ++e) _mm_store_si128(p + e, encrypt1(keys, _mm_load_si128(p + e)));
}

void aesni_tccr(const FixedRoundKeys& round_keys, const Block* in, Block* out, std::size_t n,
                std::uint64_t tweak_high, std::uint64_t first_tweak, std::uint64_t tweak_step) {
  const Keys keys(round_keys);
  const auto* src = reinterpret_cast<const __m128i*>(in);
  auto* dst = reinterpret_cast<__m128i*>(out);
  std::size_t e = 0;
  std::uint64_t tweak = first_tweak;
  for (; e + 8 <= n; e += 8) {
    __m128i s[8];
    __m128i b[8];
    for (int j = 0; j < 8; ++j) {
      s[j] = sigma(_mm_load_si128(src + e + j));
      b[j] = _mm_xor_si128(s[j], _mm_set_epi64x(static_cast<long long>(tweak_high), static_cast<long long>(tweak)));
      tweak += tweak_step;
    }
    encrypt8(keys, b);
    for (int j = 0; j < 8; ++j) _mm_store_si128(dst + e + j, _mm_xor_si128(b[j], s[j]));
  }
  for (; e < n; ++e) {
    const __m128i s = sigma(_mm_load_si128(src + e));
    const __m128i b = _mm_xor_si128(s, _mm_set_epi64x(static_cast<long long>(tweak_high), static_cast<long long>(tweak)));
    tweak += tweak_step;
    _mm_store_si128(dst + e, _mm_xor_si128(encrypt1(keys, b), s));
  }
}

#else

bool aesni_supported() { return false; }
void aesni_expand_key(const std::uint8_t*, FixedRoundKeys&) { throw Error(Component::Protocol, "no AES-NI"); }
void aesni_encrypt_in_place(const FixedRoundKeys&, Block*, std::size_t) { throw Error(Component::Protocol, "no AES-NI"); }
void aesni_tccr(const FixedRoundKeys&, const Block*, Block*, std::size_t, std::uint64_t, std::uint64_t, std::uint64_t) {
  throw Error(Component::Protocol, "no AES-NI");
}

#endif

}  // namespace mpc::two_party::detail
