// cuda/kernels.cu: the GPU kernels of the three-party evaluation (Araki, Furukawa,
// Lindell, Nof, Ohara, ACM CCS 2016, eprint 2016/768) and their host dispatch.
//
// - pass_kernel: one pass of a compiled program (finish phase of the previous layer,
//   linear ops, AND local phase, outputs) over one chunk of 2048 instances per block:
//   lane j of every warp owns word j of the chunk, the warps take the ops of a level in
//   turn, a barrier separates levels. All state lives in device memory (the L1/L2 keep
//   a chunk's hot slots); r is written over alpha in the outgoing message.
// - staged_pass_kernel<W>: one staged pass (staged_plan.hpp) over blocks of W words: the
//   pass's values live in the block's shared memory (staged_ops.hpp), device memory sees
//   each value that crosses the pass boundary once.
// - alpha_kernel: AES-128-CTR under both PRF keys, XORed (the correlated randomness),
//   T-tables copied into shared memory per block, round keys in the parameter space.
// - slice_kernel / unslice_kernel: 64 x 64 bit transposes, one per (word, 8-byte group).
//
// The per-lane work is in layer_ops.hpp / aes_ttable.hpp / device_helpers.hpp, which the
// CPU tests run too. This file is kept free of C++20 so that any nvcc of CUDA 11 or later
// compiles it; it is the only .cu file of the project.
#include <climits>
#include <initializer_list>

#include "cuda/aes_ttable.hpp"
#include "cuda/device_helpers.hpp"
#include "cuda/kernels.hpp"
#include "cuda/layer_ops.hpp"
#include "cuda/staged_ops.hpp"

namespace mpc::cuda::detail {
namespace {

__constant__ AesTables c_aes_tables = make_aes_tables();

constexpr int kAlphaMaxBlocks = 8192;      // grid cap of the grid-stride PRF loop
constexpr int kTransposeMaxBlocks = 8192;  // likewise for the transposes
constexpr std::size_t kStaticSharedLimit = 48 * 1024;
static_assert(sizeof(AesTables) <= kStaticSharedLimit, "the AES tables must fit in static shared memory");
static_assert(sizeof(AesTables) % sizeof(std::uint32_t) == 0, "copied word by word");

__global__ void __launch_bounds__(kPassThreads) pass_kernel(const __grid_constant__ PassArgs args,
                                                            std::uint64_t first_chunk) {
  const std::uint64_t chunk = first_chunk + blockIdx.x;
  const std::uint32_t lane = threadIdx.x % 32;
  const std::uint32_t warp = threadIdx.x / 32;
  const LaneView view = lane_view(args, chunk, lane);
  const uint4* ops = reinterpret_cast<const uint4*>(args.ops);
  for (std::uint32_t level = 0; level < args.levels; ++level) {
    const std::uint32_t begin = __ldg(args.level_bounds + level);
    const std::uint32_t end = __ldg(args.level_bounds + level + 1);
    for (std::uint32_t i = begin + warp; i < end; i += kPassWarps) {
      const uint4 raw = __ldg(ops + i);
      apply_op(args, view, DeviceOp{raw.x, raw.y, raw.z, raw.w});
    }
    // Orders this level's state and message writes before the next level's reads.
    __syncthreads();
  }
}

// Thread t works on word t % W of the block and on every (kStagedThreads / W)-th op of a
// level from op t / W on; ops of a level are independent (distinct registers and homes),
// and the barrier orders a level's shared-register writes before the next level's reads.
template <std::uint32_t W>
__global__ void __launch_bounds__(kStagedThreads) staged_pass_kernel(const __grid_constant__ StagedArgs args,
                                                                     std::uint64_t first_word) {
  static_assert(kStagedThreads % W == 0 && W <= kChunkWords && kChunkWords % W == 0, "blocks split chunks evenly");
  extern __shared__ std::uint64_t registers[];
  constexpr std::uint32_t kOpLanes = kStagedThreads / W;
  const std::uint32_t local = threadIdx.x % W;
  const std::uint32_t op_lane = threadIdx.x / W;
  const LaneView view = staged_lane_view(args, first_word + static_cast<std::uint64_t>(blockIdx.x) * W + local);
  const uint4* ops = reinterpret_cast<const uint4*>(args.ops);
  for (std::uint32_t level = 0; level < args.levels; ++level) {
    const std::uint32_t begin = __ldg(args.level_bounds + level);
    const std::uint32_t end = __ldg(args.level_bounds + level + 1);
    for (std::uint32_t i = begin + op_lane; i < end; i += kOpLanes) {
      const uint4 raw = __ldg(ops + i);
      apply_staged_op(args, view, registers, W, local, DeviceOp{raw.x, raw.y, raw.z, raw.w});
    }
    __syncthreads();
  }
}

__global__ void __launch_bounds__(kAlphaThreads) alpha_kernel(const __grid_constant__ AlphaKeys keys,
                                                              std::uint32_t first_counter, std::uint64_t blocks,
                                                              uint4* out) {
  __shared__ AesTables tables;
  const std::uint32_t* src = reinterpret_cast<const std::uint32_t*>(&c_aes_tables);
  std::uint32_t* dst = reinterpret_cast<std::uint32_t*>(&tables);
  for (std::uint32_t i = threadIdx.x; i < sizeof(AesTables) / sizeof(std::uint32_t); i += blockDim.x) dst[i] = src[i];
  __syncthreads();
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t j = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < blocks; j += stride) {
    const std::uint32_t block[4] = {keys.prefix[0], keys.prefix[1], keys.prefix[2],
                                    first_counter + static_cast<std::uint32_t>(j)};
    std::uint32_t o[4];
    alpha_block(keys.own.w, keys.previous.w, tables.te, tables.sbox, block, o);
    out[j] = make_uint4(o[0], o[1], o[2], o[3]);
  }
}

__global__ void __launch_bounds__(kTransposeThreads) slice_kernel(const std::uint8_t* records,
                                                                  std::uint64_t record_bytes, std::uint64_t instances,
                                                                  std::uint64_t* rows, std::uint64_t words_per_row,
                                                                  std::uint64_t first_row) {
  const std::uint64_t groups = record_groups(record_bytes);
  const std::uint64_t tiles = words_per_row * groups;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t t = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < tiles; t += stride)
    slice_tile(records, record_bytes, instances, rows, words_per_row, first_row, t / groups, t % groups);
}

__global__ void __launch_bounds__(kTransposeThreads) unslice_kernel(const std::uint64_t* rows,
                                                                    std::uint64_t words_per_row,
                                                                    std::uint64_t first_row, std::uint64_t record_bytes,
                                                                    std::uint64_t instances, std::uint8_t* records) {
  const std::uint64_t groups = record_groups(record_bytes);
  const std::uint64_t tiles = words_for(instances) * groups;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t t = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < tiles; t += stride)
    unslice_tile(rows, words_per_row, first_row, record_bytes, instances, records, t / groups, t % groups);
}

unsigned grid_for(std::uint64_t items, int threads, int cap) {
  const std::uint64_t blocks = (items + threads - 1) / threads;
  return static_cast<unsigned>(blocks < static_cast<std::uint64_t>(cap) ? blocks : cap);
}

}  // namespace

cudaError_t launch_pass(const PassArgs& args, std::uint64_t first_chunk, std::uint64_t chunk_count,
                        cudaStream_t stream) {
  if (chunk_count == 0 || args.levels == 0) return cudaSuccess;
  if (chunk_count > static_cast<std::uint64_t>(INT_MAX)) return cudaErrorInvalidValue;
  pass_kernel<<<static_cast<unsigned>(chunk_count), kPassThreads, 0, stream>>>(args, first_chunk);
  return cudaGetLastError();
}

cudaError_t launch_staged_pass(const StagedArgs& args, std::uint32_t words, std::uint64_t first_word,
                               std::uint64_t word_count, std::uint32_t regs, cudaStream_t stream) {
  if (word_count == 0 || args.levels == 0) return cudaSuccess;
  if (words == 0 || word_count % words != 0 || first_word % words != 0 || word_count / words > INT_MAX)
    return cudaErrorInvalidValue;
  const unsigned blocks = static_cast<unsigned>(word_count / words);
  const std::uint64_t shared = staged_shared_bytes(regs, words);
  if (shared > INT_MAX) return cudaErrorInvalidValue;
  switch (words) {
    case 8: staged_pass_kernel<8><<<blocks, kStagedThreads, shared, stream>>>(args, first_word); break;
    case 16: staged_pass_kernel<16><<<blocks, kStagedThreads, shared, stream>>>(args, first_word); break;
    case 32: staged_pass_kernel<32><<<blocks, kStagedThreads, shared, stream>>>(args, first_word); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t prepare_staged_kernels(int max_shared_bytes) {
  for (const void* kernel : {reinterpret_cast<const void*>(&staged_pass_kernel<8>),
                             reinterpret_cast<const void*>(&staged_pass_kernel<16>),
                             reinterpret_cast<const void*>(&staged_pass_kernel<32>)}) {
    const cudaError_t status =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_shared_bytes);
    if (status != cudaSuccess) return status;
  }
  return cudaSuccess;
}

cudaError_t launch_alpha(const AlphaKeys& keys, std::uint32_t first_counter, std::uint64_t blocks, std::uint8_t* out,
                         cudaStream_t stream) {
  if (blocks == 0) return cudaSuccess;
  if (blocks > (std::uint64_t{1} << 32) - first_counter || reinterpret_cast<std::uintptr_t>(out) % 16 != 0)
    return cudaErrorInvalidValue;
  alpha_kernel<<<grid_for(blocks, kAlphaThreads, kAlphaMaxBlocks), kAlphaThreads, 0, stream>>>(
      keys, first_counter, blocks, reinterpret_cast<uint4*>(out));
  return cudaGetLastError();
}

cudaError_t launch_slice(const std::uint8_t* records, std::uint64_t record_bytes, std::uint64_t instances,
                         std::uint64_t* rows, std::uint64_t words_per_row, std::uint64_t first_row,
                         cudaStream_t stream) {
  if (words_per_row < words_for(instances)) return cudaErrorInvalidValue;
  const std::uint64_t tiles = words_per_row * record_groups(record_bytes);
  if (tiles == 0) return cudaSuccess;
  slice_kernel<<<grid_for(tiles, kTransposeThreads, kTransposeMaxBlocks), kTransposeThreads, 0, stream>>>(
      records, record_bytes, instances, rows, words_per_row, first_row);
  return cudaGetLastError();
}

cudaError_t launch_unslice(const std::uint64_t* rows, std::uint64_t words_per_row, std::uint64_t first_row,
                           std::uint64_t record_bytes, std::uint64_t instances, std::uint8_t* records,
                           cudaStream_t stream) {
  if (words_per_row < words_for(instances)) return cudaErrorInvalidValue;
  const std::uint64_t tiles = words_for(instances) * record_groups(record_bytes);
  if (tiles == 0) return cudaSuccess;
  unslice_kernel<<<grid_for(tiles, kTransposeThreads, kTransposeMaxBlocks), kTransposeThreads, 0, stream>>>(
      rows, words_per_row, first_row, record_bytes, instances, records);
  return cudaGetLastError();
}

}  // namespace mpc::cuda::detail
