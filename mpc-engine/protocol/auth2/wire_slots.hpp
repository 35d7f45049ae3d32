// A circuit's wires renamed to reusable slots, in gate order, for the passes of authenticated
// garbling (masks, garbling, evaluation): each keeps per wire a mask (48 bytes), a label or a
// masked bit, and a Kerberos job's circuit has hundreds of thousands of wires, most of them
// read once soon after they are made. Per wire, those passes spent their time zeroing and
// missing the cache; per slot, the live wires of a pass stay in the cache.
//
// A wire takes a free slot when its gate makes it and gives it back after its last read. Input
// wires hold their slots until their last read too; output wires keep theirs to the end, so
// their values are there when the pass ends. The gates keep their order, so AND gate g is the
// g-th AND gate of the circuit in every pass, as the AND material and the hash tweaks number it.
#pragma once

#include <cstdint>
#include <vector>

#include "circuits/circuit.hpp"

namespace mpc::auth2 {

struct SlotGate {
  circuits::GateKind kind;
  std::uint32_t in0;  // a slot; a Const gate's value
  std::uint32_t in1;  // a slot (Xor, And)
  std::uint32_t out;  // a slot: may be one of this gate's input slots (read them first)
};

struct WireSlots {
  std::uint32_t slots = 0;
  std::vector<SlotGate> gates;              // the circuit's gates, in order
  std::vector<std::uint32_t> input_slots;   // of each input wire, in wire order
  std::vector<std::uint32_t> output_slots;  // of each output wire, in output order
  std::size_t and_gates = 0;
  std::size_t constants = 0;
};

// The slots of a circuit that circuits::validate accepts (anything else is an Error).
WireSlots plan_slots(const circuits::Circuit& circuit);

}  // namespace mpc::auth2
