// Whether this CPU runs the kernels of ghash_vpclmul.hpp and gcm_vaes.hpp. Built without their
// instruction sets, so that asking is safe on any CPU.
#include "transport/gcm_vaes.hpp"
#include "transport/ghash_vpclmul.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace mpc::transport::detail {

bool ghash_vpclmul_supported() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul") &&
         __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

bool gcm_vaes_supported() {
#if defined(__x86_64__)
  // VAES from CPUID leaf 7 (ECX bit 9): not every compiler's __builtin_cpu_supports knows it.
  // The AVX-512 checks above include the operating system's saving of the registers.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool vaes = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 && ((ecx >> 9) & 1) != 0;
  return vaes && ghash_vpclmul_supported() && __builtin_cpu_supports("aes");
#else
  return false;
#endif
}

}  // namespace mpc::transport::detail
