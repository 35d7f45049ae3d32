#include "protocol/gc2/half_gates.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "protocol/gc2/gate_kernels.hpp"

namespace mpc::gc2 {
namespace {

using circuits::OpKind;
using two_party::select_mask;

// Garbling numbers stay below 2^63: OT extension's hash tweaks have the top bit set.
constexpr std::uint64_t kGarblingLimit = 1ull << 63;
// Tables are made and consumed in chunks of whole gates of about this size: the evaluator
// starts on a layer while the garbler is still garbling it.
constexpr std::size_t kChunkBytes = 64 * 1024;
// Instances are garbled in tiles of at most this many, each tile through the whole program:
// a tile's slots (num_slots x 32 labels, 270 KiB for AES-128) stay in the L2 cache, and
// 32 instances still fill the kernels' registers from each gate's rows.
constexpr std::size_t kTileInstances = 32;

// One tile of the batch: instances [first, first + count) of `total`.
struct Tile {
  std::size_t first;
  std::size_t count;
  std::size_t total;
};

void check_inputs(const circuits::Program& program, std::size_t instances, std::size_t labels) {
  if (instances == 0) throw Error(Component::Protocol, "garbled circuit of zero instances");
  if (labels != static_cast<std::size_t>(program.num_inputs) * instances)
    throw Error(Component::Protocol, "garbled circuit input: " + std::to_string(labels) + " labels for " +
                                         std::to_string(program.num_inputs) + " rows x " + std::to_string(instances) +
                                         " instances");
  if (program.output_slots.size() != program.num_outputs)
    throw Error(Component::Protocol, "garbled circuit: program outputs inconsistent");
}

// Whole gates per chunk: at least one, however many instances.
std::size_t gates_per_chunk(std::size_t instances) {
  return std::max<std::size_t>(1, kChunkBytes / (2 * instances * sizeof(Block)));
}

// The linear ops of a layer on every instance. `flip` is what NOT adds: delta for the garbler
// (the zero label of !x is the one label of x), zero for the evaluator. `constant` is the
// label of constant 0 on this side (the same on both: its value is public).
void run_linear(const circuits::Layer& layer, const Tile& tile, Block* slots, std::span<const Block> inputs,
                const Block& flip, const Block& constant) {
  const std::size_t instances = tile.count;
  if (instances == 1) {
    // One instance (a single block, the latency case): no loops, no memcpy calls. XOR is
    // nearly every op (96 % of a Kerberos circuit's), so it is tested first and alone: a switch
    // over all five kinds cost a third more here.
    for (const auto& op : layer.linear) {
      Block& out = slots[op.out];
      if (op.kind == OpKind::Xor) [[likely]] {
        out = slots[op.in0] ^ slots[op.in1];
        continue;
      }
      switch (op.kind) {
        case OpKind::Xor: break;
        case OpKind::Inv: out = slots[op.in0] ^ flip; break;
        case OpKind::Copy: out = slots[op.in0]; break;
        case OpKind::Const: out = constant ^ (flip & select_mask(op.in0 != 0)); break;
        case OpKind::LoadInput: out = inputs[static_cast<std::size_t>(op.in0) * tile.total + tile.first]; break;
      }
    }
    return;
  }
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
        if (a != out) std::memcpy(out, a, instances * sizeof(Block));
        break;
      }
      case OpKind::Const: {
        const Block value = constant ^ (flip & select_mask(op.in0 != 0));
        for (std::size_t e = 0; e < instances; ++e) out[e] = value;
        break;
      }
      case OpKind::LoadInput: {
        std::memcpy(out, inputs.data() + static_cast<std::size_t>(op.in0) * tile.total + tile.first,
                    instances * sizeof(Block));
        break;
      }
    }
  }
}

// The lsb of a tile's output labels into bits (output j of instance e at j * total + e), and
// the labels themselves into `labels` when it is given.
void output_bits(const circuits::Program& program, const Tile& tile, const Block* slots,
                 std::vector<std::uint8_t>& bits, Labels* labels) {
  for (std::size_t j = 0; j < program.num_outputs; ++j) {
    const Block* wire = slots + static_cast<std::size_t>(program.output_slots[j]) * tile.count;
    std::uint8_t* out = bits.data() + j * tile.total + tile.first;
    for (std::size_t e = 0; e < tile.count; ++e) out[e] = static_cast<std::uint8_t>(wire[e].lo & 1);
    if (labels != nullptr) std::copy_n(wire, tile.count, labels->data() + j * tile.total + tile.first);
  }
}

void check_kernel(Kernel kernel) {
  if (!kernel_available(kernel))
    throw Error(Component::Protocol, std::string("garbled circuit kernel ") + kernel_name(kernel) +
                                         " is not supported by this CPU");
}

void random_block(Block& out) { randombytes_buf(&out, sizeof out); }

}  // namespace

bool kernel_available(Kernel kernel) { return kernel == Kernel::Portable || detail::vaes_supported(); }

Kernel best_kernel() { return detail::vaes_supported() ? Kernel::Vaes : Kernel::Portable; }

const char* kernel_name(Kernel kernel) { return kernel == Kernel::Vaes ? "vaes" : "portable"; }

Labels zero_labels(std::size_t count) {
  Labels labels(count);
  randombytes_buf(labels.data(), count * sizeof(Block));
  return labels;
}

Garbler::Garbler(Kernel kernel) : kernel_(kernel) {
  check_kernel(kernel);
  random_block(delta_);
  delta_.lo |= 1;
}

Garbler::Garbler(const Block& delta, Kernel kernel) : Garbler(delta, 0, kernel) {}

Garbler::Garbler(const Block& delta, std::uint64_t first_number, Kernel kernel)
    : delta_(delta), kernel_(kernel), next_garbling_(first_number) {
  if (first_number >= kGarblingLimit) {
    wipe(&delta_, sizeof delta_);
    throw Error(Component::Protocol, "garbler: first garbling number at or above 2^63");
  }
  check_kernel(kernel);
  if (!delta_.lsb()) {
    wipe(&delta_, sizeof delta_);
    throw Error(Component::Protocol, "free-XOR offset with lsb 0");
  }
}

Garbler::~Garbler() { wipe(&delta_, sizeof delta_); }

Labels garbler_input_labels(const Garbler& garbler, std::span<const std::uint8_t> values,
                            std::span<const Block> zero_labels) {
  if (zero_labels.size() != values.size())
    throw Error(Component::Protocol, "garbler_input_labels: " + std::to_string(values.size()) + " values for " +
                                         std::to_string(zero_labels.size()) + " labels");
  Labels out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] > 1) throw Error(Component::Protocol, "garbler_input_labels: a value is neither 0 nor 1");
    out[i] = zero_labels[i] ^ (garbler.delta() & select_mask(values[i] != 0));
  }
  return out;
}

std::uint64_t garbled_bytes(const circuits::Program& program, std::size_t instances) {
  return garbled_bytes_of(program.and_gates, instances);
}

std::uint64_t garbled_bytes_of(std::uint64_t and_gates, std::size_t instances) {
  return kStreamHeaderBytes + and_gates * instances * 2 * sizeof(Block);
}

std::vector<std::uint8_t> Garbler::garble(const circuits::Program& program, std::size_t instances,
                                          std::span<const Block> input_zero_labels, two_party::Channel& channel) {
  return garble_into(program, instances, input_zero_labels, channel, nullptr, nullptr);
}

std::vector<std::uint8_t> Garbler::garble(const circuits::Program& program, std::size_t instances,
                                          std::span<const Block> input_zero_labels, two_party::Channel& channel,
                                          Labels& output_zero_labels) {
  output_zero_labels.assign_zero(static_cast<std::size_t>(program.num_outputs) * instances);
  return garble_into(program, instances, input_zero_labels, channel, &output_zero_labels, nullptr);
}

std::vector<std::uint8_t> Garbler::garble(const circuits::Program& program, std::size_t instances,
                                          std::span<const Block> input_zero_labels, two_party::Channel& channel,
                                          Labels& output_zero_labels, const Block& constant_label) {
  output_zero_labels.assign_zero(static_cast<std::size_t>(program.num_outputs) * instances);
  return garble_into(program, instances, input_zero_labels, channel, &output_zero_labels, &constant_label);
}

std::vector<std::uint8_t> Garbler::garble_into(const circuits::Program& program, std::size_t instances,
                                               std::span<const Block> input_zero_labels, two_party::Channel& channel,
                                               Labels* output_zero_labels, const Block* constant_label) {
  check_inputs(program, instances, input_zero_labels.size());
  const std::uint64_t number = next_garbling_.fetch_add(1);
  if (number >= kGarblingLimit) throw Error(Component::Protocol, "garbler: garbling numbers exhausted");

  // Header: the garbling number (the tweaks' high half) and constant 0's label.
  Labels constant(1);
  if (constant_label != nullptr)
    constant[0] = *constant_label;
  else
    random_block(constant[0]);
  std::uint8_t header[kStreamHeaderBytes];
  for (int i = 0; i < 8; ++i) header[i] = static_cast<std::uint8_t>(number >> (8 * i));
  std::memcpy(header + 8, constant.data(), sizeof(Block));
  channel.send(header);

  const std::size_t width = std::min(instances, kTileInstances);
  Labels slots(static_cast<std::size_t>(program.num_slots) * width);
  const std::size_t chunk_gates = gates_per_chunk(width);
  Labels tables(2 * std::min<std::size_t>(chunk_gates, program.and_gates) * width);
  const auto garble_ands = kernel_ == Kernel::Vaes ? detail::vaes_garble_ands : detail::portable_garble_ands;
  std::vector<std::uint8_t> decoding(static_cast<std::size_t>(program.num_outputs) * instances);
  std::uint64_t gate_instance = 0;  // in stream order: the tweaks' low half is twice it (+1)
  // Sent as made, flushed only at the end: the channel hands the transport whole chunks as
  // they fill, so the evaluator starts on the first while the rest is garbled. A flush at a
  // layer's end would follow each chunk with a frame of a few hundred bytes.
  for (Tile tile{0, width, instances}; tile.first < instances; tile.first += width) {
    tile.count = std::min(width, instances - tile.first);
    const std::size_t n = tile.count;
    for (const auto& layer : program.layers) {
      run_linear(layer, tile, slots.data(), input_zero_labels, delta_, constant[0]);
      for (std::size_t first = 0; first < layer.ands.size(); first += chunk_gates) {
        const std::size_t count = std::min(chunk_gates, layer.ands.size() - first);
        garble_ands(layer.ands.data() + first, count, slots.data(), n, tables.data(), delta_, number, gate_instance);
        gate_instance += count * n;
        const std::size_t bytes = 2 * count * n * sizeof(Block);
        channel.send({reinterpret_cast<const std::uint8_t*>(tables.data()), bytes});
      }
    }
    output_bits(program, tile, slots.data(), decoding, output_zero_labels);
  }
  channel.flush();
  return decoding;
}

namespace {

std::vector<std::uint8_t> evaluate_into(const circuits::Program& program, std::size_t instances,
                                        std::span<const Block> input_labels, two_party::Channel& channel,
                                        Labels* output_labels, std::optional<std::uint64_t> expected_number,
                                        Kernel kernel) {
  check_inputs(program, instances, input_labels.size());
  check_kernel(kernel);
  std::uint8_t header[kStreamHeaderBytes];
  channel.receive(header);
  std::uint64_t number = 0;
  for (int i = 0; i < 8; ++i) number |= static_cast<std::uint64_t>(header[i]) << (8 * i);
  if (number >= kGarblingLimit) throw PeerError(Component::Protocol, "garbled circuit stream: bad garbling number");
  if (expected_number && number != *expected_number)
    throw PeerError(Component::Protocol, "garbled circuit stream numbered " + std::to_string(number) +
                                             ", expected " + std::to_string(*expected_number));
  Labels constant(1);
  std::memcpy(constant.data(), header + 8, sizeof(Block));

  const std::size_t width = std::min(instances, kTileInstances);
  Labels slots(static_cast<std::size_t>(program.num_slots) * width);
  const std::size_t chunk_gates = gates_per_chunk(width);
  Labels tables(2 * std::min<std::size_t>(chunk_gates, program.and_gates) * width);
  const auto evaluate_ands = kernel == Kernel::Vaes ? detail::vaes_evaluate_ands : detail::portable_evaluate_ands;
  std::vector<std::uint8_t> colours(static_cast<std::size_t>(program.num_outputs) * instances);
  std::uint64_t gate_instance = 0;
  for (Tile tile{0, width, instances}; tile.first < instances; tile.first += width) {
    tile.count = std::min(width, instances - tile.first);
    const std::size_t n = tile.count;
    for (const auto& layer : program.layers) {
      run_linear(layer, tile, slots.data(), input_labels, Block{}, constant[0]);
      for (std::size_t first = 0; first < layer.ands.size(); first += chunk_gates) {
        const std::size_t count = std::min(chunk_gates, layer.ands.size() - first);
        const std::size_t bytes = 2 * count * n * sizeof(Block);
        const Block* chunk = tables.data();
        const auto in_place = channel.view(bytes);
        if (!in_place.empty() && reinterpret_cast<std::uintptr_t>(in_place.data()) % alignof(Block) == 0)
          chunk = reinterpret_cast<const Block*>(in_place.data());
        else if (!in_place.empty())
          std::memcpy(tables.data(), in_place.data(), bytes);
        else
          channel.receive({reinterpret_cast<std::uint8_t*>(tables.data()), bytes});
        evaluate_ands(layer.ands.data() + first, count, slots.data(), n, chunk, number, gate_instance);
        gate_instance += count * n;
      }
    }
    output_bits(program, tile, slots.data(), colours, output_labels);
  }
  return colours;
}

}  // namespace

std::vector<std::uint8_t> evaluate(const circuits::Program& program, std::size_t instances,
                                   std::span<const Block> input_labels, two_party::Channel& channel, Kernel kernel) {
  return evaluate_into(program, instances, input_labels, channel, nullptr, std::nullopt, kernel);
}

std::vector<std::uint8_t> evaluate(const circuits::Program& program, std::size_t instances,
                                   std::span<const Block> input_labels, two_party::Channel& channel,
                                   Labels& output_labels, Kernel kernel) {
  output_labels.assign_zero(static_cast<std::size_t>(program.num_outputs) * instances);
  return evaluate_into(program, instances, input_labels, channel, &output_labels, std::nullopt, kernel);
}

std::vector<std::uint8_t> evaluate(const circuits::Program& program, std::size_t instances,
                                   std::span<const Block> input_labels, two_party::Channel& channel,
                                   std::uint64_t expected_number, Kernel kernel) {
  return evaluate_into(program, instances, input_labels, channel, nullptr, expected_number, kernel);
}

std::vector<std::uint8_t> evaluate(const circuits::Program& program, std::size_t instances,
                                   std::span<const Block> input_labels, two_party::Channel& channel,
                                   Labels& output_labels, std::uint64_t expected_number, Kernel kernel) {
  output_labels.assign_zero(static_cast<std::size_t>(program.num_outputs) * instances);
  return evaluate_into(program, instances, input_labels, channel, &output_labels, expected_number, kernel);
}

void open_to_evaluator_send(std::span<const std::uint8_t> decoding_bits, two_party::Channel& channel) {
  std::vector<std::uint8_t> packed((decoding_bits.size() + 7) / 8, 0);
  for (std::size_t i = 0; i < decoding_bits.size(); ++i) {
    if (decoding_bits[i] > 1) throw Error(Component::Protocol, "open_to_evaluator: a bit is neither 0 nor 1");
    packed[i / 8] |= static_cast<std::uint8_t>(decoding_bits[i] << (i % 8));
  }
  channel.send(packed);
  channel.flush();
}

std::vector<std::uint8_t> open_to_evaluator_receive(std::span<const std::uint8_t> evaluator_bits,
                                                    two_party::Channel& channel) {
  std::vector<std::uint8_t> packed((evaluator_bits.size() + 7) / 8);
  channel.receive(packed);
  std::vector<std::uint8_t> values(evaluator_bits.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (evaluator_bits[i] > 1) throw Error(Component::Protocol, "open_to_evaluator: a bit is neither 0 nor 1");
    values[i] = static_cast<std::uint8_t>(((packed[i / 8] >> (i % 8)) & 1) ^ evaluator_bits[i]);
  }
  if (!values.empty() && (values.size() % 8) != 0 && (packed.back() >> (values.size() % 8)) != 0)
    throw PeerError(Component::Protocol, "open_to_evaluator: padding bits set");
  return values;
}

}  // namespace mpc::gc2
