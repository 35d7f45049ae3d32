// cuda/layer_ops.hpp: one op of a pass applied to one 64-instance word: the device
// primitive of the bitsliced layer evaluation (Araki et al., CCS 2016, eprint 2016/768).
// XOR, NOT and copies are local; the AND local phase is r = x0&x1 ^ a0&a1 ^ alpha,
// written over alpha in the outgoing message; the finish phase after receipt is
// (x, a) = (r ^ r_prev, r).
//
// A pass (see device_plan.hpp) is: the finish phase of layer L-1, the linear ops of L,
// the local phase of L's ANDs, and after the last layer the copy of the outputs; its ops
// are grouped in levels of mutually independent ops. The kernel gives one chunk (32
// words) to a block, one word to a lane, and the ops of a level to the block's warps in
// turn, with a barrier between levels. The CPU tests run the same function over the same
// levels (tests/unit/cuda/emulation_test.cpp).
//
// Host and device: no CUDA headers, no C++20 (see device_helpers.hpp).
#pragma once

#include <cstdint>

#include "cuda/device_helpers.hpp"

namespace mpc::cuda::detail {

enum DeviceOpcode : std::uint32_t {
  kDevXor = 0,     // a = out, b = in0, c = in1
  kDevInv = 1,     // a = out, b = in0            x = x0, a = ~a0
  kDevCopy = 2,    // a = out, b = in0
  kDevConst0 = 3,  // a = out                     x = 0, a = 0
  kDevConst1 = 4,  // a = out                     x = 0, a = ~0
  kDevLoad = 5,    // a = out, b = input row
  kDevAnd = 6,     // a = k, b = in0, c = in1     r[k] = alpha[k] ^ x0&x1 ^ a0&a1
  kDevFinish = 7,  // a = out, b = k              x = r[k] ^ r_prev[k], a = r[k] (previous layer)
  kDevOutput = 8,  // a = slot, b = output row
  kDevOpcodes = 9,
};

struct DeviceOp {
  std::uint32_t code;
  std::uint32_t a;
  std::uint32_t b;
  std::uint32_t c;
};
static_assert(sizeof(DeviceOp) == 16, "one 16-byte load per op");

// Everything one pass reads and writes; passed to the kernel by value.
struct PassArgs {
  const DeviceOp* ops;                // the pass's ops, level by level
  const std::uint32_t* level_bounds;  // level L is ops[level_bounds[L], level_bounds[L + 1])
  std::uint32_t levels;
  std::uint32_t ands;       // ANDs of this layer (0 in the last pass)
  std::uint32_t prev_ands;  // ANDs of the previous layer (0 in the first pass)
  std::uint64_t instances;
  std::uint64_t pitch;  // words per row of state, inputs and outputs: padded_words(instances)
  std::uint64_t* state;
  const std::uint64_t* in_x;  // row r at in_x + r * pitch
  const std::uint64_t* in_a;
  std::uint64_t* out_x;
  std::uint64_t* out_a;
  std::uint8_t* and_msg;        // this layer's message: holds alpha, receives r
  const std::uint8_t* fin_out;  // previous layer: our r
  const std::uint8_t* fin_in;   // previous layer: r of party i-1
};

// Where one lane works: word `word`, lane j of chunk `chunk`.
struct LaneView {
  std::uint64_t word;
  std::uint64_t chunk;
  std::uint32_t j;
  std::uint32_t chunk_n;      // instances in the chunk
  std::uint32_t chunk_bytes;  // bytes of one AND's r for the chunk
};

MPC_HD LaneView lane_view(const PassArgs& p, std::uint64_t chunk, std::uint32_t j) {
  LaneView v;
  v.word = chunk * kChunkWords + j;
  v.chunk = chunk;
  v.j = j;
  v.chunk_n = chunk_instances(p.instances, chunk);
  v.chunk_bytes = (v.chunk_n + 7) / 8;
  return v;
}

MPC_HD void apply_op(const PassArgs& p, const LaneView& v, const DeviceOp& op) {
  std::uint64_t* const st = p.state;
  const std::uint64_t pitch = p.pitch;
  const std::uint64_t w = v.word;
  switch (op.code) {
    case kDevXor: {
      const std::uint64_t x = st[state_index(op.b, 0, pitch, w)] ^ st[state_index(op.c, 0, pitch, w)];
      const std::uint64_t a = st[state_index(op.b, 1, pitch, w)] ^ st[state_index(op.c, 1, pitch, w)];
      st[state_index(op.a, 0, pitch, w)] = x;
      st[state_index(op.a, 1, pitch, w)] = a;
      break;
    }
    case kDevInv: {
      const std::uint64_t x = st[state_index(op.b, 0, pitch, w)];
      const std::uint64_t a = ~st[state_index(op.b, 1, pitch, w)];
      st[state_index(op.a, 0, pitch, w)] = x;
      st[state_index(op.a, 1, pitch, w)] = a;
      break;
    }
    case kDevCopy: {
      const std::uint64_t x = st[state_index(op.b, 0, pitch, w)];
      const std::uint64_t a = st[state_index(op.b, 1, pitch, w)];
      st[state_index(op.a, 0, pitch, w)] = x;
      st[state_index(op.a, 1, pitch, w)] = a;
      break;
    }
    case kDevConst0:
    case kDevConst1:
      st[state_index(op.a, 0, pitch, w)] = 0;
      st[state_index(op.a, 1, pitch, w)] = op.code == kDevConst1 ? ~std::uint64_t{0} : 0;
      break;
    case kDevLoad:
      st[state_index(op.a, 0, pitch, w)] = p.in_x[static_cast<std::uint64_t>(op.b) * pitch + w];
      st[state_index(op.a, 1, pitch, w)] = p.in_a[static_cast<std::uint64_t>(op.b) * pitch + w];
      break;
    case kDevAnd: {
      std::uint8_t* region = p.and_msg + r_offset(p.instances, v.chunk, p.ands, op.a);
      const std::uint64_t x0 = st[state_index(op.b, 0, pitch, w)], a0 = st[state_index(op.b, 1, pitch, w)];
      const std::uint64_t x1 = st[state_index(op.c, 0, pitch, w)], a1 = st[state_index(op.c, 1, pitch, w)];
      const std::uint64_t r = load_r_word(region, v.chunk_bytes, v.j) ^ (x0 & x1) ^ (a0 & a1);
      store_r_word(region, v.chunk_bytes, v.chunk_n, v.j, r);
      break;
    }
    case kDevFinish: {
      const std::uint64_t at = r_offset(p.instances, v.chunk, p.prev_ands, op.b);
      const std::uint64_t mine = load_r_word(p.fin_out + at, v.chunk_bytes, v.j);
      const std::uint64_t theirs = load_r_word(p.fin_in + at, v.chunk_bytes, v.j);
      st[state_index(op.a, 0, pitch, w)] = mine ^ theirs;
      st[state_index(op.a, 1, pitch, w)] = mine;
      break;
    }
    case kDevOutput:
      p.out_x[static_cast<std::uint64_t>(op.b) * pitch + w] = st[state_index(op.a, 0, pitch, w)];
      p.out_a[static_cast<std::uint64_t>(op.b) * pitch + w] = st[state_index(op.a, 1, pitch, w)];
      break;
    default:
      break;  // never: plans hold only the opcodes above
  }
}

}  // namespace mpc::cuda::detail
