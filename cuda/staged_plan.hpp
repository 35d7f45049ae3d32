// cuda/staged_plan.hpp: the passes of a program with their values in shared memory, for
// the staged kernel of the three-party evaluation (Araki et al., CCS 2016, eprint
// 2016/768; staged_ops.hpp says what one op does).
//
// Per pass (the passes of device_plan.hpp, same ops in program terms):
// - values in SSA form: every write makes a value; a read of a slot not yet written in the
//   pass reads its entry value, loaded once from its home (LoadState);
// - a value later passes read (liveness over the passes) is stored to its home by the op
//   that computes it; a value neither read in the pass nor stored is dead and its op is
//   dropped (it changes no message and no output);
// - levels "as soon as possible" over the values, with every LoadState in level 0 and a
//   store to a home in a level after that home's LoadState; within a level ops are sorted
//   by opcode (warps that take several ops diverge less);
// - shared registers by interval colouring over the levels: a value holds its register
//   from the level that computes it to its last reader's level, and a register passes to
//   a value computed in a later level only. The registers needed are the most values live
//   across one level boundary.
// Device memory then moves, per pass, each entry value once, each stored value once, the
// messages and alpha, and the inputs and outputs: about a third of what the device-memory
// kernel (layer_ops.hpp) moves for AES (cuda_bench --mode plan prints both).
//
// Plain host C++: the evaluator uploads the arrays once per program, the CPU tests emulate
// the kernel over them.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda/layer_ops.hpp"

namespace mpc::cuda::detail {

// Homes and registers are 16-bit fields of an op; larger programs use the device-memory kernel.
inline constexpr std::uint32_t kStagedMaxIndex = 0xffffu;

struct StagedPassPlan {
  std::uint32_t first_level = 0;  // into StagedPlan::level_bounds
  std::uint32_t levels = 0;
  std::uint32_t regs = 0;  // shared registers this pass needs
  std::uint32_t ands = 0;
  std::uint32_t prev_ands = 0;
  // Device-memory traffic of the pass per word (bytes), as the op counts give it.
  std::uint64_t bytes_per_word = 0;
};

struct StagedPlan {
  bool usable = false;  // false: some home or register does not fit in 16 bits
  std::uint32_t max_regs = 0;
  std::vector<DeviceOp> ops;  // staged opcodes and flags (staged_ops.hpp)
  std::vector<std::uint32_t> level_bounds;
  std::vector<StagedPassPlan> passes;
  std::uint64_t bytes_per_word() const;
};

// `passes[p]`: the ops of pass p in program order with program slots (DeviceOp with the
// device-memory opcodes of layer_ops.hpp, before any renaming), from build_device_plan;
// `num_slots`: the program's. The program must be valid (build_device_plan checks it).
StagedPlan build_staged_plan(const std::vector<std::vector<DeviceOp>>& passes, std::uint32_t num_slots);

}  // namespace mpc::cuda::detail
