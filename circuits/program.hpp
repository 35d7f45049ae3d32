// A circuit compiled for layered secure evaluation: gates grouped by AND-depth,
// wires mapped onto a small set of reusable slots.
//
// Execution model, for every evaluator (CPU SIMD, GPU, any protocol):
//   for each layer L in order:
//     1. run layers[L].linear in order (local operations on slots);
//     2. the "local phase" of every AND in layers[L].ands reads in0/in1;
//     3. one exchange with the other parties for the whole layer;
//     4. the "finish phase" writes every AND's out slot.
//   After the last layer, output j is in slot output_slots[j].
// Guarantees given by compile(): no AND output slot is read by a linear op or an
// AND of the same layer; the out slots of one layer's ANDs are distinct; a linear
// op may write a slot it reads (elementwise in place); input rows are loaded by
// LoadInput ops right before their first use, so inputs occupy no slot before that.
#pragma once

#include <cstdint>
#include <vector>

#include "circuits/circuit.hpp"

namespace mpc::circuits {

enum class OpKind : std::uint8_t {
  Xor,        // slot[out] = slot[in0] ^ slot[in1]
  Inv,        // slot[out] = !slot[in0]      (for shares: flip the public-constant component)
  Copy,       // slot[out] = slot[in0]
  Const,      // slot[out] = constant in0 (0 or 1)
  LoadInput,  // slot[out] = input row in0
};

struct LinearOp {
  OpKind kind;
  std::uint32_t out;
  std::uint32_t in0;
  std::uint32_t in1;
};

struct AndOp {
  std::uint32_t out;
  std::uint32_t in0;
  std::uint32_t in1;
};

struct Layer {
  std::vector<LinearOp> linear;
  std::vector<AndOp> ands;  // empty only for the final layer
};

struct Program {
  std::uint32_t num_inputs = 0;
  std::uint32_t num_outputs = 0;
  std::uint32_t num_slots = 0;
  std::vector<Layer> layers;
  std::vector<std::uint32_t> output_slots;
  std::uint64_t and_gates = 0;
  std::uint32_t and_depth = 0;  // number of layers with ANDs
};

// Compiles a validated circuit. Deterministic: the same circuit gives the same program
// on every party (the parties' messages line up only if their programs are identical).
Program compile(const Circuit& circuit);

// Throws FormatError(Component::Circuit) if the program breaks any guarantee above
// (slot ranges, reads of undefined slots, AND outputs aliasing reads in the same layer).
void validate(const Program& program);

}  // namespace mpc::circuits
