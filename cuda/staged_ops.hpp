// cuda/staged_ops.hpp: one op of a "staged" pass applied to one 64-instance word: the
// device primitive of the shared-memory kernel of the three-party evaluation (Araki et
// al., CCS 2016, eprint 2016/768; layer_ops.hpp has the same algebra on device memory).
//
// A staged pass keeps its values in a block's shared memory: each value the pass computes
// and reads again lives in a shared-memory register (staged_plan.hpp allocates them per
// pass), so device memory sees only what must cross the pass boundary: the values the
// pass reads from earlier passes (LoadState, once each), the values later passes read
// (stored once, fused into the op that computes them), the input rows, alpha, r and the
// incoming messages, and the outputs.
//
// Shared memory of a block of W words: register g, component c (x = 0, a = 1), word w of
// the block at smem[(2 g + c) * W + w]. Device state keeps the program's slots ("homes"):
// home s at state[(2 s + c) * pitch + word], as in layer_ops.hpp.
//
// Host and device: no CUDA headers, no C++20 (see device_helpers.hpp).
#pragma once

#include <cstdint>

#include "cuda/device_helpers.hpp"
#include "cuda/layer_ops.hpp"

namespace mpc::cuda::detail {

enum StagedOpcode : std::uint32_t {
  kStLoadState = 0,  // value = state home b
  kStLoadInput = 1,  // value = input row b
  kStFinish = 2,     // value = (r[b] ^ r_prev[b], r[b]) of the previous layer
  kStConst0 = 3,     // value = (0, 0)
  kStConst1 = 4,     // value = (0, ~0)
  kStXor = 5,        // value = reg b ^ reg c
  kStInv = 6,        // value = (x, ~a) of reg b
  kStCopy = 7,       // value = reg b
  kStAnd = 8,        // r[a] = alpha[a] ^ x_b & x_c ^ a_b & a_c   (no value)
  kStOutput = 9,     // output row a = reg b                        (no value)
  kStOpcodes = 10,
};

// Where an op's value goes (bits of DeviceOp::code above the opcode byte).
inline constexpr std::uint32_t kStKeep = 1u << 8;   // into shared register a & 0xffff
inline constexpr std::uint32_t kStStore = 1u << 9;  // into state home a >> 16
inline constexpr std::uint32_t kStOpcodeMask = 0xffu;

MPC_HD constexpr std::uint32_t staged_dest(std::uint32_t reg, std::uint32_t home) { return (home << 16) | reg; }

// Everything a staged pass reads and writes; passed to the kernel by value.
struct StagedArgs {
  const DeviceOp* ops;                // staged ops (code = opcode | flags), level by level
  const std::uint32_t* level_bounds;  // level L is ops[level_bounds[L], level_bounds[L + 1])
  std::uint32_t levels;
  std::uint32_t ands;
  std::uint32_t prev_ands;
  std::uint64_t instances;
  std::uint64_t pitch;
  std::uint64_t* state;  // homes: the program's slots
  const std::uint64_t* in_x;
  const std::uint64_t* in_a;
  std::uint64_t* out_x;
  std::uint64_t* out_a;
  std::uint8_t* and_msg;
  const std::uint8_t* fin_out;
  const std::uint8_t* fin_in;
};

MPC_HD LaneView staged_lane_view(const StagedArgs& p, std::uint64_t word) {
  LaneView v;
  v.word = word;
  v.chunk = chunk_of_word(word);
  v.j = lane_of_word(word);
  v.chunk_n = chunk_instances(p.instances, v.chunk);
  v.chunk_bytes = (v.chunk_n + 7) / 8;
  return v;
}

// One op on word `local` (< words) of a block whose shared registers are `smem`.
MPC_HD void apply_staged_op(const StagedArgs& p, const LaneView& v, std::uint64_t* smem, std::uint32_t words,
                            std::uint32_t local, const DeviceOp& op) {
  const std::uint32_t code = op.code & kStOpcodeMask;
  std::uint64_t* const st = p.state;
  const std::uint64_t pitch = p.pitch;
  const std::uint64_t w = v.word;
  auto reg = [&](std::uint32_t g, std::uint32_t c) -> std::uint64_t& {
    return smem[(2 * static_cast<std::uint64_t>(g) + c) * words + local];
  };
  std::uint64_t x = 0, a = 0;
  switch (code) {
    case kStLoadState:
      x = st[state_index(op.b, 0, pitch, w)];
      a = st[state_index(op.b, 1, pitch, w)];
      break;
    case kStLoadInput:
      x = p.in_x[static_cast<std::uint64_t>(op.b) * pitch + w];
      a = p.in_a[static_cast<std::uint64_t>(op.b) * pitch + w];
      break;
    case kStFinish: {
      const std::uint64_t at = r_offset(p.instances, v.chunk, p.prev_ands, op.b);
      const std::uint64_t mine = load_r_word(p.fin_out + at, v.chunk_bytes, v.j);
      x = mine ^ load_r_word(p.fin_in + at, v.chunk_bytes, v.j);
      a = mine;
      break;
    }
    case kStConst0: break;
    case kStConst1: a = ~std::uint64_t{0}; break;
    case kStXor:
      x = reg(op.b, 0) ^ reg(op.c, 0);
      a = reg(op.b, 1) ^ reg(op.c, 1);
      break;
    case kStInv:
      x = reg(op.b, 0);
      a = ~reg(op.b, 1);
      break;
    case kStCopy:
      x = reg(op.b, 0);
      a = reg(op.b, 1);
      break;
    case kStAnd: {
      std::uint8_t* region = p.and_msg + r_offset(p.instances, v.chunk, p.ands, op.a);
      const std::uint64_t r =
          load_r_word(region, v.chunk_bytes, v.j) ^ (reg(op.b, 0) & reg(op.c, 0)) ^ (reg(op.b, 1) & reg(op.c, 1));
      store_r_word(region, v.chunk_bytes, v.chunk_n, v.j, r);
      return;
    }
    case kStOutput:
      p.out_x[static_cast<std::uint64_t>(op.a) * pitch + w] = reg(op.b, 0);
      p.out_a[static_cast<std::uint64_t>(op.a) * pitch + w] = reg(op.b, 1);
      return;
    default:
      return;  // never: plans hold only the opcodes above
  }
  if ((op.code & kStKeep) != 0) {
    reg(op.a & 0xffffu, 0) = x;
    reg(op.a & 0xffffu, 1) = a;
  }
  if ((op.code & kStStore) != 0) {
    st[state_index(op.a >> 16, 0, pitch, w)] = x;
    st[state_index(op.a >> 16, 1, pitch, w)] = a;
  }
}

}  // namespace mpc::cuda::detail
