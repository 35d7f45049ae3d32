#include "circuits/builder.hpp"

#include <limits>
#include <string>

#include "common/error.hpp"

namespace mpc::circuits {
namespace {

constexpr std::uint32_t kUnnumbered = std::numeric_limits<std::uint32_t>::max();

[[noreturn]] void fail(const std::string& message) { throw FormatError(Component::Circuit, message); }

bool reads_in1(GateKind kind) { return kind == GateKind::Xor || kind == GateKind::And; }
bool reads_in0(GateKind kind) { return kind != GateKind::Const; }

}  // namespace

std::uint32_t CircuitBuilder::new_wire() {
  if (next_wire_ == kUnnumbered) fail("circuit builder ran out of wire ids");
  return next_wire_++;
}

void CircuitBuilder::check_wire(std::uint32_t wire) const {
  if (wire >= next_wire_) fail("circuit builder: unknown wire " + std::to_string(wire));
}

std::vector<std::uint32_t> CircuitBuilder::add_input_group(std::uint32_t width) {
  if (width == 0) fail("circuit builder: input group of width 0");
  std::vector<std::uint32_t> wires(width);
  for (auto& wire : wires) wire = new_wire();
  input_groups_.push_back(wires);
  return wires;
}

std::uint32_t CircuitBuilder::add_gate(GateKind kind, std::uint32_t in0, std::uint32_t in1) {
  if (reads_in0(kind)) check_wire(in0);
  if (reads_in1(kind)) check_wire(in1);
  const std::uint32_t out = new_wire();
  gates_.push_back(Gate{kind, in0, in1, out});
  return out;
}

std::uint32_t CircuitBuilder::xor_(std::uint32_t a, std::uint32_t b) { return add_gate(GateKind::Xor, a, b); }
std::uint32_t CircuitBuilder::and_(std::uint32_t a, std::uint32_t b) { return add_gate(GateKind::And, a, b); }
std::uint32_t CircuitBuilder::inv(std::uint32_t a) { return add_gate(GateKind::Inv, a, 0); }

std::uint32_t CircuitBuilder::constant(bool value) {
  auto& cached = constants_[value ? 1 : 0];
  if (!cached) cached = add_gate(GateKind::Const, value ? 1 : 0, 0);
  return *cached;
}

Circuit CircuitBuilder::finish(std::vector<std::vector<std::uint32_t>> output_groups) const {
  // Which builder wire is an input, and which gate defines each other wire.
  std::vector<bool> is_input(next_wire_, false);
  for (const auto& group : input_groups_) {
    for (std::uint32_t wire : group) is_input[wire] = true;
  }
  std::vector<std::uint32_t> defining_gate(next_wire_, kUnnumbered);
  for (std::uint32_t index = 0; index < gates_.size(); ++index) defining_gate[gates_[index].out] = index;

  // Outputs that are inputs or repeats get their own Copy gate, appended after all others.
  std::vector<Gate> copies;
  std::vector<bool> claimed_as_output(next_wire_, false);
  std::uint32_t copy_wire = next_wire_;
  std::uint64_t output_count = 0;
  for (auto& group : output_groups) {
    if (group.empty()) fail("circuit builder: empty output group");
    for (auto& wire : group) {
      check_wire(wire);
      if (is_input[wire] || claimed_as_output[wire]) {
        if (copy_wire == kUnnumbered) fail("circuit builder ran out of wire ids");
        copies.push_back(Gate{GateKind::Copy, wire, 0, copy_wire});
        wire = copy_wire++;
      } else {
        claimed_as_output[wire] = true;
      }
      ++output_count;
    }
  }

  // Liveness: a gate is kept if an output depends on it. Gates are in topological order, so
  // one backward pass suffices; copies read original wires and are always kept.
  std::vector<bool> needed(next_wire_, false);
  for (const Gate& copy : copies) needed[copy.in0] = true;
  for (std::uint32_t wire = 0; wire < next_wire_; ++wire) {
    if (claimed_as_output[wire]) needed[wire] = true;
  }
  for (auto gate = gates_.rbegin(); gate != gates_.rend(); ++gate) {
    if (!needed[gate->out]) continue;
    if (reads_in0(gate->kind)) needed[gate->in0] = true;
    if (reads_in1(gate->kind)) needed[gate->in1] = true;
  }

  std::uint64_t input_count = 0;
  for (const auto& group : input_groups_) input_count += group.size();
  std::uint64_t kept_gates = copies.size();
  for (const Gate& gate : gates_) kept_gates += needed[gate.out] ? 1 : 0;
  const std::uint64_t num_wires = input_count + kept_gates;
  if (num_wires > std::numeric_limits<std::uint32_t>::max() - 1) fail("circuit builder: too many wires");

  // Final numbering: inputs first, outputs last, everything else in between in gate order.
  std::vector<std::uint32_t> number(copy_wire, kUnnumbered);
  std::uint32_t next = 0;
  for (const auto& group : input_groups_) {
    for (std::uint32_t wire : group) number[wire] = next++;
  }
  std::uint32_t next_output = static_cast<std::uint32_t>(num_wires - output_count);
  for (const auto& group : output_groups) {
    for (std::uint32_t wire : group) number[wire] = next_output++;
  }
  for (const Gate& gate : gates_) {
    if (needed[gate.out] && number[gate.out] == kUnnumbered) number[gate.out] = next++;
  }

  Circuit circuit;
  circuit.num_wires = static_cast<std::uint32_t>(num_wires);
  for (const auto& group : input_groups_) circuit.input_widths.push_back(static_cast<std::uint32_t>(group.size()));
  for (const auto& group : output_groups) circuit.output_widths.push_back(static_cast<std::uint32_t>(group.size()));
  circuit.gates.reserve(kept_gates);
  auto renumber = [&](const Gate& gate) {
    Gate out = gate;
    if (reads_in0(gate.kind)) out.in0 = number[gate.in0];
    out.in1 = reads_in1(gate.kind) ? number[gate.in1] : 0;
    out.out = number[gate.out];
    return out;
  };
  for (const Gate& gate : gates_) {
    if (needed[gate.out]) circuit.gates.push_back(renumber(gate));
  }
  for (const Gate& copy : copies) circuit.gates.push_back(renumber(copy));
  return circuit;
}

}  // namespace mpc::circuits
