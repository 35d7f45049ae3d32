// Helper for circuit generators: hands out wire ids while gates are appended in
// topological order, then renumbers everything into Bristol Fashion layout.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "circuits/circuit.hpp"

namespace mpc::circuits {

class CircuitBuilder {
 public:
  // Adds an input group; its wires come after those of earlier groups in the finished
  // circuit, whenever this is called. Throws FormatError for width 0.
  std::vector<std::uint32_t> add_input_group(std::uint32_t width);

  std::uint32_t xor_(std::uint32_t a, std::uint32_t b);
  std::uint32_t and_(std::uint32_t a, std::uint32_t b);
  std::uint32_t inv(std::uint32_t a);
  // One shared wire per value, however often it is asked for.
  std::uint32_t constant(bool value);

  // Builds the circuit with the given output groups (non-empty groups of wires handed out by
  // this builder). Inputs are wires 0..n-1 in group order; outputs are the last wires in
  // group order; gates keep the order they were added in. Gates that no output depends on
  // are dropped. An output that is an input wire, or that appears twice, gets a Copy gate.
  // The builder itself is left unchanged.
  Circuit finish(std::vector<std::vector<std::uint32_t>> output_groups) const;

  std::size_t gate_count() const noexcept { return gates_.size(); }

 private:
  std::uint32_t new_wire();
  void check_wire(std::uint32_t wire) const;
  std::uint32_t add_gate(GateKind kind, std::uint32_t in0, std::uint32_t in1);

  std::uint32_t next_wire_ = 0;
  std::vector<std::vector<std::uint32_t>> input_groups_;
  std::vector<Gate> gates_;  // in/out are builder wire ids
  std::optional<std::uint32_t> constants_[2];
};

}  // namespace mpc::circuits
