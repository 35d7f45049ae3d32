// Which of the kernels of ghash_vpclmul.hpp and gcm_vaes.hpp this CPU runs, and the functions
// that call the widest. Built without their instruction sets, so that asking is safe on any CPU.
#include "transport/gcm_vaes.hpp"
#include "transport/ghash_vpclmul.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace mpc::transport::detail {
namespace {

// The checks include the operating system's saving of the registers (AVX and AVX-512 state).
bool cpu_has_avx512() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

bool cpu_has_avx2() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

bool cpu_has_vpclmulqdq() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul");
#else
  return false;
#endif
}

// VAES from CPUID leaf 7 (ECX bit 9): not every compiler's __builtin_cpu_supports knows it.
bool cpu_has_vaes() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 && ((ecx >> 9) & 1) != 0 &&
         __builtin_cpu_supports("aes");
#else
  return false;
#endif
}

}  // namespace

const GhashKernels* ghash_vpclmul_kernels(int width) {
  const bool wide = cpu_has_vpclmulqdq() && cpu_has_avx512() && kGhashVpclmul512.absorb != nullptr;
  const bool narrow = cpu_has_vpclmulqdq() && cpu_has_avx2() && kGhashVpclmul256.absorb != nullptr;
  if (width == 512 || (width == 0 && wide)) return wide ? &kGhashVpclmul512 : nullptr;
  if (width == 256 || width == 0) return narrow ? &kGhashVpclmul256 : nullptr;
  return nullptr;
}

const GcmVaesKernels* gcm_vaes_kernels(int width) {
  const bool aes = cpu_has_vaes() && cpu_has_vpclmulqdq();
  const bool wide = aes && cpu_has_avx512() && kGcmVaes512.open != nullptr;
  const bool narrow = aes && cpu_has_avx2() && kGcmVaes256.open != nullptr;
  if (width == 512 || (width == 0 && wide)) return wide ? &kGcmVaes512 : nullptr;
  if (width == 256 || width == 0) return narrow ? &kGcmVaes256 : nullptr;
  return nullptr;
}

bool ghash_vpclmul_supported() { return ghash_vpclmul_kernels() != nullptr; }

bool gcm_vaes_supported() { return gcm_vaes_kernels() != nullptr; }

namespace {

const GhashKernels& ghash() {
  static const GhashKernels* const widest = ghash_vpclmul_kernels();
  return *widest;
}

const GcmVaesKernels& gcm() {
  static const GcmVaesKernels* const widest = gcm_vaes_kernels();
  return *widest;
}

}  // namespace

void ghash_vpclmul_powers(const std::uint8_t h[16], GhashPowers& powers) { ghash().powers(h, powers); }

void ghash_vpclmul_absorb(const GhashPowers& powers, std::uint8_t state[16], const std::uint8_t* data,
                          std::size_t bytes) {
  ghash().absorb(powers, state, data, bytes);
}

void ghash_vpclmul_value(const std::uint8_t state[16], std::uint8_t out[16]) { ghash().value(state, out); }

void gcm_vaes_set_key(const std::uint8_t key[32], GcmVaesKey& out) { gcm().set_key(key, out); }

void gcm_vaes_encrypt(const GcmVaesKey& key, const std::uint8_t nonce[12], std::size_t offset, const std::uint8_t* in,
                      std::uint8_t* out, std::size_t bytes) {
  gcm().encrypt(key, nonce, offset, in, out, bytes);
}

void gcm_vaes_tag(const GcmVaesKey& key, const std::uint8_t nonce[12], const std::uint8_t* aad, std::size_t aad_bytes,
                  const std::uint8_t* ciphertext, std::size_t bytes, std::uint8_t tag[16]) {
  gcm().tag(key, nonce, aad, aad_bytes, ciphertext, bytes, tag);
}

bool gcm_vaes_open(const GcmVaesKey& key, const std::uint8_t nonce[12], const std::uint8_t* aad, std::size_t aad_bytes,
                   std::uint8_t* text, std::size_t bytes, const std::uint8_t tag[16]) {
  return gcm().open(key, nonce, aad, aad_bytes, text, bytes, tag);
}

}  // namespace mpc::transport::detail
