// Tile kernel, AVX2 (this file alone is compiled with -mavx2).
#include "protocol/rss3/evaluator_kernels.hpp"

namespace mpc::rss3::detail {

#if defined(__AVX2__)
namespace {
typedef std::uint64_t Vec256 __attribute__((vector_size(32)));
}  // namespace
KernelInfo avx2_kernel(std::size_t tile_words) {
  if (tile_words == 8) return {&TileInterpreter<Vec256, 8>::run, 8};
  if (tile_words == 16 && MPC_RSS3_AVX2_TILE >= 16) return {&TileInterpreter<Vec256, 16>::run, 16};
  return {&TileInterpreter<Vec256, MPC_RSS3_AVX2_TILE>::run, MPC_RSS3_AVX2_TILE};
}
#else
KernelInfo avx2_kernel(std::size_t) { return {nullptr, 0}; }
#endif

}  // namespace mpc::rss3::detail
