// Internal to the CPU evaluator: the instruction stream one "pass" over a tile runs, and
// the per-ISA tile kernels that interpret it. Not part of the public interface.
//
// A pass over layer L runs, for every tile of instances: the finish phase of layer L-1
// (its ANDs' out slots from r and r_prev), the linear ops of L, the local phase of L's
// ANDs (r = x&y ^ a&b ^ alpha, written into the outgoing message), and in the last pass
// the copy of the output slots. The stream is a sequence of runs: a header word
// `opcode | count << kOpBits` followed by `count` records of the opcode's arity.
//
// This header must stay free of functions with external linkage that could be emitted
// in the ISA-specific translation units (only PODs, constants and declarations).
#pragma once

#include <cstddef>
#include <cstdint>

// Tile widths (words per component per slot) of the three kernels, a divisor of 32 (a
// whole chunk). Measured with rss3_evaluator_bench on the AES-128 program (Zen 4): the
// whole chunk (32) beats 8 and 16 at every level. Narrow tiles fit L1 better, but each
// op then has too little independent work to hide the store-to-load forwarding latency
// of the op chains; wide tiles keep several vectors in flight per op. Prefetching the
// next tile's slots cost more than it saved.
#ifndef MPC_RSS3_PORTABLE_TILE
#define MPC_RSS3_PORTABLE_TILE 32
#endif
#ifndef MPC_RSS3_AVX2_TILE
#define MPC_RSS3_AVX2_TILE 32
#endif
#ifndef MPC_RSS3_AVX512_TILE
#define MPC_RSS3_AVX512_TILE 32
#endif

namespace mpc::rss3::detail {

enum Opcode : std::uint32_t {
  kOpXor = 0,     // out, in0, in1
  kOpInv = 1,     // out, in0          x = x0, a = ~a0
  kOpCopy = 2,    // out, in0
  kOpConst0 = 3,  // out               x = 0, a = 0
  kOpConst1 = 4,  // out               x = 0, a = ~0
  kOpLoad = 5,    // out, input row
  kOpAnd = 6,     // k, in0, in1       msg[k] ^= x0&x1 ^ a0&a1   (msg holds alpha)
  kOpFinish = 7,  // out, k            x = r[k] ^ r_prev[k], a = r[k]
  kOpOutput = 8,  // slot, output row
  kOpEnd = 9,
};
inline constexpr std::uint32_t kOpBits = 4;
inline constexpr std::uint32_t kOpMask = (1u << kOpBits) - 1;
inline constexpr std::uint32_t kMaxRun = 0xffffffffu >> kOpBits;
inline constexpr int kOpArity[] = {3, 2, 2, 1, 1, 2, 3, 2, 2, 0};

// Bytes between consecutive ANDs' r in a full chunk's message region (kChunkInstances / 8).
inline constexpr std::size_t kMsgStride = 256;

struct TileArgs {
  const std::uint32_t* code;
  // Slot s of this tile: x at state + s * 2 * W, a at state + s * 2 * W + W (W = tile words).
  std::uint64_t* state;
  // Input matrix, already advanced to the tile's first word; row r at in_x + r * in_stride.
  const std::uint64_t* in_x;
  const std::uint64_t* in_a;
  std::size_t in_stride;
  std::size_t in_words;  // words of the tile that exist in the input matrix (<= W)
  std::uint64_t* out_x;
  std::uint64_t* out_a;
  std::size_t out_stride;
  std::size_t out_words;
  // Message regions advanced to the tile; AND k at byte k * msg_stride (kMsgStride, or the
  // bytes of a partial chunk whose tiles it fills exactly).
  std::size_t msg_stride;
  std::uint8_t* and_msg;          // this layer: holds alpha, receives r
  const std::uint8_t* fin_out;    // previous layer: r (ours)
  const std::uint8_t* fin_in;     // previous layer: r_prev (received)
  // Null, or where the AND local phase records its operands' components (x ^ a, then a, of
  // in0, then of in1: c_{i-1} and c_i), in the layout of and_msg (AND k at byte k * msg_stride).
  std::uint8_t* record[4];
};

using TileKernel = void (*)(const TileArgs& args);

struct KernelInfo {
  TileKernel run;
  std::size_t tile_words;  // W: words per component per slot in one tile; divides 32
};

// Each ISA's kernel at a tile width of 8, 16 or its full width (the MPC_RSS3_*_TILE above): a
// batch smaller than a chunk runs the narrowest tile that holds it, so that its lanes do no work
// for instances it does not have.
KernelInfo portable_kernel(std::size_t tile_words = MPC_RSS3_PORTABLE_TILE);
// One word per slot, for batches of at most 64 instances (a Kerberos job is one): the wide
// kernels would compute 32 words per slot of which one is used, and their per-layer cost
// is the whole of a deep single-instance circuit's CPU time.
KernelInfo narrow_kernel();
KernelInfo avx2_kernel(std::size_t tile_words = MPC_RSS3_AVX2_TILE);      // only call when the CPU has AVX2
KernelInfo avx512_kernel(std::size_t tile_words = MPC_RSS3_AVX512_TILE);  // only call when the CPU has AVX-512 F/VL/BW

}  // namespace mpc::rss3::detail
