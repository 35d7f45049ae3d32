// cuda/gpu_garbling.hpp: half-gates garbling and evaluation on an NVIDIA GPU (Zahur,
// Rosulek, Evans, "Two Halves Make a Whole", EUROCRYPT 2015; free-XOR, point-and-permute;
// fixed-key TCCR hash of Guo, Katz, Wang, Yu, IEEE S&P 2020, eprint 2019/074), with the
// inputs and outputs of the CPU garbler and evaluator (mpc-engine/protocol/gc2/
// half_gates.hpp): the same stream byte for byte under the same delta, garbling number and
// constant label, so either side of a two-server job may run on the CPU or the GPU.
//
// The GPU garbler draws its garbling numbers from the CPU Garbler it is given (one counter
// per delta, so no tweak ever repeats between CPU and GPU garblings) and its constant
// label from the system CSPRNG, as the CPU garbler does.
//
// Work: per chunk of instances, a layer's linear ops run one thread per label half, its
// ANDs one thread per gate-instance (4 fixed-key AES to garble, 2 to evaluate, T-tables in
// shared memory: their timing depends on label bytes, see docs/gpu.md); the chunk's
// tables go to the channel through pinned memory while the next chunk is garbled.
//
// This header needs no CUDA compiler or headers. Without CUDA the constructor throws
// Error(Component::Protocol) "built without CUDA".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "circuits/program.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::cuda {

class GpuGarbling;

namespace detail {
// For tests: GpuGarbling::garble() with the constant label given rather than drawn, so that
// the stream can be compared with the CPU garbler's.
std::vector<std::uint8_t> garble_with_constant(GpuGarbling& gpu, gc2::Garbler& garbler, const gc2::Block& constant,
                                               const circuits::Program& program, std::size_t instances,
                                               std::span<const gc2::Block> input_zero_labels,
                                               two_party::Channel& channel, gc2::Labels* output_zero_labels);
}  // namespace detail

class GpuGarbling {
 public:
  // Device memory and streams on `device`; throws Error(Protocol) without CUDA or device.
  explicit GpuGarbling(int device = 0);
  ~GpuGarbling();
  GpuGarbling(const GpuGarbling&) = delete;
  GpuGarbling& operator=(const GpuGarbling&) = delete;

  // gc2::Garbler::garble on the GPU: garbles `program` over `instances` instances under
  // garbler.delta() with garbler.draw_garbling_number(), streams header and tables to
  // `channel`, returns the decoding bits (output j of instance e at j * instances + e) and,
  // when given, the output wires' zero labels laid out alike.
  std::vector<std::uint8_t> garble(gc2::Garbler& garbler, const circuits::Program& program, std::size_t instances,
                                   std::span<const gc2::Block> input_zero_labels, two_party::Channel& channel,
                                   gc2::Labels* output_zero_labels = nullptr);

  // gc2::evaluate on the GPU: reads the garbler's stream from `channel` (PeerError when it
  // stops or is malformed), returns the colour bits and, when given, the active labels.
  std::vector<std::uint8_t> evaluate(const circuits::Program& program, std::size_t instances,
                                     std::span<const gc2::Block> input_labels, two_party::Channel& channel,
                                     gc2::Labels* output_labels = nullptr);

  // GPU time of the last call's kernels (milliseconds), without copies: for benchmarks.
  double last_kernel_ms() const noexcept;

  struct Impl;

 private:
  friend std::vector<std::uint8_t> detail::garble_with_constant(GpuGarbling&, gc2::Garbler&, const gc2::Block&,
                                                                const circuits::Program&, std::size_t,
                                                                std::span<const gc2::Block>, two_party::Channel&,
                                                                gc2::Labels*);
  std::unique_ptr<Impl> impl_;
};

// Routing: true when this build has CUDA, a device is present and a garbling of
// `instances` instances is large enough to be faster on the GPU than on one CPU core
// (`min_instances` 0: the default, gpu_garbling_min_instances()).
bool gpu_garbling_preferred(const circuits::Program& program, std::size_t instances,
                            std::size_t min_instances = 0) noexcept;
std::size_t gpu_garbling_min_instances() noexcept;

}  // namespace mpc::cuda
