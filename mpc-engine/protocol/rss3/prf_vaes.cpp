// AES-128-CTR alpha generation with VAES on 512-bit registers (see prf_vaes.hpp). This file
// alone is compiled with -maes -mvaes -mavx512f -mavx512bw; it has no external-linkage code
// except the entry points below, which the caller only reaches after vaes512_supported()
// (defined in correlated_randomness.cpp, compiled for the baseline instruction set).
// The kernels themselves are prf_vaes_kernels.hpp's, over 512-bit registers here.
#include "protocol/rss3/prf_vaes.hpp"

#if defined(__VAES__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AES__)
#include "protocol/rss3/prf_vaes_kernels.hpp"

namespace mpc::rss3::detail {
namespace {

struct ZmmOps {
  using V = __m512i;
  static constexpr std::size_t kBlocks = 4;
  static V round_key(const std::uint8_t* bytes) {
    return _mm512_maskz_broadcast_i32x4(0xffff, _mm_load_si128(reinterpret_cast<const __m128i*>(bytes)));
  }
  static V add_lanes(V v) { return _mm512_add_epi32(v, _mm512_set_epi32(0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0)); }
  static V advance(V v) { return _mm512_add_epi32(v, _mm512_set_epi32(0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4)); }
  static V reverse(V v) {
    return _mm512_shuffle_epi8(
        v, _mm512_maskz_broadcast_i32x4(0xffff, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)));
  }
  static V xor_(V a, V b) { return _mm512_xor_si512(a, b); }
  static V aesenc(V a, V k) { return _mm512_aesenc_epi128(a, k); }
  static V aesenclast(V a, V k) { return _mm512_aesenclast_epi128(a, k); }
  static void store(std::uint8_t* out, V v) { _mm512_storeu_si512(out, v); }
  static void store_first(std::uint8_t* out, std::size_t left, V v) {
    _mm512_mask_storeu_epi64(out, static_cast<__mmask8>((1u << (2 * left)) - 1), v);
  }
};

}  // namespace

void vaes512_expand_key(const std::uint8_t key[16], AesRoundKeys& round_keys) { expand_key_aesni(key, round_keys); }

void vaes512_ctr_xor2(const AesRoundKeys& own, const AesRoundKeys& previous, const std::uint8_t prefix[12],
                      std::uint32_t counter, std::uint8_t* out, std::size_t blocks) {
  VaesCtr<ZmmOps>::xor2(own, previous, prefix, counter, out, blocks);
}

void vaes512_ctr(const AesRoundKeys& key, const std::uint8_t prefix[12], std::uint32_t counter, std::uint8_t* out,
                 std::size_t blocks) {
  VaesCtr<ZmmOps>::one(key, prefix, counter, out, blocks);
}

}  // namespace mpc::rss3::detail

#else  // not built with VAES support

namespace mpc::rss3::detail {
void vaes512_expand_key(const std::uint8_t*, AesRoundKeys&) {}
void vaes512_ctr_xor2(const AesRoundKeys&, const AesRoundKeys&, const std::uint8_t*, std::uint32_t, std::uint8_t*,
                   std::size_t) {}
void vaes512_ctr(const AesRoundKeys&, const std::uint8_t*, std::uint32_t, std::uint8_t*, std::size_t) {}
}  // namespace mpc::rss3::detail

#endif
