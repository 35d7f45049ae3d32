// cuda/garble_kernels.cu: half-gates garbling and evaluation on the GPU (Zahur, Rosulek,
// Evans, EUROCRYPT 2015; fixed-key hash of Guo, Katz, Wang, Yu, IEEE S&P 2020): thin
// __global__ entries over garble_ops.hpp, which the CPU tests run too.
//
// - garble_linear_kernel: a layer's linear ops, one thread per instance and 64-bit half of
//   its labels (two threads per label, a warp reads 256 contiguous bytes per op);
// - garble_and_kernel: a layer's AND gates, one thread per gate-instance, instances of one
//   gate on consecutive threads (their slots and table rows are contiguous); the AES
//   T-tables copied into shared memory per block, pi's round keys in the parameter space.
// Kept free of C++20 (as kernels.cu).
#include <climits>

#include "cuda/garble_kernels.hpp"

namespace mpc::cuda::detail {
namespace {

__constant__ AesTables c_garble_tables = make_aes_tables();

constexpr unsigned kMaxAndBlocks = 1u << 16;  // grid cap of the grid-stride AND loop
static_assert(sizeof(AesTables) <= 48 * 1024, "the AES tables must fit in static shared memory");

__global__ void __launch_bounds__(kGarbleThreads) garble_linear_kernel(const __grid_constant__ GarbleArgs args,
                                                                       std::uint32_t begin, std::uint32_t end) {
  const std::uint64_t t = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= 2 * args.count) return;
  const uint4* ops = reinterpret_cast<const uint4*>(args.ops);
  for (std::uint32_t i = begin; i < end; ++i) {
    const uint4 raw = __ldg(ops + i);
    garble_linear(args, DeviceOp{raw.x, raw.y, raw.z, raw.w}, t / 2, static_cast<std::uint32_t>(t % 2));
  }
}

__global__ void __launch_bounds__(kGarbleThreads) garble_and_kernel(const __grid_constant__ GarbleArgs args,
                                                                    std::uint32_t begin, std::uint64_t first_gate,
                                                                    std::uint64_t items) {
  __shared__ AesTables tables;
  const std::uint32_t* src = reinterpret_cast<const std::uint32_t*>(&c_garble_tables);
  std::uint32_t* dst = reinterpret_cast<std::uint32_t*>(&tables);
  for (std::uint32_t i = threadIdx.x; i < sizeof(AesTables) / sizeof(std::uint32_t); i += blockDim.x) dst[i] = src[i];
  __syncthreads();
  const uint4* ops = reinterpret_cast<const uint4*>(args.ops);
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t t = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < items; t += stride) {
    const std::uint64_t gate = t / args.count;
    const uint4 raw = __ldg(ops + begin + gate);
    garble_and(args, DeviceOp{raw.x, raw.y, raw.z, raw.w}, first_gate + gate, t % args.count, tables.te,
               tables.sbox);
  }
}

}  // namespace

cudaError_t launch_garble_linear(const GarbleArgs& args, std::uint32_t begin, std::uint32_t end, cudaStream_t stream) {
  if (begin >= end || args.count == 0) return cudaSuccess;
  const std::uint64_t blocks = (2 * args.count + kGarbleThreads - 1) / kGarbleThreads;
  if (blocks > INT_MAX) return cudaErrorInvalidValue;
  garble_linear_kernel<<<static_cast<unsigned>(blocks), kGarbleThreads, 0, stream>>>(args, begin, end);
  return cudaGetLastError();
}

cudaError_t launch_garble_ands(const GarbleArgs& args, std::uint32_t begin, std::uint32_t gates,
                               std::uint64_t first_gate, cudaStream_t stream) {
  if (gates == 0 || args.count == 0) return cudaSuccess;
  const std::uint64_t items = static_cast<std::uint64_t>(gates) * args.count;
  const std::uint64_t wanted = (items + kGarbleThreads - 1) / kGarbleThreads;
  const unsigned blocks = static_cast<unsigned>(wanted < kMaxAndBlocks ? wanted : kMaxAndBlocks);
  garble_and_kernel<<<blocks, kGarbleThreads, 0, stream>>>(args, begin, first_gate, items);
  return cudaGetLastError();
}

}  // namespace mpc::cuda::detail
