// Checks every guarantee program.hpp gives, so evaluators can trust a Program they did
// not compile themselves.
#include <string>
#include <vector>

#include "circuits/program.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

[[noreturn]] void fail(std::size_t layer, const std::string& message) {
  throw FormatError(Component::Circuit, "program layer " + std::to_string(layer) + ": " + message);
}

}  // namespace

void validate(const Program& program) {
  if (program.layers.empty()) throw FormatError(Component::Circuit, "program has no layers");
  if (program.output_slots.size() != program.num_outputs) {
    throw FormatError(Component::Circuit, "program output slot count does not match num_outputs");
  }
  // A slot nothing writes is useless, so a sound program has no more slots than writing
  // ops; checking this first keeps a hostile num_slots from sizing the tables below.
  std::uint64_t writing_ops = 0;
  for (const Layer& layer : program.layers) writing_ops += layer.linear.size() + layer.ands.size();
  if (program.num_slots > writing_ops) {
    throw FormatError(Component::Circuit, "program has more slots than ops that write them");
  }
  std::vector<bool> defined(program.num_slots, false);
  // Per slot: the layer (plus one) in which it was last read, and last written by an AND.
  std::vector<std::size_t> read_in_layer(program.num_slots, 0);
  std::vector<std::size_t> and_written_in_layer(program.num_slots, 0);
  std::uint64_t and_gates = 0;

  for (std::size_t index = 0; index < program.layers.size(); ++index) {
    const Layer& layer = program.layers[index];
    const std::size_t stamp = index + 1;
    auto read = [&](std::uint32_t slot) {
      if (slot >= program.num_slots) fail(index, "reads slot " + std::to_string(slot) + " out of range");
      if (!defined[slot]) fail(index, "reads slot " + std::to_string(slot) + " before it is written");
      read_in_layer[slot] = stamp;
    };
    auto write_linear = [&](std::uint32_t slot) {
      if (slot >= program.num_slots) fail(index, "writes slot " + std::to_string(slot) + " out of range");
      defined[slot] = true;
    };

    for (const LinearOp& op : layer.linear) {
      switch (op.kind) {
        case OpKind::Xor:
          read(op.in0);
          read(op.in1);
          break;
        case OpKind::Inv:
        case OpKind::Copy:
          read(op.in0);
          break;
        case OpKind::Const:
          if (op.in0 > 1) fail(index, "constant other than 0 or 1");
          break;
        case OpKind::LoadInput:
          if (op.in0 >= program.num_inputs) fail(index, "loads input row " + std::to_string(op.in0) + " out of range");
          break;
        default:
          fail(index, "unknown linear op kind");
      }
      write_linear(op.out);
    }

    const bool last = index + 1 == program.layers.size();
    if (last && !layer.ands.empty()) fail(index, "final layer has AND gates");
    if (!last && layer.ands.empty()) fail(index, "layer before the final one has no AND gates");
    for (const AndOp& op : layer.ands) {
      read(op.in0);
      read(op.in1);
    }
    for (const AndOp& op : layer.ands) {
      if (op.out >= program.num_slots) fail(index, "AND writes slot " + std::to_string(op.out) + " out of range");
      if (read_in_layer[op.out] == stamp) fail(index, "AND output slot " + std::to_string(op.out) + " is read in the same layer");
      if (and_written_in_layer[op.out] == stamp) fail(index, "two ANDs write slot " + std::to_string(op.out));
      and_written_in_layer[op.out] = stamp;
    }
    for (const AndOp& op : layer.ands) defined[op.out] = true;
    and_gates += layer.ands.size();
  }

  if (and_gates != program.and_gates) throw FormatError(Component::Circuit, "program AND count is wrong");
  if (program.and_depth != program.layers.size() - 1) {
    throw FormatError(Component::Circuit, "program AND-depth does not match its layers");
  }
  for (std::uint32_t slot : program.output_slots) {
    if (slot >= program.num_slots || !defined[slot]) {
      throw FormatError(Component::Circuit, "program output slot " + std::to_string(slot) + " is never written");
    }
  }
}

}  // namespace mpc::circuits
