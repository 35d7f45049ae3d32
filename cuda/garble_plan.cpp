// cuda/garble_plan.cpp: see garble_plan.hpp.
#include "cuda/garble_plan.hpp"

#include <limits>
#include <string>

#include "common/error.hpp"
#include "cuda/garble_ops.hpp"

namespace mpc::cuda::detail {
namespace {

[[noreturn]] void invalid(const std::string& what) { throw Error(Component::Protocol, "garbled circuit: " + what); }

std::size_t checked_mul(std::size_t a, std::size_t b) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) invalid("batch too large for the GPU");
  return a * b;
}

std::size_t checked_add(std::size_t a, std::size_t b) {
  if (b > std::numeric_limits<std::size_t>::max() - a) invalid("batch too large for the GPU");
  return a + b;
}

std::size_t align_up(std::size_t v) {
  if (v > std::numeric_limits<std::size_t>::max() - 255) invalid("batch too large for the GPU");
  return (v + 255) / 256 * 256;
}

}  // namespace

GarblePlan build_garble_plan(const circuits::Program& program) {
  GarblePlan plan;
  plan.num_inputs = program.num_inputs;
  plan.num_outputs = program.num_outputs;
  plan.num_slots = program.num_slots;
  if (program.output_slots.size() != program.num_outputs) invalid("program outputs inconsistent");
  auto slot = [&](std::uint32_t s) {
    if (s >= program.num_slots) invalid("slot " + std::to_string(s) + " out of range");
    return s;
  };
  for (const circuits::Layer& layer : program.layers) {
    GarbleLayer range;
    range.first_gate = plan.and_gates;
    range.linear_begin = static_cast<std::uint32_t>(plan.ops.size());
    for (const circuits::LinearOp& op : layer.linear) {
      switch (op.kind) {
        case circuits::OpKind::Xor: plan.ops.push_back({kGcXor, slot(op.out), slot(op.in0), slot(op.in1)}); break;
        case circuits::OpKind::Inv: plan.ops.push_back({kGcInv, slot(op.out), slot(op.in0), 0}); break;
        case circuits::OpKind::Copy: plan.ops.push_back({kGcCopy, slot(op.out), slot(op.in0), 0}); break;
        case circuits::OpKind::Const: plan.ops.push_back({kGcConst, slot(op.out), op.in0, 0}); break;
        case circuits::OpKind::LoadInput:
          if (op.in0 >= program.num_inputs) invalid("input row " + std::to_string(op.in0) + " out of range");
          plan.ops.push_back({kGcLoad, slot(op.out), op.in0, 0});
          break;
        default: invalid("unknown linear op kind " + std::to_string(static_cast<int>(op.kind)));
      }
    }
    range.linear_end = range.and_begin = static_cast<std::uint32_t>(plan.ops.size());
    for (const circuits::AndOp& g : layer.ands) plan.ops.push_back({kGcAnd, slot(g.out), slot(g.in0), slot(g.in1)});
    range.and_end = static_cast<std::uint32_t>(plan.ops.size());
    plan.and_gates += layer.ands.size();
    plan.layers.push_back(range);
    if (plan.ops.size() > std::numeric_limits<std::uint32_t>::max() / 2) invalid("program too large");
  }
  if (plan.and_gates != program.and_gates)
    invalid("program counts " + std::to_string(program.and_gates) + " AND gates, its layers " +
            std::to_string(plan.and_gates));
  plan.outputs_begin = static_cast<std::uint32_t>(plan.ops.size());
  for (std::uint32_t j = 0; j < program.num_outputs; ++j) plan.ops.push_back({kGcOutput, slot(program.output_slots[j]), j, 0});
  plan.outputs_end = static_cast<std::uint32_t>(plan.ops.size());
  return plan;
}

GarbleLayout garble_layout(const GarblePlan& plan, std::uint64_t chunk_instances) {
  GarbleLayout layout;
  const std::size_t n = static_cast<std::size_t>(chunk_instances);
  const std::size_t label = sizeof(Label);
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t offset = at;
    at = align_up(checked_add(at, bytes));
    return offset;
  };
  layout.slots = take(checked_mul(checked_mul(plan.num_slots, n), label));
  layout.inputs = take(checked_mul(checked_mul(plan.num_inputs, n), label));
  layout.tables = take(checked_mul(checked_mul(2 * plan.and_gates, n), label));
  layout.bits = take(checked_mul(plan.num_outputs, n));
  layout.labels = take(checked_mul(checked_mul(plan.num_outputs, n), label));
  layout.total = at;
  return layout;
}

}  // namespace mpc::cuda::detail
