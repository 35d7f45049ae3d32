#include "support/random_program.hpp"

#include <algorithm>
#include <stdexcept>

#include "protocol/rss3/shares.hpp"

namespace mpc::rss3::testing {

std::vector<std::uint64_t> random_words(std::mt19937_64& rng, std::size_t count) {
  std::vector<std::uint64_t> out(count);
  for (auto& w : out) w = rng();
  return out;
}

std::vector<std::uint8_t> row_bits(const std::vector<std::uint64_t>& words, std::size_t rows, std::size_t instances) {
  const std::size_t per_row = (instances + 63) / 64;
  std::vector<std::uint8_t> bits(rows * instances);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t e = 0; e < instances; ++e) bits[r * instances + e] = (words[r * per_row + e / 64] >> (e % 64)) & 1;
  return bits;
}

circuits::Program random_program(std::mt19937_64& rng, const RandomProgramShape& shape) {
  if (shape.slots < shape.ands_per_layer + 4) throw std::invalid_argument("random_program: too few slots");
  circuits::Program program;
  program.num_inputs = shape.inputs;
  program.num_outputs = shape.outputs;
  program.num_slots = shape.slots;
  auto pick = [&](std::size_t n) { return static_cast<std::uint32_t>(rng() % n); };

  std::vector<std::uint8_t> defined(shape.slots, 0);
  std::vector<std::uint32_t> pending_inputs(shape.inputs);
  for (std::uint32_t i = 0; i < shape.inputs; ++i) pending_inputs[i] = i;
  std::shuffle(pending_inputs.begin(), pending_inputs.end(), rng);

  const std::uint32_t layer_count = shape.and_layers + 1;
  for (std::uint32_t l = 0; l < layer_count; ++l) {
    circuits::Layer layer;
    const bool last = l + 1 == layer_count;
    // Out slots of this layer's ANDs: reserved, neither read nor written by this layer.
    std::vector<std::uint8_t> reserved(shape.slots, 0);
    std::vector<std::uint32_t> and_outs;
    if (!last) {
      std::vector<std::uint32_t> all(shape.slots);
      for (std::uint32_t s = 0; s < shape.slots; ++s) all[s] = s;
      std::shuffle(all.begin(), all.end(), rng);
      and_outs.assign(all.begin(), all.begin() + shape.ands_per_layer);
      for (auto s : and_outs) reserved[s] = 1;
    }
    auto free_slot = [&] {
      for (;;) {
        const std::uint32_t s = pick(shape.slots);
        if (!reserved[s]) return s;
      }
    };
    std::vector<std::uint32_t> readable;
    auto refresh = [&] {
      readable.clear();
      for (std::uint32_t s = 0; s < shape.slots; ++s)
        if (defined[s] && !reserved[s]) readable.push_back(s);
    };
    auto load = [&] {
      const std::uint32_t row = pending_inputs.back();
      pending_inputs.pop_back();
      const std::uint32_t out = free_slot();
      layer.linear.push_back({circuits::OpKind::LoadInput, out, row, 0});
      defined[out] = 1;
    };
    // Inputs arrive spread over the layers (loaded right before use, as compile() does).
    const std::size_t loads = last ? pending_inputs.size()
                                   : std::min(pending_inputs.size(),
                                              std::max<std::size_t>(2, (shape.inputs + layer_count - 1) / layer_count));
    for (std::size_t i = 0; i < loads; ++i) load();
    refresh();
    while (readable.size() < 2) {  // make sure there is something to read
      const std::uint32_t out = free_slot();
      layer.linear.push_back({circuits::OpKind::Const, out, pick(2), 0});
      defined[out] = 1;
      refresh();
    }
    for (std::uint32_t i = 0; i < shape.linear_per_layer; ++i) {
      const std::uint32_t out = free_slot();
      const std::uint32_t in0 = readable[pick(readable.size())];
      const std::uint32_t in1 = readable[pick(readable.size())];
      circuits::LinearOp op{circuits::OpKind::Xor, out, in0, in1};
      if (pick(100) < shape.unusual_percent) {
        switch (pick(4)) {
          case 0: op = {circuits::OpKind::Inv, out, in0, 0}; break;
          case 1: op = {circuits::OpKind::Copy, out, in0, 0}; break;
          case 2: op = {circuits::OpKind::Const, out, pick(2), 0}; break;
          default: op = {circuits::OpKind::Xor, out, in0, in0}; break;  // x ^ x = 0
        }
      }
      layer.linear.push_back(op);
      if (!defined[out]) {
        defined[out] = 1;
        readable.push_back(out);
      }
    }
    for (auto out : and_outs) {
      const std::uint32_t in0 = readable[pick(readable.size())];
      const std::uint32_t in1 = readable[pick(readable.size())];
      layer.ands.push_back({out, in0, in1});
    }
    for (auto out : and_outs) defined[out] = 1;
    program.and_gates += layer.ands.size();
    if (!layer.ands.empty()) program.and_depth += 1;
    program.layers.push_back(std::move(layer));
  }
  std::vector<std::uint32_t> readable;
  for (std::uint32_t s = 0; s < shape.slots; ++s)
    if (defined[s]) readable.push_back(s);
  for (std::uint32_t j = 0; j < shape.outputs; ++j) program.output_slots.push_back(readable[pick(readable.size())]);
  return program;
}

std::vector<std::uint64_t> evaluate_cleartext(const circuits::Program& program,
                                              const std::vector<std::uint64_t>& input_rows,
                                              std::size_t instances) {
  const std::size_t words = words_for(instances);
  if (input_rows.size() != program.num_inputs * words) throw std::invalid_argument("evaluate_cleartext: input size");
  std::vector<std::uint64_t> slots(static_cast<std::size_t>(program.num_slots) * words, 0);
  auto slot = [&](std::uint32_t s) { return slots.data() + static_cast<std::size_t>(s) * words; };
  std::vector<std::uint64_t> and_results;
  for (const auto& layer : program.layers) {
    for (const auto& op : layer.linear) {
      std::uint64_t* o = slot(op.out);
      for (std::size_t w = 0; w < words; ++w) {
        switch (op.kind) {
          case circuits::OpKind::Xor: o[w] = slot(op.in0)[w] ^ slot(op.in1)[w]; break;
          case circuits::OpKind::Inv: o[w] = ~slot(op.in0)[w]; break;
          case circuits::OpKind::Copy: o[w] = slot(op.in0)[w]; break;
          case circuits::OpKind::Const: o[w] = op.in0 ? ~std::uint64_t{0} : 0; break;
          case circuits::OpKind::LoadInput: o[w] = input_rows[static_cast<std::size_t>(op.in0) * words + w]; break;
        }
      }
    }
    and_results.assign(layer.ands.size() * words, 0);
    for (std::size_t k = 0; k < layer.ands.size(); ++k)
      for (std::size_t w = 0; w < words; ++w)
        and_results[k * words + w] = slot(layer.ands[k].in0)[w] & slot(layer.ands[k].in1)[w];
    for (std::size_t k = 0; k < layer.ands.size(); ++k)
      std::copy_n(and_results.data() + k * words, words, slot(layer.ands[k].out));
  }
  std::vector<std::uint64_t> out(static_cast<std::size_t>(program.num_outputs) * words);
  const unsigned tail = static_cast<unsigned>(instances % 64);
  for (std::uint32_t j = 0; j < program.num_outputs; ++j) {
    std::copy_n(slot(program.output_slots[j]), words, out.data() + static_cast<std::size_t>(j) * words);
    if (tail != 0 && words != 0) out[static_cast<std::size_t>(j) * words + words - 1] &= (std::uint64_t{1} << tail) - 1;
  }
  return out;
}

}  // namespace mpc::rss3::testing
