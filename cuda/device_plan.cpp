// cuda/device_plan.cpp: validation and level scheduling of a Program for the GPU
// evaluator (see device_plan.hpp).
#include "cuda/device_plan.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "common/error.hpp"

namespace mpc::cuda::detail {
namespace {

[[noreturn]] void invalid(const std::string& what) {
  throw FormatError(Component::Protocol, "invalid program: " + what);
}

std::size_t checked_mul(std::size_t a, std::size_t b) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a)
    throw Error(Component::Protocol, "batch too large for the GPU workspace");
  return a * b;
}

std::size_t checked_add(std::size_t a, std::size_t b) {
  if (b > std::numeric_limits<std::size_t>::max() - a)
    throw Error(Component::Protocol, "batch too large for the GPU workspace");
  return a + b;
}

std::size_t align_up(std::size_t v) { return checked_add(v, 255) / 256 * 256; }

std::string at_layer(std::size_t layer) { return " in layer " + std::to_string(layer); }

void validate_program(const circuits::Program& program) {
  const std::uint32_t slots = program.num_slots;
  if (program.output_slots.size() != program.num_outputs)
    invalid("output_slots has " + std::to_string(program.output_slots.size()) + " entries, num_outputs is " +
            std::to_string(program.num_outputs));
  std::vector<std::uint8_t> defined(slots, 0);
  auto read = [&](std::uint32_t slot, std::size_t layer, const char* what) {
    if (slot >= slots) invalid(std::string(what) + at_layer(layer) + " reads slot " + std::to_string(slot) + " (out of range)");
    if (defined[slot] == 0)
      invalid(std::string(what) + at_layer(layer) + " reads slot " + std::to_string(slot) + " before it is written");
  };
  auto write = [&](std::uint32_t slot, std::size_t layer, const char* what) {
    if (slot >= slots)
      invalid(std::string(what) + at_layer(layer) + " writes slot " + std::to_string(slot) + " (out of range)");
  };
  for (std::size_t l = 0; l < program.layers.size(); ++l) {
    const circuits::Layer& layer = program.layers[l];
    for (const circuits::LinearOp& op : layer.linear) {
      write(op.out, l, "linear op");
      switch (op.kind) {
        case circuits::OpKind::Xor:
          read(op.in0, l, "XOR");
          read(op.in1, l, "XOR");
          break;
        case circuits::OpKind::Inv: read(op.in0, l, "INV"); break;
        case circuits::OpKind::Copy: read(op.in0, l, "COPY"); break;
        case circuits::OpKind::Const:
          if (op.in0 > 1) invalid("constant " + std::to_string(op.in0) + " is not 0 or 1" + at_layer(l));
          break;
        case circuits::OpKind::LoadInput:
          if (op.in0 >= program.num_inputs)
            invalid("LoadInput of row " + std::to_string(op.in0) + " of " + std::to_string(program.num_inputs) +
                    at_layer(l));
          break;
        default: invalid("unknown linear op kind " + std::to_string(static_cast<int>(op.kind)) + at_layer(l));
      }
      defined[op.out] = 1;
    }
    if (layer.ands.size() > kMaxLayerAnds) invalid("too many ANDs" + at_layer(l));
    for (const circuits::AndOp& g : layer.ands) {
      read(g.in0, l, "AND");
      read(g.in1, l, "AND");
      write(g.out, l, "AND");
    }
    for (const circuits::AndOp& g : layer.ands) defined[g.out] = 1;  // after the layer's exchange
  }
  for (std::uint32_t s : program.output_slots) read(s, program.layers.size(), "output");
}

void flatten(const circuits::Program& program, std::vector<std::uint32_t>& out) {
  out.push_back(program.num_inputs);
  out.push_back(program.num_outputs);
  out.push_back(program.num_slots);
  out.push_back(static_cast<std::uint32_t>(program.layers.size()));
  out.push_back(static_cast<std::uint32_t>(program.output_slots.size()));
  for (const circuits::Layer& layer : program.layers) {
    out.push_back(static_cast<std::uint32_t>(layer.linear.size()));
    out.push_back(static_cast<std::uint32_t>(layer.ands.size()));
    for (const circuits::LinearOp& op : layer.linear) {
      out.push_back(static_cast<std::uint32_t>(op.kind));
      out.push_back(op.out);
      out.push_back(op.in0);
      out.push_back(op.in1);
    }
    for (const circuits::AndOp& g : layer.ands) {
      out.push_back(g.out);
      out.push_back(g.in0);
      out.push_back(g.in1);
    }
  }
  out.insert(out.end(), program.output_slots.begin(), program.output_slots.end());
}

// Slots an op reads (up to two) and writes (at most one), as references into the op so
// they can be renamed; the message regions are never shared between ops of a pass
// (distinct k), so only slots create dependencies.
struct Access {
  std::uint32_t* reads[2] = {nullptr, nullptr};
  int read_count = 0;
  std::uint32_t* write = nullptr;
};

Access access_of(DeviceOp& op) {
  Access acc;
  switch (op.code) {
    case kDevXor: acc = {{&op.b, &op.c}, 2, &op.a}; break;
    case kDevInv:
    case kDevCopy: acc = {{&op.b, nullptr}, 1, &op.a}; break;
    case kDevConst0:
    case kDevConst1:
    case kDevLoad:
    case kDevFinish: acc = {{nullptr, nullptr}, 0, &op.a}; break;
    case kDevAnd: acc = {{&op.b, &op.c}, 2, nullptr}; break;
    case kDevOutput: acc = {{&op.a, nullptr}, 1, nullptr}; break;
    default: break;
  }
  return acc;
}

// Maps the program's slots onto device slots ("physical" slots), renaming a write when
// the slot it would overwrite is still read or written by ops of the same pass at the
// level the write could otherwise run in. The circuit compiler reuses slots tightly, so
// without this the false (write-after-read, write-after-write) dependencies multiply the
// levels of an AES pass about tenfold (4206 against 391 levels for AES-128).
class Scheduler {
 public:
  Scheduler(std::uint32_t slots, std::uint32_t max_physical)
      : map_(slots), last_write_(slots, -1), last_read_(slots, -1), physical_(slots), max_physical_(max_physical) {
    for (std::uint32_t s = 0; s < slots; ++s) map_[s] = s;
  }

  std::uint32_t physical_slots() const { return physical_; }

  // Renames the ops of one pass (program slots in, device slots out) and appends them
  // to the plan, level by level.
  void schedule_pass(std::vector<DeviceOp>& ops, DevicePlan& plan, PassPlan& pass) {
    std::vector<std::uint32_t> level(ops.size(), 0);
    std::uint32_t levels = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Access acc = access_of(ops[i]);
      std::int64_t l = 0;
      for (int r = 0; r < acc.read_count; ++r) {
        *acc.reads[r] = map_[*acc.reads[r]];
        l = std::max(l, last_write_[*acc.reads[r]] + 1);  // read after write
      }
      if (acc.write != nullptr) {
        const std::uint32_t logical = *acc.write;
        std::uint32_t target = map_[logical];
        // In place only if that costs no level (an op reading its own out is one thread).
        if (ready_level(target) > l) {
          const std::optional<std::uint32_t> fresh = free_slot(l);
          if (fresh) {
            free_.push_back(target);  // its value is dead: later reads go to the new slot
            map_[logical] = *fresh;
            target = *fresh;
          }
        }
        l = std::max(l, ready_level(target));  // write after write / after read
        *acc.write = target;
        last_write_[target] = l;
        touched_.push_back(target);
      }
      for (int r = 0; r < acc.read_count; ++r) {
        last_read_[*acc.reads[r]] = std::max(last_read_[*acc.reads[r]], l);
        touched_.push_back(*acc.reads[r]);
      }
      level[i] = static_cast<std::uint32_t>(l);
      levels = std::max(levels, static_cast<std::uint32_t>(l) + 1);
    }
    for (std::uint32_t s : touched_) {  // a kernel boundary orders everything
      last_write_[s] = -1;
      last_read_[s] = -1;
    }
    touched_.clear();
    // Counting sort by level, stable: program order inside a level.
    std::vector<std::uint32_t> count(levels + 1, 0);
    for (std::uint32_t l : level) ++count[l + 1];
    for (std::uint32_t l = 0; l < levels; ++l) count[l + 1] += count[l];
    const std::size_t base = plan.ops.size();
    pass.first_level = static_cast<std::uint32_t>(plan.level_bounds.size() - 1);
    pass.levels = levels;
    for (std::uint32_t l = 1; l <= levels; ++l) plan.level_bounds.push_back(static_cast<std::uint32_t>(base + count[l]));
    plan.ops.resize(base + ops.size());
    std::vector<std::uint32_t> next(count.begin(), count.end() - 1);
    for (std::size_t i = 0; i < ops.size(); ++i) plan.ops[base + next[level[i]]++] = ops[i];
  }

 private:
  // The first level at which a slot may be written in this pass.
  std::int64_t ready_level(std::uint32_t slot) const {
    return std::max(last_write_[slot], last_read_[slot]) + 1;
  }

  // A slot holding no live value that may be written at `level`, or a new one while the
  // device-slot budget lasts.
  std::optional<std::uint32_t> free_slot(std::int64_t level) {
    for (std::size_t i = free_.size(); i-- > 0;) {
      if (ready_level(free_[i]) <= level) {
        const std::uint32_t slot = free_[i];
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        return slot;
      }
    }
    if (physical_ >= max_physical_) return std::nullopt;
    last_write_.push_back(-1);
    last_read_.push_back(-1);
    return physical_++;
  }

  std::vector<std::uint32_t> map_;  // program slot -> device slot
  std::vector<std::int64_t> last_write_, last_read_;  // per device slot, in the current pass
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> touched_;
  std::uint32_t physical_;
  std::uint32_t max_physical_;
};

}  // namespace

DevicePlan build_device_plan(const circuits::Program& program) {
  validate_program(program);
  DevicePlan plan;
  plan.num_inputs = program.num_inputs;
  plan.num_outputs = program.num_outputs;
  plan.num_slots = program.num_slots;
  const std::size_t layers = program.layers.size();
  const std::size_t passes = layers == 0 ? 1 : layers + (program.layers.back().ands.empty() ? 0 : 1);
  plan.level_bounds.push_back(0);
  const std::uint64_t budget = std::uint64_t{program.num_slots} * kSlotBudgetFactor + kSlotBudgetExtra;
  Scheduler scheduler(program.num_slots,
                      static_cast<std::uint32_t>(std::min<std::uint64_t>(budget, std::numeric_limits<std::uint32_t>::max())));
  std::vector<DeviceOp> pass_ops;
  std::vector<std::vector<DeviceOp>> program_passes;  // before renaming, for the staged plan
  std::vector<std::uint32_t> first_pass(program.num_inputs, std::numeric_limits<std::uint32_t>::max());
  for (std::size_t p = 0; p < passes; ++p) {
    pass_ops.clear();
    PassPlan pass;
    if (p > 0) {
      const auto& previous = program.layers[p - 1].ands;
      pass.prev_ands = static_cast<std::uint32_t>(previous.size());
      for (std::size_t k = 0; k < previous.size(); ++k)
        pass_ops.push_back({kDevFinish, previous[k].out, static_cast<std::uint32_t>(k), 0});
    }
    if (p < layers) {
      const circuits::Layer& layer = program.layers[p];
      for (const circuits::LinearOp& op : layer.linear) {
        switch (op.kind) {
          case circuits::OpKind::Xor: pass_ops.push_back({kDevXor, op.out, op.in0, op.in1}); break;
          case circuits::OpKind::Inv: pass_ops.push_back({kDevInv, op.out, op.in0, 0}); break;
          case circuits::OpKind::Copy: pass_ops.push_back({kDevCopy, op.out, op.in0, 0}); break;
          case circuits::OpKind::Const: pass_ops.push_back({op.in0 == 0 ? kDevConst0 : kDevConst1, op.out, 0, 0}); break;
          case circuits::OpKind::LoadInput: pass_ops.push_back({kDevLoad, op.out, op.in0, 0}); break;
        }
      }
      pass.ands = static_cast<std::uint32_t>(layer.ands.size());
      plan.max_ands = std::max(plan.max_ands, pass.ands);
      for (std::size_t k = 0; k < layer.ands.size(); ++k) {
        const circuits::AndOp& g = layer.ands[k];
        pass_ops.push_back({kDevAnd, static_cast<std::uint32_t>(k), g.in0, g.in1});
      }
    }
    if (p + 1 == passes) {
      for (std::size_t j = 0; j < program.output_slots.size(); ++j)
        pass_ops.push_back({kDevOutput, program.output_slots[j], static_cast<std::uint32_t>(j), 0});
    }
    if (plan.ops.size() + pass_ops.size() > std::numeric_limits<std::uint32_t>::max())
      invalid("more than 2^32 ops");
    for (const DeviceOp& op : pass_ops)
      if (op.code == kDevLoad) first_pass[op.b] = std::min(first_pass[op.b], static_cast<std::uint32_t>(p));
    program_passes.push_back(pass_ops);
    scheduler.schedule_pass(pass_ops, plan, pass);
    plan.passes.push_back(pass);
  }
  plan.num_device_slots = scheduler.physical_slots();
  flatten(program, plan.signature);
  plan.staged = build_staged_plan(program_passes, program.num_slots);
  plan.input_row_bounds.assign(passes + 1, 0);
  for (std::uint32_t row = 0; row < program.num_inputs; ++row)
    if (first_pass[row] < passes) ++plan.input_row_bounds[first_pass[row] + 1];
  for (std::size_t p = 0; p < passes; ++p) plan.input_row_bounds[p + 1] += plan.input_row_bounds[p];
  plan.input_rows.resize(plan.input_row_bounds.back());
  std::vector<std::uint32_t> next(plan.input_row_bounds.begin(), plan.input_row_bounds.end() - 1);
  for (std::uint32_t row = 0; row < program.num_inputs; ++row)
    if (first_pass[row] < passes) plan.input_rows[next[first_pass[row]]++] = row;
  return plan;
}

bool plan_matches(const circuits::Program& program, const DevicePlan& plan) {
  // Compares without building a second signature.
  const std::vector<std::uint32_t>& s = plan.signature;
  std::size_t i = 0;
  auto next = [&](std::uint32_t v) { return i < s.size() && s[i++] == v; };
  if (!next(program.num_inputs) || !next(program.num_outputs) || !next(program.num_slots) ||
      !next(static_cast<std::uint32_t>(program.layers.size())) ||
      !next(static_cast<std::uint32_t>(program.output_slots.size())))
    return false;
  for (const circuits::Layer& layer : program.layers) {
    if (!next(static_cast<std::uint32_t>(layer.linear.size())) || !next(static_cast<std::uint32_t>(layer.ands.size())))
      return false;
    for (const circuits::LinearOp& op : layer.linear)
      if (!next(static_cast<std::uint32_t>(op.kind)) || !next(op.out) || !next(op.in0) || !next(op.in1)) return false;
    for (const circuits::AndOp& g : layer.ands)
      if (!next(g.out) || !next(g.in0) || !next(g.in1)) return false;
  }
  for (std::uint32_t slot : program.output_slots)
    if (!next(slot)) return false;
  return i == s.size();
}

WorkspaceLayout workspace_layout(const DevicePlan& plan, std::uint64_t instances, bool staged) {
  WorkspaceLayout layout;
  layout.pitch = padded_words(instances);
  const std::size_t row_bytes = checked_mul(static_cast<std::size_t>(layout.pitch), sizeof(std::uint64_t));
  const std::size_t message = checked_mul(static_cast<std::size_t>(per_and_bytes(instances)), plan.max_ands);
  layout.message_capacity = static_cast<std::size_t>(alpha_bytes(message));
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t offset = at;
    at = align_up(checked_add(at, bytes));
    return offset;
  };
  const std::size_t state_rows = staged ? plan.num_slots : plan.num_device_slots;
  layout.state = take(checked_mul(checked_mul(state_rows, 2), row_bytes));
  layout.in_x = take(checked_mul(plan.num_inputs, row_bytes));
  layout.in_a = take(checked_mul(plan.num_inputs, row_bytes));
  layout.out_x = take(checked_mul(plan.num_outputs, row_bytes));
  layout.out_a = take(checked_mul(plan.num_outputs, row_bytes));
  for (int b = 0; b < 3; ++b) layout.msg_out[b] = take(layout.message_capacity);
  for (int b = 0; b < 2; ++b) layout.msg_in[b] = take(layout.message_capacity);
  layout.total = at;
  return layout;
}

std::uint64_t TrafficCount::bytes_per_word() const {
  std::uint64_t bytes = alpha_words * 8;  // the PRF kernel writes alpha once
  for (std::uint32_t code = 0; code < kDevOpcodes; ++code) bytes += ops[code] * op_bytes_per_word(code);
  return bytes;
}

TrafficCount count_traffic(const DevicePlan& plan) {
  TrafficCount t;
  for (const DeviceOp& op : plan.ops)
    if (op.code < kDevOpcodes) ++t.ops[op.code];
  t.alpha_words = t.ops[kDevAnd];
  return t;
}

}  // namespace mpc::cuda::detail
