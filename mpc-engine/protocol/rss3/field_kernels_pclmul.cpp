// Built with -mpclmul on x86-64; pclmul_field_kernels() checks the CPU before handing them out.
#include "protocol/rss3/field_kernels_impl.hpp"

#if defined(MPC_RSS3_X86)
#include "protocol/rss3/field_pclmul.hpp"

namespace mpc::rss3::detail {

const FieldKernels* pclmul_field_kernels() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("pclmul") || !__builtin_cpu_supports("sse2")) return nullptr;
  static const FieldKernels kernels = KernelSet<PclmulField>::table("pclmul");
  return &kernels;
}

}  // namespace mpc::rss3::detail

#else

namespace mpc::rss3::detail {
const FieldKernels* pclmul_field_kernels() { return nullptr; }
}  // namespace mpc::rss3::detail

#endif
