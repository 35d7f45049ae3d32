// cuda/host_api.cpp: the parts of cuda_evaluator.hpp that need no GPU (built with and
// without CUDA).
#include <limits>

#include "common/error.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "cuda/device_helpers.hpp"

namespace mpc::cuda {

static_assert(detail::kChunkInstances == rss3::kChunkInstances, "the GPU and CPU message layouts must agree");

std::uint64_t alpha_blocks(const circuits::Program& program, std::size_t instances) {
  std::uint64_t blocks = 0;
  const std::uint64_t per_and = detail::per_and_bytes(instances);
  for (const circuits::Layer& layer : program.layers) {
    if (layer.ands.empty()) continue;
    if (per_and != 0 && layer.ands.size() > std::numeric_limits<std::uint64_t>::max() / 2 / per_and)
      throw Error(Component::Protocol, "batch too large");
    blocks += detail::alpha_bytes(detail::message_bytes(instances, layer.ands.size())) / detail::kAesBlockBytes;
  }
  return blocks;
}

}  // namespace mpc::cuda
