// AES-256-GCM (NIST SP 800-38D) for the data links' frames with VAES and VPCLMULQDQ: sixteen
// counter blocks in flight, four per instruction with AVX-512 (gcm_vaes.cpp) or two with AVX2
// (gcm_vaes_ymm.cpp), then the GHASH of ghash_vpclmul.hpp over the ciphertext. OpenSSL 3.0
// seals with 128-bit AES-NI and one carry-less product per block, well below its own
// AES-256-CTR rate (docs/benchmarks.md has both), so FrameCipher uses this where the CPU has
// the instructions; the bytes are GCM's either way (tests compare them with OpenSSL's).
//
// 96-bit nonces only: the counter blocks are nonce || 32-bit counter, 1 for the tag's mask and
// 2 onwards for the text.
//
// This header must stay free of functions with external linkage that could be emitted in the
// VAES translation unit (only PODs and declarations).
#pragma once

#include <cstddef>
#include <cstdint>

#include "transport/ghash_vpclmul.hpp"

namespace mpc::transport::detail {

struct GcmVaesKey {
  alignas(16) std::uint8_t round_keys[15 * 16];
  GhashPowers powers;
};

// True when this CPU (and OS) has VAES, AES-NI and VPCLMULQDQ with AVX-512 F, BW and VL, or
// with AVX2. The functions below run the widest it has.
bool gcm_vaes_supported();

// Only call the following when gcm_vaes_supported(). The caller wipes `key` when done with it.
void gcm_vaes_set_key(const std::uint8_t key[32], GcmVaesKey& out);

// Sealing, a part at a time: out = in encrypted as the text's bytes from `offset` on (in == out
// allowed), so a text given in parts is encrypted from where each part lies; then the tag over
// `aad` and the whole ciphertext.
void gcm_vaes_encrypt(const GcmVaesKey& key, const std::uint8_t nonce[12], std::size_t offset,
                      const std::uint8_t* in, std::uint8_t* out, std::size_t bytes);
void gcm_vaes_tag(const GcmVaesKey& key, const std::uint8_t nonce[12], const std::uint8_t* aad,
                  std::size_t aad_bytes, const std::uint8_t* ciphertext, std::size_t bytes, std::uint8_t tag[16]);

// Decrypts `text` in place only if `tag` is its tag with `aad`; false (and `text` untouched)
// otherwise. The tags are compared in constant time.
bool gcm_vaes_open(const GcmVaesKey& key, const std::uint8_t nonce[12], const std::uint8_t* aad,
                   std::size_t aad_bytes, std::uint8_t* text, std::size_t bytes, const std::uint8_t tag[16]);

// One register width's kernels, the functions above. A key set by one width's set_key serves
// the other's too (the round keys and GHASH powers are laid out alike).
struct GcmVaesKernels {
  void (*set_key)(const std::uint8_t key[32], GcmVaesKey& out);
  void (*encrypt)(const GcmVaesKey& key, const std::uint8_t nonce[12], std::size_t offset, const std::uint8_t* in,
                  std::uint8_t* out, std::size_t bytes);
  void (*tag)(const GcmVaesKey& key, const std::uint8_t nonce[12], const std::uint8_t* aad, std::size_t aad_bytes,
              const std::uint8_t* ciphertext, std::size_t bytes, std::uint8_t tag[16]);
  bool (*open)(const GcmVaesKey& key, const std::uint8_t nonce[12], const std::uint8_t* aad, std::size_t aad_bytes,
               std::uint8_t* text, std::size_t bytes, const std::uint8_t tag[16]);
};
extern const GcmVaesKernels kGcmVaes512;  // AVX-512 F, BW, VL
extern const GcmVaesKernels kGcmVaes256;  // AVX2

// The kernels of `width` (512 or 256) where this CPU runs them, else null; width 0: the widest.
const GcmVaesKernels* gcm_vaes_kernels(int width = 0);

}  // namespace mpc::transport::detail
