// cuda/cuda_stub.cpp: cuda_evaluator.hpp in a build without CUDA (MPC_ENABLE_CUDA=OFF or
// no CUDA compiler found), so that the server links either way.
#include "common/error.hpp"
#include "cuda/cuda_evaluator.hpp"

namespace mpc::cuda {

bool cuda_device_available() noexcept { return false; }

int cuda_device_count() noexcept { return 0; }

std::unique_ptr<CudaEvaluator> create_cuda_evaluator(int, const CudaOptions&) {
  throw Error(Component::Protocol, "built without CUDA");
}

std::unique_ptr<rss3::Evaluator> make_cuda_evaluator(int device) { return create_cuda_evaluator(device); }

}  // namespace mpc::cuda
