// Compiles a circuit into layers for round-efficient secure evaluation.
//
// Layering follows the evaluation model of Araki, Furukawa, Lindell, Nof, Ohara,
// "High-Throughput Semi-Honest Secure Three-Party Computation with an Honest Majority",
// CCS 2016: linear gates are local, all ANDs of one AND-depth share one exchange. So
// layer d holds the linear gates whose AND-depth is d, then the ANDs producing depth
// d + 1. Inputs and constants depend on nothing and are loaded in the layer of their
// first use, right before it.
//
// Slots are assigned by liveness in execution order: a value's slot is released at its
// last read (outputs never are), a linear op may reuse the slot of an operand it reads
// last, and AND outputs take only slots nobody touched in their layer (the
// "no aliasing with this layer's reads" guarantee), preferring recently freed slots so
// that hot data stays in cache. Gates nothing depends on are dropped. Every step is
// deterministic.
#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "circuits/program.hpp"

namespace mpc::circuits {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kLiveForever = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kReleased = kLiveForever - 1;

bool reads_in0(GateKind kind) { return kind != GateKind::Const; }
bool reads_in1(GateKind kind) { return kind == GateKind::Xor || kind == GateKind::And; }

// An op still in wire terms: for LoadInput in0 is the input row, for Const the value.
struct WireOp {
  OpKind kind;
  std::uint32_t out;
  std::uint32_t in0;
  std::uint32_t in1;
};

struct WireLayer {
  std::vector<WireOp> linear;
  std::vector<Gate> ands;
};

// Execution time of an operand read: linear op i of layer l, or the AND phase of layer l.
std::uint64_t linear_time(std::size_t layer, std::size_t index) { return (std::uint64_t{layer} << 33) | index; }
std::uint64_t and_phase_time(std::size_t layer) { return (std::uint64_t{layer} << 33) | (std::uint64_t{1} << 32); }

OpKind linear_kind(GateKind kind) {
  switch (kind) {
    case GateKind::Xor: return OpKind::Xor;
    case GateKind::Inv: return OpKind::Inv;
    case GateKind::Copy: return OpKind::Copy;
    default: return OpKind::Const;
  }
}

class Compiler {
 public:
  explicit Compiler(const Circuit& circuit)
      : circuit_(circuit), inputs_(circuit.total_inputs()), first_output_(circuit.first_output_wire()) {}

  Program run() {
    mark_needed();
    compute_depths();
    place_ops();
    compute_last_uses();
    return assign_slots();
  }

 private:
  bool is_output(std::uint32_t wire) const { return wire >= first_output_; }
  bool is_source(std::uint32_t wire) const { return wire < inputs_ || constant_value_[wire] != kNone; }

  void mark_needed() {
    needed_.assign(circuit_.num_wires, false);
    constant_value_.assign(circuit_.num_wires, kNone);
    for (std::uint32_t wire = first_output_; wire < circuit_.num_wires; ++wire) needed_[wire] = true;
    for (auto gate = circuit_.gates.rbegin(); gate != circuit_.gates.rend(); ++gate) {
      if (gate->kind == GateKind::Const) constant_value_[gate->out] = gate->in0;
      if (!needed_[gate->out]) continue;
      if (reads_in0(gate->kind)) needed_[gate->in0] = true;
      if (reads_in1(gate->kind)) needed_[gate->in1] = true;
    }
  }

  void compute_depths() {
    depth_.assign(circuit_.num_wires, 0);
    for (const Gate& gate : circuit_.gates) {
      std::uint32_t depth = 0;
      if (reads_in0(gate.kind)) depth = depth_[gate.in0];
      if (reads_in1(gate.kind)) depth = std::max(depth, depth_[gate.in1]);
      depth_[gate.out] = gate.kind == GateKind::And ? depth + 1 : depth;
      if (needed_[gate.out]) max_depth_ = std::max(max_depth_, depth_[gate.out]);
    }
  }

  std::uint32_t layer_of(const Gate& gate) const {
    return gate.kind == GateKind::And ? depth_[gate.out] - 1 : depth_[gate.out];
  }

  void place_ops() {
    // A source is loaded in the earliest layer that reads it; outputs count as read last.
    std::vector<std::uint32_t> first_use(circuit_.num_wires, kNone);
    auto note_use = [&](std::uint32_t wire, std::uint32_t layer) {
      if (is_source(wire)) first_use[wire] = std::min(first_use[wire], layer);
    };
    for (const Gate& gate : circuit_.gates) {
      if (!needed_[gate.out] || gate.kind == GateKind::Const) continue;
      if (reads_in0(gate.kind)) note_use(gate.in0, layer_of(gate));
      if (reads_in1(gate.kind)) note_use(gate.in1, layer_of(gate));
    }
    for (std::uint32_t wire = first_output_; wire < circuit_.num_wires; ++wire) note_use(wire, max_depth_);

    layers_.assign(std::size_t{max_depth_} + 1, WireLayer{});
    std::vector<bool> loaded(circuit_.num_wires, false);
    auto load = [&](std::uint32_t wire, std::uint32_t layer) {
      if (!is_source(wire) || loaded[wire] || first_use[wire] != layer) return;
      loaded[wire] = true;
      if (wire < inputs_) {
        layers_[layer].linear.push_back(WireOp{OpKind::LoadInput, wire, wire, 0});
      } else {
        layers_[layer].linear.push_back(WireOp{OpKind::Const, wire, constant_value_[wire], 0});
      }
    };
    for (const Gate& gate : circuit_.gates) {
      if (!needed_[gate.out] || gate.kind == GateKind::Const) continue;
      const std::uint32_t layer = layer_of(gate);
      if (reads_in0(gate.kind)) load(gate.in0, layer);
      if (reads_in1(gate.kind)) load(gate.in1, layer);
      if (gate.kind == GateKind::And) {
        layers_[layer].ands.push_back(gate);
      } else {
        layers_[layer].linear.push_back(WireOp{linear_kind(gate.kind), gate.out, gate.in0, gate.in1});
      }
    }
    for (std::uint32_t wire = first_output_; wire < circuit_.num_wires; ++wire) load(wire, max_depth_);
  }

  static bool op_reads_in0(OpKind kind) { return kind == OpKind::Xor || kind == OpKind::Inv || kind == OpKind::Copy; }
  static bool op_reads_in1(OpKind kind) { return kind == OpKind::Xor; }

  void compute_last_uses() {
    last_use_.assign(circuit_.num_wires, 0);
    for (std::size_t layer = 0; layer < layers_.size(); ++layer) {
      const auto& ops = layers_[layer].linear;
      for (std::size_t index = 0; index < ops.size(); ++index) {
        if (op_reads_in0(ops[index].kind)) last_use_[ops[index].in0] = linear_time(layer, index);
        if (op_reads_in1(ops[index].kind)) last_use_[ops[index].in1] = linear_time(layer, index);
      }
      for (const Gate& gate : layers_[layer].ands) {
        last_use_[gate.in0] = and_phase_time(layer);
        last_use_[gate.in1] = and_phase_time(layer);
      }
    }
    for (std::uint32_t wire = first_output_; wire < circuit_.num_wires; ++wire) last_use_[wire] = kLiveForever;
  }

  // Releases the wire's slot if this read is its last; returns the slot if released.
  std::optional<std::uint32_t> release_if_last(std::uint32_t wire, std::uint64_t time) {
    if (last_use_[wire] != time) return std::nullopt;
    last_use_[wire] = kReleased;
    return slot_of_[wire];
  }

  std::uint32_t take(std::vector<std::uint32_t>& pool) {
    if (pool.empty()) return next_slot_++;
    const std::uint32_t slot = pool.back();
    pool.pop_back();
    return slot;
  }

  Program assign_slots() {
    Program program;
    program.num_inputs = inputs_;
    program.num_outputs = circuit_.total_outputs();
    program.layers.resize(layers_.size());
    slot_of_.assign(circuit_.num_wires, kNone);
    std::vector<std::uint32_t> clean;  // free since before this layer: safe for AND outputs
    std::vector<std::uint32_t> dirty;  // freed during this layer: linear ops only

    for (std::size_t layer = 0; layer < layers_.size(); ++layer) {
      dirty.clear();
      Layer& out = program.layers[layer];
      const auto& ops = layers_[layer].linear;
      out.linear.reserve(ops.size());
      for (std::size_t index = 0; index < ops.size(); ++index) {
        const WireOp& op = ops[index];
        const std::uint64_t time = linear_time(layer, index);
        LinearOp slot_op{op.kind, 0, op.in0, op.in1};
        std::optional<std::uint32_t> in_place;
        if (op_reads_in0(op.kind)) {
          slot_op.in0 = slot_of_[op.in0];
          in_place = release_if_last(op.in0, time);
        }
        if (op_reads_in1(op.kind)) {
          slot_op.in1 = slot_of_[op.in1];
          if (auto released = release_if_last(op.in1, time)) {
            if (in_place) {
              dirty.push_back(*released);
            } else {
              in_place = released;
            }
          }
        } else {
          slot_op.in1 = 0;
        }
        slot_op.out = in_place ? *in_place : (!dirty.empty() ? take(dirty) : take(clean));
        slot_of_[op.out] = slot_op.out;
        out.linear.push_back(slot_op);
      }

      const auto& ands = layers_[layer].ands;
      out.ands.reserve(ands.size());
      for (const Gate& gate : ands) out.ands.push_back(AndOp{take(clean), slot_of_[gate.in0], slot_of_[gate.in1]});
      // Outputs become visible only after the whole layer has read its operands.
      for (std::size_t index = 0; index < ands.size(); ++index) slot_of_[ands[index].out] = out.ands[index].out;
      const std::uint64_t time = and_phase_time(layer);
      for (const Gate& gate : ands) {
        if (auto released = release_if_last(gate.in0, time)) dirty.push_back(*released);
        if (auto released = release_if_last(gate.in1, time)) dirty.push_back(*released);
      }
      clean.insert(clean.end(), dirty.begin(), dirty.end());
      program.and_gates += ands.size();
    }

    program.and_depth = max_depth_;
    program.num_slots = next_slot_;
    program.output_slots.reserve(program.num_outputs);
    for (std::uint32_t wire = first_output_; wire < circuit_.num_wires; ++wire) {
      program.output_slots.push_back(slot_of_[wire]);
    }
    return program;
  }

  const Circuit& circuit_;
  const std::uint32_t inputs_;
  const std::uint32_t first_output_;
  std::vector<bool> needed_;
  std::vector<std::uint32_t> constant_value_;  // per wire: the value of a Const gate, or kNone
  std::vector<std::uint32_t> depth_;
  std::uint32_t max_depth_ = 0;
  std::vector<WireLayer> layers_;
  std::vector<std::uint64_t> last_use_;
  std::vector<std::uint32_t> slot_of_;
  std::uint32_t next_slot_ = 0;
};

}  // namespace

Program compile(const Circuit& circuit) {
  validate(circuit);
  return Compiler(circuit).run();
}

}  // namespace mpc::circuits
