// Tile kernel, AVX-512 F/VL/BW (this file alone is compiled with -mavx512f -mavx512vl -mavx512bw).
#include "protocol/rss3/evaluator_kernels.hpp"

namespace mpc::rss3::detail {

#if defined(__AVX512F__)
namespace {
typedef std::uint64_t Vec512 __attribute__((vector_size(64)));
}  // namespace
KernelInfo avx512_kernel(std::size_t tile_words) {
  if (tile_words == 8) return {&TileInterpreter<Vec512, 8>::run, 8};
  if (tile_words == 16 && MPC_RSS3_AVX512_TILE >= 16) return {&TileInterpreter<Vec512, 16>::run, 16};
  return {&TileInterpreter<Vec512, MPC_RSS3_AVX512_TILE>::run, MPC_RSS3_AVX512_TILE};
}
#else
KernelInfo avx512_kernel(std::size_t) { return {nullptr, 0}; }
#endif

}  // namespace mpc::rss3::detail
