#include "protocol/gc2/half_gates.hpp"

#include <sodium.h>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::gc2 {
namespace {

using circuits::OpKind;
using two_party::select_mask;

// Wipes the labels it holds when it goes away: with delta they would give away every wire.
struct LabelBuffer {
  std::vector<Block> blocks;
  explicit LabelBuffer(std::size_t n = 0) : blocks(n) {}
  ~LabelBuffer() { wipe(blocks.data(), blocks.size() * sizeof(Block)); }
  Block* data() { return blocks.data(); }
  Block& operator[](std::size_t i) { return blocks[i]; }
  void resize(std::size_t n) { blocks.resize(n); }
};

void check_inputs(const circuits::Program& program, std::size_t instances, std::size_t labels) {
  if (instances == 0) throw Error(Component::Protocol, "garbled circuit of zero instances");
  if (labels != static_cast<std::size_t>(program.num_inputs) * instances)
    throw Error(Component::Protocol, "garbled circuit input: " + std::to_string(labels) + " labels for " +
                                         std::to_string(program.num_inputs) + " rows x " + std::to_string(instances) +
                                         " instances");
}

// The linear ops of a layer on every instance. `flip` is what NOT adds: delta for the garbler
// (the zero label of !x is the one label of x), zero for the evaluator.
void run_linear(const circuits::Layer& layer, std::size_t instances, Block* slots, std::span<const Block> inputs,
                Block flip, Block constant) {
  for (const auto& op : layer.linear) {
    Block* out = slots + static_cast<std::size_t>(op.out) * instances;
    switch (op.kind) {
      case OpKind::Xor: {
        const Block* a = slots + static_cast<std::size_t>(op.in0) * instances;
        const Block* b = slots + static_cast<std::size_t>(op.in1) * instances;
        for (std::size_t e = 0; e < instances; ++e) out[e] = a[e] ^ b[e];
        break;
      }
      case OpKind::Inv: {
        const Block* a = slots + static_cast<std::size_t>(op.in0) * instances;
        for (std::size_t e = 0; e < instances; ++e) out[e] = a[e] ^ flip;
        break;
      }
      case OpKind::Copy: {
        const Block* a = slots + static_cast<std::size_t>(op.in0) * instances;
        for (std::size_t e = 0; e < instances; ++e) out[e] = a[e];
        break;
      }
      case OpKind::Const: {
        const Block value = op.in0 != 0 ? constant ^ flip : constant;
        for (std::size_t e = 0; e < instances; ++e) out[e] = value;
        break;
      }
      case OpKind::LoadInput: {
        const Block* row = inputs.data() + static_cast<std::size_t>(op.in0) * instances;
        for (std::size_t e = 0; e < instances; ++e) out[e] = row[e];
        break;
      }
    }
  }
}

std::vector<std::uint8_t> output_bits(const circuits::Program& program, std::size_t instances, const Block* slots) {
  std::vector<std::uint8_t> bits(static_cast<std::size_t>(program.num_outputs) * instances);
  for (std::size_t j = 0; j < program.num_outputs; ++j) {
    const Block* wire = slots + static_cast<std::size_t>(program.output_slots[j]) * instances;
    for (std::size_t e = 0; e < instances; ++e) bits[j * instances + e] = wire[e].lsb() ? 1 : 0;
  }
  return bits;
}

}  // namespace

std::vector<Block> random_labels(std::size_t count) {
  std::vector<Block> labels(count);
  randombytes_buf(labels.data(), count * sizeof(Block));
  return labels;
}

Block random_delta() {
  Block delta;
  randombytes_buf(&delta, sizeof delta);
  delta.lo |= 1;
  return delta;
}

std::vector<Block> active_labels(std::span<const Block> zero_labels, std::span<const std::uint8_t> bits, Block delta) {
  if (zero_labels.size() != bits.size()) throw Error(Component::Protocol, "active_labels: sizes differ");
  std::vector<Block> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) {
    if (bits[i] > 1) throw Error(Component::Protocol, "active_labels: a bit is neither 0 nor 1");
    out[i] = zero_labels[i] ^ (delta & select_mask(bits[i] != 0));
  }
  return out;
}

std::uint64_t garbled_bytes(const circuits::Program& program, std::size_t instances) {
  return program.and_gates * instances * 2 * sizeof(Block);
}

std::vector<std::uint8_t> garble(const circuits::Program& program, std::size_t instances, Block delta,
                                 std::uint64_t tweak_high, std::span<const Block> input_zero_labels,
                                 Block constant_zero, two_party::Channel& channel, std::uint64_t first_gate) {
  check_inputs(program, instances, input_zero_labels.size());
  if (!delta.lsb()) throw Error(Component::Protocol, "free-XOR offset with lsb 0");
  LabelBuffer slots(static_cast<std::size_t>(program.num_slots) * instances);
  LabelBuffer a0, a1, b0, b1, ha0, ha1, hb0, hb1, tables;
  std::uint64_t gate = first_gate;
  for (const auto& layer : program.layers) {
    run_linear(layer, instances, slots.data(), input_zero_labels, delta, constant_zero);
    if (layer.ands.empty()) continue;
    const std::size_t m = layer.ands.size() * instances;
    a0.resize(m);
    a1.resize(m);
    b0.resize(m);
    b1.resize(m);
    ha0.resize(m);
    ha1.resize(m);
    hb0.resize(m);
    hb1.resize(m);
    tables.resize(2 * m);
    for (std::size_t g = 0; g < layer.ands.size(); ++g) {
      const Block* x = slots.data() + static_cast<std::size_t>(layer.ands[g].in0) * instances;
      const Block* y = slots.data() + static_cast<std::size_t>(layer.ands[g].in1) * instances;
      for (std::size_t e = 0; e < instances; ++e) {
        a0[g * instances + e] = x[e];
        b0[g * instances + e] = y[e];
      }
    }
    // H(A0), H(A1) under tweak 2k; H(B0), H(B1) under 2k + 1 (k = gate + index).
    for (std::size_t i = 0; i < m; ++i) {
      a1[i] = a0[i] ^ delta;
      b1[i] = b0[i] ^ delta;
    }
    two_party::tccr_hash(a0.data(), ha0.data(), m, tweak_high, 2 * gate, 2);
    two_party::tccr_hash(a1.data(), ha1.data(), m, tweak_high, 2 * gate, 2);
    two_party::tccr_hash(b0.data(), hb0.data(), m, tweak_high, 2 * gate + 1, 2);
    two_party::tccr_hash(b1.data(), hb1.data(), m, tweak_high, 2 * gate + 1, 2);
    for (std::size_t g = 0; g < layer.ands.size(); ++g) {
      Block* out = slots.data() + static_cast<std::size_t>(layer.ands[g].out) * instances;
      for (std::size_t e = 0; e < instances; ++e) {
        const std::size_t i = g * instances + e;
        const Block pa = select_mask(a0[i].lsb());
        const Block pb = select_mask(b0[i].lsb());
        // Garbler's half gate: knows the colour of b.
        const Block tg = ha0[i] ^ ha1[i] ^ (delta & pb);
        const Block wg = ha0[i] ^ (tg & pa);
        // Evaluator's half gate: knows b's value relative to its colour.
        const Block te = hb0[i] ^ hb1[i] ^ a0[i];
        const Block we = hb0[i] ^ ((te ^ a0[i]) & pb);
        tables[2 * i] = tg;
        tables[2 * i + 1] = te;
        out[e] = wg ^ we;
      }
    }
    channel.send({reinterpret_cast<const std::uint8_t*>(tables.data()), 2 * m * sizeof(Block)});
    gate += m;
  }
  channel.flush();
  return output_bits(program, instances, slots.data());
}

std::vector<std::uint8_t> evaluate(const circuits::Program& program, std::size_t instances, std::uint64_t tweak_high,
                                   std::span<const Block> input_labels, Block constant_label,
                                   two_party::Channel& channel, std::uint64_t first_gate) {
  check_inputs(program, instances, input_labels.size());
  LabelBuffer slots(static_cast<std::size_t>(program.num_slots) * instances);
  LabelBuffer wa, wb, ha, hb, tables;
  std::uint64_t gate = first_gate;
  for (const auto& layer : program.layers) {
    run_linear(layer, instances, slots.data(), input_labels, Block{}, constant_label);
    if (layer.ands.empty()) continue;
    const std::size_t m = layer.ands.size() * instances;
    wa.resize(m);
    wb.resize(m);
    ha.resize(m);
    hb.resize(m);
    tables.resize(2 * m);
    channel.receive({reinterpret_cast<std::uint8_t*>(tables.data()), 2 * m * sizeof(Block)});
    for (std::size_t g = 0; g < layer.ands.size(); ++g) {
      const Block* x = slots.data() + static_cast<std::size_t>(layer.ands[g].in0) * instances;
      const Block* y = slots.data() + static_cast<std::size_t>(layer.ands[g].in1) * instances;
      for (std::size_t e = 0; e < instances; ++e) {
        wa[g * instances + e] = x[e];
        wb[g * instances + e] = y[e];
      }
    }
    two_party::tccr_hash(wa.data(), ha.data(), m, tweak_high, 2 * gate, 2);
    two_party::tccr_hash(wb.data(), hb.data(), m, tweak_high, 2 * gate + 1, 2);
    for (std::size_t g = 0; g < layer.ands.size(); ++g) {
      Block* out = slots.data() + static_cast<std::size_t>(layer.ands[g].out) * instances;
      for (std::size_t e = 0; e < instances; ++e) {
        const std::size_t i = g * instances + e;
        const Block sa = select_mask(wa[i].lsb());
        const Block sb = select_mask(wb[i].lsb());
        const Block wg = ha[i] ^ (tables[2 * i] & sa);
        const Block we = hb[i] ^ ((tables[2 * i + 1] ^ wa[i]) & sb);
        out[e] = wg ^ we;
      }
    }
    gate += m;
  }
  return output_bits(program, instances, slots.data());
}

}  // namespace mpc::gc2
