// cuda/garble_plan.hpp: a circuits::Program as the GPU half-gates garbler runs it
// (garble_ops.hpp): per layer, its linear ops (one thread per instance and 32-bit word of
// a label walks them in order) and its ANDs (one thread per gate-instance: the gates of a
// layer are independent, circuits::compile() guarantees it), then the output copies.
//
// Plain host C++ (built with or without CUDA): the GPU garbler uploads the ops, the CPU
// tests emulate the kernels over them.
#pragma once

#include <cstdint>
#include <vector>

#include "circuits/program.hpp"
#include "cuda/layer_ops.hpp"

namespace mpc::cuda::detail {

struct GarbleLayer {
  std::uint32_t linear_begin = 0, linear_end = 0;  // into GarblePlan::ops
  std::uint32_t and_begin = 0, and_end = 0;
  std::uint64_t first_gate = 0;  // the program's ANDs before this layer's first
};

struct GarblePlan {
  std::uint32_t num_inputs = 0;
  std::uint32_t num_outputs = 0;
  std::uint32_t num_slots = 0;
  std::uint64_t and_gates = 0;  // per instance, in stream order
  std::vector<DeviceOp> ops;    // garble opcodes (garble_ops.hpp)
  std::vector<GarbleLayer> layers;
  std::uint32_t outputs_begin = 0, outputs_end = 0;
};

// Checks every slot and input index (the kernels trust them) and that program.and_gates
// counts the layers' ANDs (the stream's size depends on it). Throws Error(Component::Protocol)
// "garbled circuit: ...".
GarblePlan build_garble_plan(const circuits::Program& program);

// Device bytes one chunk of `instances` instances needs: slots, input labels, tables,
// output bits and labels (the sizing call of the GPU garbler).
struct GarbleLayout {
  std::size_t slots = 0, inputs = 0, tables = 0, bits = 0, labels = 0, total = 0;
};
GarbleLayout garble_layout(const GarblePlan& plan, std::uint64_t chunk_instances);

}  // namespace mpc::cuda::detail
