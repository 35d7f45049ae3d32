// AES-128-CTR alpha generation with VAES on 256-bit registers, for CPUs with VAES and AVX2 but no
// AVX-512 (see prf_vaes.hpp): two blocks per instruction where prf_vaes.cpp takes four. This file
// alone is compiled with -maes -mvaes -mavx2; it has no external-linkage code except the entry
// points below, which the caller only reaches after vaes256_supported() (defined in
// correlated_randomness.cpp, compiled for the baseline instruction set).
// The kernels themselves are prf_vaes_kernels.hpp's, over 256-bit registers here: compiled in
// this file again rather than taken from prf_vaes.cpp, whose copy may use AVX-512 encodings.
#include "protocol/rss3/prf_vaes.hpp"

#if defined(__VAES__) && defined(__AVX2__) && defined(__AES__)
#include "protocol/rss3/prf_vaes_kernels.hpp"

namespace mpc::rss3::detail {
namespace {

struct YmmOps {
  using V = __m256i;
  static constexpr std::size_t kBlocks = 2;
  static V round_key(const std::uint8_t* bytes) {
    return _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(bytes)));
  }
  static V add_lanes(V v) { return _mm256_add_epi32(v, _mm256_set_epi32(0, 0, 0, 1, 0, 0, 0, 0)); }
  static V advance(V v) { return _mm256_add_epi32(v, _mm256_set_epi32(0, 0, 0, 2, 0, 0, 0, 2)); }
  static V reverse(V v) {
    return _mm256_shuffle_epi8(
        v, _mm256_broadcastsi128_si256(_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)));
  }
  static V xor_(V a, V b) { return _mm256_xor_si256(a, b); }
  static V aesenc(V a, V k) { return _mm256_aesenc_epi128(a, k); }
  static V aesenclast(V a, V k) { return _mm256_aesenclast_epi128(a, k); }
  static void store(std::uint8_t* out, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), v); }
  static void store_first(std::uint8_t* out, std::size_t, V v) {  // one block: the low lane
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(v));
  }
};

}  // namespace

void vaes256_expand_key(const std::uint8_t key[16], AesRoundKeys& round_keys) { expand_key_aesni(key, round_keys); }

void vaes256_ctr_xor2(const AesRoundKeys& own, const AesRoundKeys& previous, const std::uint8_t prefix[12],
                      std::uint32_t counter, std::uint8_t* out, std::size_t blocks) {
  VaesCtr<YmmOps>::xor2(own, previous, prefix, counter, out, blocks);
}

void vaes256_ctr(const AesRoundKeys& key, const std::uint8_t prefix[12], std::uint32_t counter, std::uint8_t* out,
                 std::size_t blocks) {
  VaesCtr<YmmOps>::one(key, prefix, counter, out, blocks);
}

}  // namespace mpc::rss3::detail

#else  // not built with VAES support

namespace mpc::rss3::detail {
void vaes256_expand_key(const std::uint8_t*, AesRoundKeys&) {}
void vaes256_ctr_xor2(const AesRoundKeys&, const AesRoundKeys&, const std::uint8_t*, std::uint32_t, std::uint8_t*,
                      std::size_t) {}
void vaes256_ctr(const AesRoundKeys&, const std::uint8_t*, std::uint32_t, std::uint8_t*, std::size_t) {}
}  // namespace mpc::rss3::detail

#endif
