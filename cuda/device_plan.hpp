// cuda/device_plan.hpp: a circuits::Program translated for the GPU evaluator (Araki et
// al., CCS 2016, eprint 2016/768; see layer_ops.hpp for what one op does).
//
// A plan has one pass per layer (plus one when the last layer has ANDs): pass p runs the
// finish phase of layer p-1, the linear ops of layer p, the local phase of its ANDs and,
// in the last pass, the copy of the outputs; exactly the passes of the CPU evaluator.
// Within a pass, ops are scheduled "as soon as possible" into levels: an op goes one
// level after every earlier op it depends on (it reads a slot they write, writes a slot
// they read, or writes a slot they write), so the ops of one level may run in any order
// or at once; their order inside a level is program order. Ops address device slots:
// the program's slots renamed where a write would otherwise wait for earlier readers or
// writers of its slot (the circuit compiler reuses slots tightly; renaming removes those
// false dependencies within the budget of kSlotBudgetFactor * num_slots + kSlotBudgetExtra
// device slots).
//
// Plain host C++ (built with or without CUDA): the GPU evaluator uploads the arrays once
// per program, the CPU tests emulate the kernels over them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "circuits/program.hpp"
#include "cuda/layer_ops.hpp"
#include "cuda/staged_plan.hpp"

namespace mpc::cuda::detail {

// Most ANDs in one layer (the same bound as the CPU evaluator, so both accept the same programs).
inline constexpr std::uint32_t kMaxLayerAnds = 0x0fffffffu;
// Device slots available for renaming: kSlotBudgetFactor * program slots + kSlotBudgetExtra.
inline constexpr std::uint32_t kSlotBudgetFactor = 2;
inline constexpr std::uint32_t kSlotBudgetExtra = 64;

struct PassPlan {
  std::uint32_t first_level = 0;  // into DevicePlan::level_bounds
  std::uint32_t levels = 0;
  std::uint32_t ands = 0;       // ANDs of layer p (the message this pass writes)
  std::uint32_t prev_ands = 0;  // ANDs of layer p-1 (the messages this pass finishes)
};

struct DevicePlan {
  std::uint32_t num_inputs = 0;
  std::uint32_t num_outputs = 0;
  std::uint32_t num_slots = 0;         // the program's
  std::uint32_t num_device_slots = 0;  // rows of device state (>= num_slots, see renaming above)
  std::uint32_t max_ands = 0;
  std::vector<DeviceOp> ops;                // every pass, level by level
  std::vector<std::uint32_t> level_bounds;  // total levels + 1 entries
  std::vector<PassPlan> passes;
  std::vector<std::uint32_t> signature;  // the program it was built from, flattened
  // The same passes with their values in shared memory (staged_plan.hpp).
  StagedPlan staged;
  // Input rows grouped by the first pass that loads them (rows no pass loads are left
  // out): the evaluator uploads a pass's rows while earlier passes run.
  std::vector<std::uint32_t> input_rows;      // row numbers, pass by pass, ascending within a pass
  std::vector<std::uint32_t> input_row_bounds;  // pass p's rows: [bounds[p], bounds[p + 1])
};

// Validates `program` (every index in range, nothing read before it is written, constants
// 0 or 1, known op kinds, at most kMaxLayerAnds ANDs per layer; the CPU evaluator's rules)
// and schedules it. Throws FormatError(Component::Protocol) "invalid program: ...".
DevicePlan build_device_plan(const circuits::Program& program);

// True when `plan` was built from a program equal to `program` (compared by content).
bool plan_matches(const circuits::Program& program, const DevicePlan& plan);

// Device memory of one evaluation, carved out of one allocation (offsets 256-byte aligned).
struct WorkspaceLayout {
  std::uint64_t pitch = 0;  // words per row: padded_words(instances)
  std::size_t state = 0;
  std::size_t in_x = 0, in_a = 0;
  std::size_t out_x = 0, out_a = 0;
  // Outgoing messages rotate over three buffers, so that alpha of layer p + 1 can be made
  // while pass p runs (pass p reads r of layer p - 1 and writes r of layer p); incoming
  // ones over two.
  std::size_t msg_out[3] = {0, 0, 0};
  std::size_t msg_in[2] = {0, 0};
  std::size_t message_capacity = 0;  // bytes of each message buffer: alpha_bytes(largest message)
  std::size_t total = 0;
};

// The sizing call: what an evaluation of `plan` over `instances` needs, with its state in
// num_device_slots rows (the device-memory kernel) or in num_slots home rows (the staged
// kernel). Pure arithmetic, never allocates; throws Error(Component::Protocol) when the
// sizes overflow.
WorkspaceLayout workspace_layout(const DevicePlan& plan, std::uint64_t instances, bool staged = false);

// Ops of each kind in a plan, and the device-memory bytes they move per 64-instance word
// (every state access counted as a trip to device memory: no cache reuse assumed).
struct TrafficCount {
  std::uint64_t ops[kDevOpcodes] = {};
  std::uint64_t alpha_words = 0;  // words of alpha generated (one per AND per word)
  std::uint64_t bytes_per_word() const;
  std::uint64_t and_gates() const { return ops[kDevAnd]; }
};
TrafficCount count_traffic(const DevicePlan& plan);

// Bytes one op of kind `code` reads and writes in device memory per word (x and a
// components of 8 bytes each; r and alpha words of 8 bytes).
constexpr std::uint64_t op_bytes_per_word(std::uint32_t code) {
  switch (code) {
    case kDevXor: return 32 + 16;         // read two slots, write one
    case kDevInv:
    case kDevCopy: return 16 + 16;        // read one slot, write one
    case kDevConst0:
    case kDevConst1: return 16;           // write one slot
    case kDevLoad: return 16 + 16;        // read an input row pair, write one slot
    case kDevAnd: return 32 + 8 + 8;      // read two slots and alpha, write r
    case kDevFinish: return 8 + 8 + 16;   // read r and r_prev, write one slot
    case kDevOutput: return 16 + 16;      // read one slot, write an output row pair
    default: return 0;
  }
}

}  // namespace mpc::cuda::detail
