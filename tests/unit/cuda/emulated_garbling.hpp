// tests/unit/cuda/emulated_garbling.hpp: the GPU garbler's algorithm run on the CPU.
//
// Same plan (garble_plan.hpp), same per-thread primitives (garble_ops.hpp: garble_linear
// on one half of one instance's label, garble_and on one gate-instance), same chunking of
// the batch and the same chunk-local layouts as cuda/gpu_garbling.cpp and
// cuda/garble_kernels.cu, and the same input staging: input_staging.hpp's plan carried
// through slots by a StagingPool, into two input areas that even and odd chunks take in
// turn, chunk c+2's copies held back until chunk c is done with the area. Slots, tables
// and the input areas (after each chunk) are poisoned, so a read of a label nothing wrote
// surfaces as a mismatch. Threads run in reverse order (a kernel that depended on the
// order of its threads would then differ from the CPU garbler).
//
// What it does not cover: the CUDA runtime calls, which only a GPU run checks.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/aes_ttable.hpp"
#include "cuda/garble_ops.hpp"
#include "cuda/garble_plan.hpp"
#include "cuda/input_staging.hpp"
#include "cuda/staging_pool.hpp"
#include "lazy_upload.hpp"
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
// tables read from `tables_in`) `instances` instances in chunks of `chunk` (a multiple of
// 32); input labels staged through `slots` slots of `slot_bytes` by `threads` threads.
inline EmulatedGarbling emulate_garbling(const detail::GarblePlan& plan, std::uint64_t instances,
                                         std::span<const two_party::Block> inputs, detail::Label flip,
                                         detail::Label constant, std::uint64_t number, bool garbler,
                                         std::span<const detail::Label> tables_in, std::uint64_t chunk,
                                         unsigned threads = 2, std::size_t slots = 3,
                                         std::uint64_t slot_bytes = 1000) {
  using namespace detail;
  static constexpr AesTables kTables = make_aes_tables();
  EmulatedGarbling out;
  const Label poison{0x5a5a5a5a5a5a5a5aull, 0xa5a5a5a5a5a5a5a5ull};
  out.tables.assign(2 * plan.and_gates * instances, poison);
  if (!garbler) std::copy(tables_in.begin(), tables_in.end(), out.tables.begin());
  out.bits.assign(plan.num_outputs * instances, 0xee);
  out.labels.assign(plan.num_outputs * instances, poison);

  const std::uint64_t chunks = (instances + chunk - 1) / chunk;
  std::array<std::vector<Label>, 2> areas;
  for (auto& area : areas) area.assign(plan.num_inputs * std::min(chunk, instances), poison);
  std::vector<std::atomic<bool>> done(chunks);
  std::string misordered;
  const StagingPlan staging_plan = garbling_input_staging(plan.num_inputs, instances, chunk, sizeof(Label), slot_bytes);
  LazyUpload engine(slots, slot_bytes);
  {
    std::vector<LazyUpload::Destination> destinations;
    for (std::uint64_t c = 0; c < chunks; ++c)
      destinations.push_back({reinterpret_cast<std::uint8_t*>(areas[c % 2].data()),
                              std::min(chunk, instances - c * chunk) * sizeof(Label), c * chunk * sizeof(Label)});
    engine.configure(std::move(destinations), [&](std::uint32_t c) {
      // The device would wait here for chunk c-2's kernels; they must have been queued.
      if (c >= 2 && !done[c - 2].load()) misordered += "chunk " + std::to_string(c) + " issued before chunk c-2 ran\n";
    });
  }
  StagingPool stagers(engine, threads);
  stagers.begin(staging_plan,
                std::vector<HostRows>(chunks, HostRows{reinterpret_cast<const std::uint8_t*>(inputs.data()),
                                                       instances * sizeof(Label)}),
                2);
  static_assert(sizeof(two_party::Block) == sizeof(Label), "labels are blocks");

  for (std::uint64_t c = 0; c < chunks; ++c) {
    const std::uint64_t first = c * chunk;
    const std::uint64_t count = std::min(chunk, instances - first);
    std::vector<Label> slots_area(plan.num_slots * count, poison);
    if (plan.num_inputs != 0) {
      stagers.wait_group(static_cast<std::uint32_t>(c));
      if (!engine.complete_group(static_cast<std::uint32_t>(c)))
        throw Error(Component::Protocol, "emulated device: waited for a group nobody closed");
    }
    std::vector<std::uint8_t> bits(plan.num_outputs * count, 0xee);
    std::vector<Label> labels(plan.num_outputs * count, poison);
    GarbleArgs args{};
    args.ops = plan.ops.data();
    args.slots = slots_area.data();
    args.inputs = areas[c % 2].data();
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
    // The kernels are done with the area: poison it, then let chunk c+2's labels in.
    std::fill(areas[c % 2].begin(), areas[c % 2].end(), poison);
    done[c].store(true);
    stagers.allow(static_cast<std::uint32_t>(std::min<std::uint64_t>(c + 3, chunks)));
  }
  stagers.finish();
  if (!engine.violations().empty() || !misordered.empty())
    throw Error(Component::Protocol, "staging misused:\n" + engine.violations() + misordered);
  return out;
}

}  // namespace mpc::cuda::test
