// Tile kernel, baseline instruction set (SSE2 on x86-64; any GCC/Clang target).
#include "protocol/rss3/evaluator_kernels.hpp"

namespace mpc::rss3::detail {
namespace {
typedef std::uint64_t Vec128 __attribute__((vector_size(16)));
}  // namespace

KernelInfo portable_kernel(std::size_t tile_words) {
  if (tile_words == 8) return {&TileInterpreter<Vec128, 8>::run, 8};
  if (tile_words == 16 && MPC_RSS3_PORTABLE_TILE >= 16) return {&TileInterpreter<Vec128, 16>::run, 16};
  return {&TileInterpreter<Vec128, MPC_RSS3_PORTABLE_TILE>::run, MPC_RSS3_PORTABLE_TILE};
}

KernelInfo narrow_kernel() { return {&TileInterpreter<std::uint64_t, 1>::run, 1}; }

}  // namespace mpc::rss3::detail
