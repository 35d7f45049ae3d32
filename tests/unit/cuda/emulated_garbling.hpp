// tests/unit/cuda/emulated_garbling.hpp: the GPU garbler's algorithm run on the CPU.
//
// Same plan (garble_plan.hpp), same per-thread primitives (garble_ops.hpp: garble_linear
// on one half of one instance's label, garble_and on one gate-instance), same chunking of
// the batch and the same chunk-local layouts as cuda/gpu_garbling.cpp and
// cuda/garble_kernels.cu; slots and tables are poisoned before use, so a read of a label
// nothing wrote surfaces as a mismatch. Threads run in reverse order (a kernel that
// depended on the order of its threads would then differ from the CPU garbler).
//
// What it does not cover: the CUDA runtime calls, which only a GPU run checks.
#pragma once

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "cuda/aes_ttable.hpp"
#include "cuda/garble_ops.hpp"
#include "cuda/garble_plan.hpp"
#include "protocol/two_party/block.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::cuda::test {

struct EmulatedGarbling {
  std::vector<detail::Label> tables;  // the stream after its header, as labels
  std::vector<std::uint8_t> bits;     // output j of instance i at j * instances + i
  std::vector<detail::Label> labels;  // likewise
};

inline detail::Label to_label(const two_party::Block& b) { return detail::Label{b.lo, b.hi}; }

// Garbles (garbler = true: flip is delta, tables are written) or evaluates (flip zero,
// tables read from `tables_in`) `instances` instances in chunks of `chunk` (a multiple of 32).
inline EmulatedGarbling emulate_garbling(const detail::GarblePlan& plan, std::uint64_t instances,
                                         std::span<const two_party::Block> inputs, detail::Label flip,
                                         detail::Label constant, std::uint64_t number, bool garbler,
                                         std::span<const detail::Label> tables_in, std::uint64_t chunk) {
  using namespace detail;
  static constexpr AesTables kTables = make_aes_tables();
  EmulatedGarbling out;
  const Label poison{0x5a5a5a5a5a5a5a5aull, 0xa5a5a5a5a5a5a5a5ull};
  out.tables.assign(2 * plan.and_gates * instances, poison);
  if (!garbler) std::copy(tables_in.begin(), tables_in.end(), out.tables.begin());
  out.bits.assign(plan.num_outputs * instances, 0xee);
  out.labels.assign(plan.num_outputs * instances, poison);
  for (std::uint64_t first = 0; first < instances; first += chunk) {
    const std::uint64_t count = std::min(chunk, instances - first);
    std::vector<Label> slots(plan.num_slots * count, poison);
    std::vector<Label> chunk_inputs(plan.num_inputs * count);
    for (std::uint32_t r = 0; r < plan.num_inputs; ++r)
      for (std::uint64_t l = 0; l < count; ++l) chunk_inputs[r * count + l] = to_label(inputs[r * instances + first + l]);
    std::vector<std::uint8_t> bits(plan.num_outputs * count, 0xee);
    std::vector<Label> labels(plan.num_outputs * count, poison);
    GarbleArgs args{};
    args.ops = plan.ops.data();
    args.slots = slots.data();
    args.inputs = chunk_inputs.data();
    args.tables = out.tables.data() + 2 * plan.and_gates * first;
    args.bits = bits.data();
    args.output_labels = labels.data();
    args.key = aes128_expand_key(two_party::kFixedKey, kTables);
    args.flip = flip;
    args.constant = constant;
    args.tweak_high = number;
    args.and_gates = plan.and_gates;
    args.instances = instances;
    args.first = first;
    args.count = count;
    args.garbler = garbler ? 1 : 0;
    auto linear = [&](std::uint32_t begin, std::uint32_t end) {
      for (std::uint64_t t = 2 * count; t-- > 0;)  // thread t: instance t / 2, half t % 2
        for (std::uint32_t i = begin; i < end; ++i)
          garble_linear(args, plan.ops[i], t / 2, static_cast<std::uint32_t>(t % 2));
    };
    for (const GarbleLayer& layer : plan.layers) {
      linear(layer.linear_begin, layer.linear_end);
      const std::uint64_t gates = layer.and_end - layer.and_begin;
      for (std::uint64_t t = gates * count; t-- > 0;)  // thread t: gate t / count, instance t % count
        garble_and(args, plan.ops[layer.and_begin + t / count], layer.first_gate + t / count, t % count, kTables.te,
                   kTables.sbox);
    }
    linear(plan.outputs_begin, plan.outputs_end);
    for (std::uint32_t j = 0; j < plan.num_outputs; ++j)
      for (std::uint64_t l = 0; l < count; ++l) {
        out.bits[j * instances + first + l] = bits[j * count + l];
        out.labels[j * instances + first + l] = labels[j * count + l];
      }
  }
  return out;
}

}  // namespace mpc::cuda::test
