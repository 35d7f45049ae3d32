// cuda/routing.cpp: which evaluator a batch should go to (cuda_evaluator.hpp), in every
// build (without CUDA, never the GPU).
#include "cuda/cuda_evaluator.hpp"

namespace mpc::cuda {
namespace {

// Below this many instances the CPU evaluator finishes an AES batch sooner: each of the
// 61 passes then costs the GPU a kernel launch, two copies over PCIe and a synchronisation
// (tens of microseconds) that outweigh the CPU's work on a few chunks. A model puts the
// crossover at a few thousand instances; this conservative default keeps latency at the
// CPU's until `cuda_bench --mode route` has measured it (docs/gpu.md, section 7).
constexpr std::size_t kGpuMinInstances = 16384;

}  // namespace

std::size_t gpu_min_instances() noexcept { return kGpuMinInstances; }

bool gpu_preferred(const circuits::Program& program, std::size_t instances, std::size_t min_instances) noexcept {
  if (program.and_depth == 0) return false;  // no round trip: nothing the GPU overlaps
  const std::size_t threshold = min_instances != 0 ? min_instances : kGpuMinInstances;
  return instances >= threshold && cuda_device_available();
}

}  // namespace mpc::cuda
