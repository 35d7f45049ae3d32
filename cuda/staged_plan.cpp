// cuda/staged_plan.cpp: values, levels and shared registers of the staged passes (see
// staged_plan.hpp).
#include "cuda/staged_plan.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>

#include "cuda/staged_ops.hpp"

namespace mpc::cuda::detail {
namespace {

constexpr std::int64_t kNone = -1;

// Slots an op of the device-memory plan reads and writes (program slots).
struct SlotAccess {
  std::uint32_t reads[2] = {0, 0};
  int read_count = 0;
  bool writes = false;
  std::uint32_t written = 0;
};

SlotAccess slot_access(const DeviceOp& op) {
  SlotAccess s;
  switch (op.code) {
    case kDevXor: s = {{op.b, op.c}, 2, true, op.a}; break;
    case kDevInv:
    case kDevCopy: s = {{op.b, 0}, 1, true, op.a}; break;
    case kDevConst0:
    case kDevConst1:
    case kDevLoad:
    case kDevFinish: s = {{0, 0}, 0, true, op.a}; break;
    case kDevAnd: s = {{op.b, op.c}, 2, false, 0}; break;
    case kDevOutput: s = {{op.a, 0}, 1, false, 0}; break;
    default: break;
  }
  return s;
}

// Device-memory bytes one staged op moves per word (alpha counted with the AND that reads
// it: the PRF kernel writes it once, the op reads it and writes r).
std::uint64_t staged_bytes(std::uint32_t code) {
  switch (code & kStOpcodeMask) {
    case kStLoadState:
    case kStLoadInput:
    case kStFinish:
    case kStOutput: return 16;
    case kStAnd: return 8 + 8 + 8;
    default: return 0;
  }
}

// For every pass, the slots it writes whose last value there a later pass reads.
std::vector<std::vector<std::uint32_t>> stored_slots(const std::vector<std::vector<DeviceOp>>& passes,
                                                     std::uint32_t num_slots) {
  std::vector<std::vector<std::uint32_t>> stored(passes.size());
  std::vector<std::uint8_t> live(num_slots, 0);   // live after the pass being looked at
  std::vector<std::uint8_t> seen(num_slots, 0);   // written in this pass
  std::vector<std::uint8_t> exposed(num_slots, 0);
  std::vector<std::uint32_t> touched;
  for (std::size_t p = passes.size(); p-- > 0;) {
    touched.clear();
    for (const DeviceOp& op : passes[p]) {
      const SlotAccess s = slot_access(op);
      for (int r = 0; r < s.read_count; ++r)
        if (seen[s.reads[r]] == 0 && exposed[s.reads[r]] == 0) {
          exposed[s.reads[r]] = 1;
          touched.push_back(s.reads[r]);
        }
      if (s.writes && seen[s.written] == 0) {
        seen[s.written] = 1;
        touched.push_back(s.written);
      }
    }
    // live before = exposed | (live after - written)
    for (std::uint32_t slot : touched) {
      if (seen[slot] != 0 && live[slot] != 0) stored[p].push_back(slot);
    }
    for (std::uint32_t slot : touched) {
      live[slot] = exposed[slot] != 0 ? 1 : (seen[slot] != 0 ? 0 : live[slot]);
      seen[slot] = 0;
      exposed[slot] = 0;
    }
    std::sort(stored[p].begin(), stored[p].end());
    stored[p].erase(std::unique(stored[p].begin(), stored[p].end()), stored[p].end());
  }
  return stored;
}

struct Value {
  std::int64_t op = kNone;  // index into the pass's staged ops
  std::uint32_t level = 0;
  std::int64_t last_use = kNone;
  bool stored = false;
  std::uint32_t home = 0;
  std::uint32_t reg = 0;
};

struct PassOp {
  DeviceOp op;  // staged opcode; registers filled in at the end
  std::int64_t value = kNone;
  std::int64_t src[2] = {kNone, kNone};
  std::uint32_t level = 0;
  bool dropped = false;
};

std::uint32_t staged_code(std::uint32_t device_code) {
  switch (device_code) {
    case kDevXor: return kStXor;
    case kDevInv: return kStInv;
    case kDevCopy: return kStCopy;
    case kDevConst0: return kStConst0;
    case kDevConst1: return kStConst1;
    case kDevLoad: return kStLoadInput;
    case kDevAnd: return kStAnd;
    case kDevFinish: return kStFinish;
    case kDevOutput: return kStOutput;
    default: return kStOpcodes;
  }
}

class PassBuilder {
 public:
  explicit PassBuilder(std::uint32_t num_slots)
      : current_(num_slots, kNone), entry_(num_slots, kNone), stored_home_(num_slots, 0) {}

  // Appends one pass to `plan`; false when a register index does not fit.
  bool build(const std::vector<DeviceOp>& ops, const std::vector<std::uint32_t>& stored, StagedPlan& plan,
             StagedPassPlan& pass) {
    values_.clear();
    pass_ops_.clear();
    touched_.clear();
    for (const DeviceOp& op : ops) add(op);
    for (std::uint32_t slot : stored) {
      Value& v = values_[static_cast<std::size_t>(current_[slot])];
      v.stored = true;
      v.home = slot;
      stored_home_[slot] = 1;
    }
    drop_dead();
    schedule();
    for (std::uint32_t slot : touched_) current_[slot] = entry_[slot] = kNone;
    for (std::uint32_t slot : stored) stored_home_[slot] = 0;
    if (!allocate(pass)) return false;
    emit(plan, pass);
    return true;
  }

 private:
  std::int64_t new_value(std::int64_t op) {
    values_.push_back(Value{});
    values_.back().op = op;
    return static_cast<std::int64_t>(values_.size() - 1);
  }

  // The value a read of `slot` sees: the pass's last write, or its entry value (loaded once).
  std::int64_t read(std::uint32_t slot) {
    if (current_[slot] != kNone) return current_[slot];
    PassOp load;
    load.op = {kStLoadState, 0, slot, 0};
    load.value = new_value(static_cast<std::int64_t>(pass_ops_.size()));
    pass_ops_.push_back(load);
    current_[slot] = entry_[slot] = load.value;
    touched_.push_back(slot);
    return load.value;
  }

  void add(const DeviceOp& op) {
    const SlotAccess s = slot_access(op);
    PassOp p;
    for (int r = 0; r < s.read_count; ++r) p.src[r] = read(s.reads[r]);
    const std::uint32_t code = staged_code(op.code);
    switch (op.code) {
      case kDevXor: p.op = {code, 0, 0, 0}; break;
      case kDevInv:
      case kDevCopy: p.op = {code, 0, 0, 0}; break;
      case kDevConst0:
      case kDevConst1: p.op = {code, 0, 0, 0}; break;
      case kDevLoad: p.op = {code, 0, op.b, 0}; break;       // b = input row
      case kDevFinish: p.op = {code, 0, op.b, 0}; break;     // b = k
      case kDevAnd: p.op = {code, op.a, 0, 0}; break;        // a = k
      case kDevOutput: p.op = {code, op.b, 0, 0}; break;     // a = output row
      default: break;
    }
    const std::int64_t index = static_cast<std::int64_t>(pass_ops_.size());
    if (s.writes) {
      p.value = new_value(index);
      if (current_[s.written] == kNone && entry_[s.written] == kNone) touched_.push_back(s.written);
      current_[s.written] = p.value;
    }
    pass_ops_.push_back(p);
  }

  void drop_dead() {
    std::vector<std::uint32_t> readers(values_.size(), 0);
    for (const PassOp& p : pass_ops_)
      for (std::int64_t s : p.src)
        if (s != kNone) ++readers[static_cast<std::size_t>(s)];
    // Program order is topological: dropping from the back frees earlier values too.
    for (std::size_t i = pass_ops_.size(); i-- > 0;) {
      PassOp& p = pass_ops_[i];
      if (p.value == kNone) continue;
      const Value& v = values_[static_cast<std::size_t>(p.value)];
      if (readers[static_cast<std::size_t>(p.value)] != 0 || v.stored) continue;
      p.dropped = true;
      for (std::int64_t s : p.src)
        if (s != kNone) --readers[static_cast<std::size_t>(s)];
    }
  }

  void schedule() {
    asap();
    sink();
  }

  void asap() {
    for (PassOp& p : pass_ops_) {
      if (p.dropped) continue;
      std::uint32_t level = 0;
      for (std::int64_t s : p.src)
        if (s != kNone) level = std::max(level, values_[static_cast<std::size_t>(s)].level + 1);
      if ((p.op.code & kStOpcodeMask) != kStLoadState && p.value != kNone) {
        const Value& v = values_[static_cast<std::size_t>(p.value)];
        // A store to a home waits for that home's LoadState (level 0) to have read it.
        if (v.stored && entry_[v.home] != kNone) level = std::max(level, 1u);
      }
      p.level = level;
      if (p.value != kNone) values_[static_cast<std::size_t>(p.value)].level = level;
      for (std::int64_t s : p.src)
        if (s != kNone) {
          Value& v = values_[static_cast<std::size_t>(s)];
          v.last_use = std::max<std::int64_t>(v.last_use, level);
        }
    }
  }

  // Ops that read no value (loads, finishes, constants) move to the level before their
  // first reader: as soon as possible would put them all in level 0 and keep their values
  // live across the whole pass, the largest part of the registers. A LoadState whose home
  // the pass stores stays in level 0 (the store is placed after it).
  void sink() {
    std::vector<std::int64_t> first_use(values_.size(), -1);
    for (const PassOp& p : pass_ops_) {
      if (p.dropped) continue;
      for (std::int64_t s : p.src)
        if (s != kNone) {
          std::int64_t& f = first_use[static_cast<std::size_t>(s)];
          f = f < 0 ? p.level : std::min<std::int64_t>(f, p.level);
        }
    }
    for (PassOp& p : pass_ops_) {
      if (p.dropped || p.value == kNone || p.src[0] != kNone) continue;
      Value& v = values_[static_cast<std::size_t>(p.value)];
      const std::int64_t first = first_use[static_cast<std::size_t>(p.value)];
      if (first <= 0 || v.stored) continue;  // no reader in this pass, or a store's constraint
      if ((p.op.code & kStOpcodeMask) == kStLoadState && stored_home_[p.op.b] != 0) continue;
      p.level = static_cast<std::uint32_t>(first - 1);
      v.level = p.level;
    }
  }

  // Interval colouring: values by the level that computes them; a register is free for a
  // value computed at level l once its value's last reader ran at a level before l.
  bool allocate(StagedPassPlan& pass) {
    std::vector<std::size_t> order;
    for (std::size_t v = 0; v < values_.size(); ++v)
      if (values_[v].last_use != kNone) order.push_back(v);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return values_[a].level < values_[b].level; });
    std::vector<std::pair<std::int64_t, std::uint32_t>> busy;  // (last use, register)
    std::vector<std::uint32_t> free;
    std::uint32_t regs = 0;
    for (std::size_t v : order) {
      Value& value = values_[v];
      for (std::size_t i = busy.size(); i-- > 0;) {
        if (busy[i].first < static_cast<std::int64_t>(value.level)) {
          free.push_back(busy[i].second);
          busy[i] = busy.back();
          busy.pop_back();
        }
      }
      if (free.empty()) {
        value.reg = regs++;
      } else {
        // The lowest free register: keeps the registers in use dense.
        const auto lowest = std::min_element(free.begin(), free.end());
        value.reg = *lowest;
        free.erase(lowest);
      }
      busy.emplace_back(value.last_use, value.reg);
    }
    pass.regs = regs;
    return regs <= kStagedMaxIndex + 1;
  }

  void emit(StagedPlan& plan, StagedPassPlan& pass) {
    std::vector<std::size_t> order;
    std::uint32_t levels = 0;
    for (std::size_t i = 0; i < pass_ops_.size(); ++i) {
      PassOp& p = pass_ops_[i];
      if (p.dropped) continue;
      order.push_back(i);
      levels = std::max(levels, p.level + 1);
      std::uint32_t flags = 0, reg = 0, home = 0;
      if (p.value != kNone) {
        const Value& v = values_[static_cast<std::size_t>(p.value)];
        if (v.last_use != kNone) {
          flags |= kStKeep;
          reg = v.reg;
        }
        if (v.stored) {
          flags |= kStStore;
          home = v.home;
        }
        p.op.a = staged_dest(reg, home);
      }
      p.op.code |= flags;
      const std::uint32_t code = p.op.code & kStOpcodeMask;
      if (code == kStXor || code == kStInv || code == kStCopy || code == kStAnd || code == kStOutput) {
        p.op.b = values_[static_cast<std::size_t>(p.src[0])].reg;
        if (code == kStXor || code == kStAnd) p.op.c = values_[static_cast<std::size_t>(p.src[1])].reg;
      }
      pass.bytes_per_word += staged_bytes(p.op.code) + ((flags & kStStore) != 0 ? 16 : 0);
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const PassOp& x = pass_ops_[a];
      const PassOp& y = pass_ops_[b];
      if (x.level != y.level) return x.level < y.level;
      return (x.op.code & kStOpcodeMask) < (y.op.code & kStOpcodeMask);
    });
    pass.first_level = static_cast<std::uint32_t>(plan.level_bounds.size() - 1);
    pass.levels = levels;
    std::uint32_t level = 0;
    for (std::size_t i : order) {
      while (level < pass_ops_[i].level) {
        plan.level_bounds.push_back(static_cast<std::uint32_t>(plan.ops.size()));
        ++level;
      }
      plan.ops.push_back(pass_ops_[i].op);
    }
    if (levels != 0) plan.level_bounds.push_back(static_cast<std::uint32_t>(plan.ops.size()));
  }

  std::vector<std::int64_t> current_;  // per program slot: the pass's value of it
  std::vector<std::int64_t> entry_;    // per program slot: its LoadState value in this pass
  std::vector<std::uint8_t> stored_home_;  // per program slot: the pass stores it
  std::vector<std::uint32_t> touched_;
  std::vector<Value> values_;
  std::vector<PassOp> pass_ops_;
};

}  // namespace

std::uint64_t StagedPlan::bytes_per_word() const {
  return std::accumulate(passes.begin(), passes.end(), std::uint64_t{0},
                         [](std::uint64_t sum, const StagedPassPlan& p) { return sum + p.bytes_per_word; });
}

StagedPlan build_staged_plan(const std::vector<std::vector<DeviceOp>>& passes, std::uint32_t num_slots) {
  StagedPlan plan;
  plan.level_bounds.push_back(0);
  if (num_slots > kStagedMaxIndex + 1) return plan;
  const std::vector<std::vector<std::uint32_t>> stored = stored_slots(passes, num_slots);
  PassBuilder builder(num_slots);
  for (std::size_t p = 0; p < passes.size(); ++p) {
    StagedPassPlan pass;
    for (const DeviceOp& op : passes[p]) {
      if (op.code == kDevAnd) ++pass.ands;
      if (op.code == kDevFinish) ++pass.prev_ands;
    }
    if (!builder.build(passes[p], stored[p], plan, pass)) {
      StagedPlan unusable;
      unusable.level_bounds.push_back(0);
      return unusable;
    }
    plan.max_regs = std::max(plan.max_regs, pass.regs);
    plan.passes.push_back(pass);
  }
  plan.usable = true;
  return plan;
}

}  // namespace mpc::cuda::detail
