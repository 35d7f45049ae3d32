// Internal to CorrelatedRandomness: AES-128-CTR for alpha with VAES, both keys fused in one
// pass: out = AES(k_own, ctr) ^ AES(k_prev, ctr); and one key's keystream for prf_stream. Two
// widths: four blocks per instruction on 512-bit registers (VAES with AVX-512 F/BW,
// prf_vaes.cpp), two on 256-bit ones (VAES with AVX2 and no AVX-512, prf_vaes_ymm.cpp).
// Same bytes as OpenSSL's AES-128-CTR (tests compare them); OpenSSL 3.0's CTR mode uses
// 128-bit AES-NI only, and costs a pass to zero the output and one per key besides.
//
// This header must stay free of functions with external linkage that could be emitted in
// the VAES translation units (only PODs and declarations).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpc::rss3::detail {

struct AesRoundKeys {
  alignas(16) std::uint8_t bytes[11 * 16];
};

// True when this CPU (and OS) runs either width.
bool vaes_prf_supported();
// The width the three calls below use: "zmm" or "ymm" (nullptr without VAES).
const char* vaes_prf_width();

// FIPS-197 key expansion with AES-NI. Only call when vaes_prf_supported().
void vaes_expand_key(const std::uint8_t key[16], AesRoundKeys& round_keys);

// For j in [0, blocks): out[16j, 16j+16) = AES(own, B(counter + j)) ^ AES(previous, B(counter + j)),
// where B(c) = prefix (12 bytes) || c as 32-bit big-endian. The caller guarantees that
// counter + blocks does not exceed 2^32. Only call when vaes_prf_supported().
void vaes_ctr_xor2(const AesRoundKeys& own, const AesRoundKeys& previous, const std::uint8_t prefix[12],
                   std::uint32_t counter, std::uint8_t* out, std::size_t blocks);

// For j in [0, blocks): out[16j, 16j+16) = AES(key, B(counter + j)): one key's keystream, for
// prf_stream. Same conditions as above.
void vaes_ctr(const AesRoundKeys& key, const std::uint8_t prefix[12], std::uint32_t counter, std::uint8_t* out,
              std::size_t blocks);

// Each width's own kernels, which the three calls above dispatch to (and tests compare with
// OpenSSL wherever the CPU runs them). Only call when the width's check says so.
bool vaes512_supported();
bool vaes256_supported();
void vaes512_expand_key(const std::uint8_t key[16], AesRoundKeys& round_keys);
void vaes512_ctr_xor2(const AesRoundKeys& own, const AesRoundKeys& previous, const std::uint8_t prefix[12],
                      std::uint32_t counter, std::uint8_t* out, std::size_t blocks);
void vaes512_ctr(const AesRoundKeys& key, const std::uint8_t prefix[12], std::uint32_t counter, std::uint8_t* out,
                 std::size_t blocks);
void vaes256_expand_key(const std::uint8_t key[16], AesRoundKeys& round_keys);
void vaes256_ctr_xor2(const AesRoundKeys& own, const AesRoundKeys& previous, const std::uint8_t prefix[12],
                      std::uint32_t counter, std::uint8_t* out, std::size_t blocks);
void vaes256_ctr(const AesRoundKeys& key, const std::uint8_t prefix[12], std::uint32_t counter, std::uint8_t* out,
                 std::size_t blocks);

}  // namespace mpc::rss3::detail
