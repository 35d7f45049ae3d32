// Internal to CorrelatedRandomness: AES-128-CTR for alpha with VAES (four blocks per
// instruction), both keys fused in one pass: out = AES(k_own, ctr) ^ AES(k_prev, ctr); and one
// key's keystream for prf_stream.
// Same bytes as OpenSSL's AES-128-CTR (tests compare them); used only when the CPU has
// VAES, AVX-512 F/BW and AES-NI, because OpenSSL 3.0's CTR mode uses 128-bit AES-NI only.
//
// This header must stay free of functions with external linkage that could be emitted in
// the VAES translation unit (only PODs and declarations).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpc::rss3::detail {

struct AesRoundKeys {
  alignas(16) std::uint8_t bytes[11 * 16];
};

// True when this CPU (and OS) supports the VAES path.
bool vaes_prf_supported();

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

}  // namespace mpc::rss3::detail
