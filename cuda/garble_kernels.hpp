// cuda/garble_kernels.hpp: host dispatch of the half-gates kernels (cuda/garble_kernels.cu;
// the per-thread work is garble_ops.hpp). Each enqueues on `stream`, allocates nothing and
// returns the launch's cudaError_t (cudaErrorInvalidValue for arguments it cannot launch).
// Needs the CUDA runtime headers; the public API is gpu_garbling.hpp.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/garble_ops.hpp"

namespace mpc::cuda::detail {

inline constexpr int kGarbleThreads = 256;

// ops[begin, end) (linear ops or output copies) on every instance of the chunk: one thread
// per instance and label half, walking the ops in order.
cudaError_t launch_garble_linear(const GarbleArgs& args, std::uint32_t begin, std::uint32_t end, cudaStream_t stream);

// The AND gates ops[begin, begin + gates) (gate G = first_gate + their index) on every
// instance of the chunk: one thread per gate-instance.
cudaError_t launch_garble_ands(const GarbleArgs& args, std::uint32_t begin, std::uint32_t gates,
                               std::uint64_t first_gate, cudaStream_t stream);

}  // namespace mpc::cuda::detail
