#include "protocol/auth2/wire_slots.hpp"

#include <limits>
#include <string>

#include "common/error.hpp"

namespace mpc::auth2 {
namespace {

using circuits::GateKind;

constexpr std::uint32_t kNeverRead = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kReadAtEnd = kNeverRead - 1;
constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();

[[noreturn]] void malformed(const std::string& what) {
  throw FormatError(Component::Circuit, "authenticated garbling: a malformed circuit (" + what + ")");
}

bool reads_in0(GateKind kind) { return kind != GateKind::Const; }
bool reads_in1(GateKind kind) { return kind == GateKind::Xor || kind == GateKind::And; }

class SlotPool {
 public:
  std::uint32_t take() {
    if (free_.empty()) return count_++;
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  void give_back(std::uint32_t slot) { free_.push_back(slot); }
  std::uint32_t count() const { return count_; }

 private:
  std::vector<std::uint32_t> free_;  // the most recently freed first: still in the cache
  std::uint32_t count_ = 0;
};

}  // namespace

WireSlots plan_slots(const circuits::Circuit& circuit) {
  const std::uint32_t wires = circuit.num_wires;
  const std::uint32_t inputs = circuit.total_inputs();
  const std::uint32_t outputs = circuit.total_outputs();
  if (inputs > wires || outputs > wires) malformed("more inputs or outputs than wires");
  if (circuit.gates.size() >= kReadAtEnd) malformed("too many gates");
  std::vector<std::uint32_t> last_read(wires, kNeverRead);
  const auto in_range = [&](std::uint32_t wire) {
    if (wire >= wires) malformed("wire " + std::to_string(wire) + " of " + std::to_string(wires));
    return wire;
  };
  for (std::size_t g = 0; g < circuit.gates.size(); ++g) {
    const auto& gate = circuit.gates[g];
    if (reads_in0(gate.kind)) last_read[in_range(gate.in0)] = static_cast<std::uint32_t>(g);
    if (reads_in1(gate.kind)) last_read[in_range(gate.in1)] = static_cast<std::uint32_t>(g);
    in_range(gate.out);
  }
  const std::uint32_t first_output = circuit.first_output_wire();
  for (std::uint32_t w = first_output; w < wires; ++w) last_read[w] = kReadAtEnd;

  WireSlots plan;
  SlotPool pool;
  std::vector<std::uint32_t> slot_of(wires, kNoSlot);
  plan.input_slots.resize(inputs);
  for (std::uint32_t w = 0; w < inputs; ++w) plan.input_slots[w] = slot_of[w] = pool.take();
  for (std::uint32_t w = 0; w < inputs; ++w)
    if (last_read[w] == kNeverRead) pool.give_back(slot_of[w]);
  plan.gates.reserve(circuit.gates.size());
  const auto read = [&](std::uint32_t wire) {
    if (slot_of[wire] == kNoSlot) malformed("wire " + std::to_string(wire) + " read before it is made");
    return slot_of[wire];
  };
  for (std::size_t g = 0; g < circuit.gates.size(); ++g) {
    const auto& gate = circuit.gates[g];
    SlotGate slot_gate{gate.kind, gate.in0, 0, 0};
    if (reads_in0(gate.kind)) slot_gate.in0 = read(gate.in0);
    if (reads_in1(gate.kind)) slot_gate.in1 = read(gate.in1);
    const auto done_with = [&](std::uint32_t wire) {
      if (last_read[wire] == g) {
        pool.give_back(slot_of[wire]);
        last_read[wire] = kNeverRead;  // given back once, whether it is read once or twice here
      }
    };
    if (reads_in0(gate.kind)) done_with(gate.in0);
    if (reads_in1(gate.kind)) done_with(gate.in1);
    if (gate.out < inputs || slot_of[gate.out] != kNoSlot)
      malformed("wire " + std::to_string(gate.out) + " made twice");
    slot_gate.out = slot_of[gate.out] = pool.take();
    if (last_read[gate.out] == kNeverRead) pool.give_back(slot_gate.out);
    plan.gates.push_back(slot_gate);
    plan.and_gates += gate.kind == GateKind::And ? 1 : 0;
    plan.constants += gate.kind == GateKind::Const ? 1 : 0;
  }
  plan.output_slots.resize(outputs);
  for (std::uint32_t j = 0; j < outputs; ++j) plan.output_slots[j] = read(first_output + j);
  plan.slots = pool.count();
  return plan;
}

}  // namespace mpc::auth2
