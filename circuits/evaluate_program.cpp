#include <string>

#include "circuits/evaluate.hpp"
#include "common/error.hpp"

namespace mpc::circuits {

std::vector<std::uint64_t> evaluate_program_packed(const Program& program,
                                                   const std::vector<std::uint64_t>& input_words) {
  validate(program);
  if (input_words.size() != program.num_inputs) {
    throw FormatError(Component::Circuit, "program expects " + std::to_string(program.num_inputs) +
                                              " inputs, got " + std::to_string(input_words.size()));
  }
  std::vector<std::uint64_t> slots(program.num_slots, 0);
  std::vector<std::uint64_t> and_results;
  for (const Layer& layer : program.layers) {
    for (const LinearOp& op : layer.linear) {
      switch (op.kind) {
        case OpKind::Xor: slots[op.out] = slots[op.in0] ^ slots[op.in1]; break;
        case OpKind::Inv: slots[op.out] = ~slots[op.in0]; break;
        case OpKind::Copy: slots[op.out] = slots[op.in0]; break;
        case OpKind::Const: slots[op.out] = op.in0 != 0 ? ~std::uint64_t{0} : 0; break;
        case OpKind::LoadInput: slots[op.out] = input_words[op.in0]; break;
      }
    }
    // Local phase reads every AND's operands before the finish phase writes any result,
    // as the protocols do around their one exchange per layer.
    and_results.resize(layer.ands.size());
    for (std::size_t i = 0; i < layer.ands.size(); ++i) {
      and_results[i] = slots[layer.ands[i].in0] & slots[layer.ands[i].in1];
    }
    for (std::size_t i = 0; i < layer.ands.size(); ++i) slots[layer.ands[i].out] = and_results[i];
  }
  std::vector<std::uint64_t> outputs(program.output_slots.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) outputs[i] = slots[program.output_slots[i]];
  return outputs;
}

}  // namespace mpc::circuits
