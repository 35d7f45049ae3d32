// cuda/kernels.hpp: host dispatch of the GPU kernels (cuda/kernels.cu) for the
// three-party evaluation of Araki et al., CCS 2016 (eprint 2016/768).
//
// Tiers (see STYLE.md): device primitives in layer_ops.hpp / aes_ttable.hpp /
// device_helpers.hpp (host-testable), per-block loops and thin __global__ entries in
// kernels.cu, and these dispatch functions. Each enqueues work on `stream`, allocates
// nothing, and returns the cudaError_t of the launch (checked right after it) or
// cudaErrorInvalidValue for arguments it cannot launch; the caller checks every one.
//
// Needs the CUDA runtime headers (built only with CUDA); the public API is
// cuda_evaluator.hpp.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/aes_ttable.hpp"
#include "cuda/layer_ops.hpp"
#include "cuda/staged_ops.hpp"

namespace mpc::cuda::detail {

// Pass kernel: one block per chunk, one lane per word, the ops of a level spread over the
// block's warps.
inline constexpr int kPassWarps = 8;
inline constexpr int kPassThreads = kPassWarps * 32;
// Staged kernel: blocks of W words (8, 16 or 32), kStagedThreads / W ops of a level at a time.
inline constexpr int kStagedThreads = 256;
// PRF kernel: one thread per 16-byte alpha block.
inline constexpr int kAlphaThreads = 256;
// Transposes: one thread per (word, 8-byte group of a record).
inline constexpr int kTransposeThreads = 128;

static_assert(kPassThreads == kPassWarps * static_cast<int>(kChunkWords), "a warp covers a chunk");
static_assert(kPassThreads <= 1024 && kAlphaThreads <= 1024 && kTransposeThreads <= 1024, "CUDA block size limit");

// The PRF keys as the alpha kernel takes them (by value: the round keys end up in the
// kernel's constant bank).
struct AlphaKeys {
  Aes128RoundKeys own;
  Aes128RoundKeys previous;
  std::uint32_t prefix[3];  // epoch (two words) and sequence: the first 12 counter-block bytes
};
static_assert(sizeof(AlphaKeys) <= 4096, "kernel parameter space");

// Runs one pass (args.ops / level_bounds / levels) over chunks [first_chunk,
// first_chunk + chunk_count) of a batch of args.instances instances.
cudaError_t launch_pass(const PassArgs& args, std::uint64_t first_chunk, std::uint64_t chunk_count,
                        cudaStream_t stream);

// Runs one staged pass over words [first_word, first_word + word_count) (whole blocks of
// `words` words, words in {8, 16, 32}) with `regs` shared registers per block:
// regs * 16 * words bytes of dynamic shared memory, at most what
// prepare_staged_kernels() allowed.
cudaError_t launch_staged_pass(const StagedArgs& args, std::uint32_t words, std::uint64_t first_word,
                               std::uint64_t word_count, std::uint32_t regs, cudaStream_t stream);

// Lets the staged kernels use up to `max_shared_bytes` of dynamic shared memory per block
// on the current device (once per device, before the first launch).
cudaError_t prepare_staged_kernels(int max_shared_bytes);

// Bytes of shared memory a staged block of `words` words with `regs` registers uses.
constexpr std::uint64_t staged_shared_bytes(std::uint32_t regs, std::uint32_t words) {
  return std::uint64_t{regs} * 16 * words;
}

// out[16 j, 16 j + 16) = AES(own, B(first_counter + j)) ^ AES(previous, B(first_counter + j))
// for j < blocks, B(c) = prefix || c (big-endian); `out` 16-byte aligned;
// first_counter + blocks <= 2^32.
cudaError_t launch_alpha(const AlphaKeys& keys, std::uint32_t first_counter, std::uint64_t blocks,
                         std::uint8_t* out, cudaStream_t stream);

// Device twins of rss3::slice / rss3::unslice (transpose.hpp), same layouts: records of
// `record_bytes` bytes back to back; rows of `words_per_row` words (>= words_for(instances)),
// bit j of a record in row first_row + j; slice writes padding words and bits as zero.
cudaError_t launch_slice(const std::uint8_t* records, std::uint64_t record_bytes, std::uint64_t instances,
                         std::uint64_t* rows, std::uint64_t words_per_row, std::uint64_t first_row,
                         cudaStream_t stream);
cudaError_t launch_unslice(const std::uint64_t* rows, std::uint64_t words_per_row, std::uint64_t first_row,
                           std::uint64_t record_bytes, std::uint64_t instances, std::uint8_t* records,
                           cudaStream_t stream);

}  // namespace mpc::cuda::detail
