// cuda/cuda_stub.cpp: cuda_evaluator.hpp and gpu_garbling.hpp in a build without CUDA
// (MPC_ENABLE_CUDA=OFF or no CUDA compiler found), so that the server links either way.
#include "common/error.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "cuda/gpu_garbling.hpp"

namespace mpc::cuda {

bool cuda_device_available() noexcept { return false; }

int cuda_device_count() noexcept { return 0; }

std::unique_ptr<CudaEvaluator> create_cuda_evaluator(int, const CudaOptions&) {
  throw Error(Component::Protocol, "built without CUDA");
}

std::unique_ptr<rss3::Evaluator> make_cuda_evaluator(int device) { return create_cuda_evaluator(device); }

struct GpuGarbling::Impl {};

GpuGarbling::GpuGarbling(int) { throw Error(Component::Protocol, "built without CUDA"); }
GpuGarbling::~GpuGarbling() = default;

std::vector<std::uint8_t> GpuGarbling::garble(gc2::Garbler&, const circuits::Program&, std::size_t,
                                              std::span<const gc2::Block>, two_party::Channel&, gc2::Labels*) {
  throw Error(Component::Protocol, "built without CUDA");
}

std::vector<std::uint8_t> GpuGarbling::evaluate(const circuits::Program&, std::size_t, std::span<const gc2::Block>,
                                                two_party::Channel&, gc2::Labels*) {
  throw Error(Component::Protocol, "built without CUDA");
}

double GpuGarbling::last_kernel_ms() const noexcept { return 0; }

std::size_t gpu_garbling_min_instances() noexcept { return 0; }

bool gpu_garbling_preferred(const circuits::Program&, std::size_t, std::size_t) noexcept { return false; }

namespace detail {
std::vector<std::uint8_t> garble_with_constant(GpuGarbling&, gc2::Garbler&, const gc2::Block&,
                                               const circuits::Program&, std::size_t, std::span<const gc2::Block>,
                                               two_party::Channel&, gc2::Labels*) {
  throw Error(Component::Protocol, "built without CUDA");
}
}  // namespace detail

}  // namespace mpc::cuda
