// cuda/gpu_garbling.cpp: host side of the GPU half-gates garbler and evaluator (see
// gpu_garbling.hpp): chunks of instances, two of them in flight. While the compute stream
// garbles chunk c, the host moves chunk c-1's tables device -> pinned -> channel in pieces
// (the evaluator: channel -> pinned -> device for chunk c+1), so PCIe and the channel
// overlap the kernels. Slots and input labels (secret on the garbler's side: zero labels
// and delta's offsets) are wiped on the device after every call; pinned memory holds only
// tables, which the channel carries anyway, and is wiped when released.
#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/garble_kernels.hpp"
#include "cuda/garble_plan.hpp"
#include "cuda/gpu_garbling.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::cuda {
namespace {

using detail::check;
using detail::DeviceBuffer;
using detail::Event;
using detail::GarbleArgs;
using detail::GarbleLayout;
using detail::GarblePlan;
using detail::Label;
using detail::PinnedBuffer;
using detail::Stream;

constexpr std::uint64_t kGarbleChunk = 16384;           // instances per chunk (a multiple of 32)
constexpr std::size_t kPieceBytes = std::size_t{64} << 20;  // tables per pinned piece
constexpr std::size_t kHeaderBytes = 8 + sizeof(gc2::Block);
constexpr std::uint64_t kGarblingLimit = std::uint64_t{1} << 63;
// Below this many instances one CPU core garbles AES sooner than the GPU's launches and
// copies allow: a model puts the crossover near 64 instances of AES-128; a conservative
// default until `cuda_bench --mode garble` has measured it (docs/gpu.md, section 8).
constexpr std::size_t kGarblingMinInstances = 256;

static_assert(kGarbleChunk % 32 == 0, "chunks hold whole tiles of the stream");
static_assert(sizeof(Label) == sizeof(gc2::Block), "labels are blocks");

Label to_label(const gc2::Block& b) { return Label{b.lo, b.hi}; }

}  // namespace

struct GpuGarbling::Impl {
  explicit Impl(int device) : device(device) {
    select();
    compute = std::make_unique<Stream>();
    copy = std::make_unique<Stream>();
    events = std::make_unique<Events>();
  }

  ~Impl() {
    (void)cudaSetDevice(device);
    for (auto* s : {&compute, &copy})
      if (*s) (void)cudaStreamSynchronize((*s)->get());
  }

  void select() const { check(cudaSetDevice(device), "cudaSetDevice"); }

  const GarblePlan& plan_for(const circuits::Program& program) {
    // One program cached: a server garbles the same circuit over and over.
    if (cached_program != nullptr && same_program(*cached_program, program)) return plan;
    plan = detail::build_garble_plan(program);
    ops.allocate(plan.ops.size() * sizeof(detail::DeviceOp), "garbling program upload");
    if (!plan.ops.empty())
      check(cudaMemcpy(ops.as<void>(), plan.ops.data(), plan.ops.size() * sizeof(detail::DeviceOp),
                       cudaMemcpyHostToDevice),
            "garbling program upload");
    program_copy = program;
    cached_program = &program_copy;
    return plan;
  }

  static bool same_program(const circuits::Program& a, const circuits::Program& b) {
    if (a.num_inputs != b.num_inputs || a.num_outputs != b.num_outputs || a.num_slots != b.num_slots ||
        a.and_gates != b.and_gates || a.layers.size() != b.layers.size() || a.output_slots != b.output_slots)
      return false;
    for (std::size_t l = 0; l < a.layers.size(); ++l) {
      const auto& x = a.layers[l];
      const auto& y = b.layers[l];
      if (x.linear.size() != y.linear.size() || x.ands.size() != y.ands.size()) return false;
      for (std::size_t i = 0; i < x.linear.size(); ++i)
        if (x.linear[i].kind != y.linear[i].kind || x.linear[i].out != y.linear[i].out ||
            x.linear[i].in0 != y.linear[i].in0 || x.linear[i].in1 != y.linear[i].in1)
          return false;
      for (std::size_t i = 0; i < x.ands.size(); ++i)
        if (x.ands[i].out != y.ands[i].out || x.ands[i].in0 != y.ands[i].in0 || x.ands[i].in1 != y.ands[i].in1)
          return false;
    }
    return true;
  }

  // One garbling (flip = delta) or evaluation (flip = 0); the header was handled by the caller.
  std::vector<std::uint8_t> run(const circuits::Program& program, std::size_t instances,
                                std::span<const gc2::Block> inputs, Label flip, Label constant, std::uint64_t number,
                                bool garbler, two_party::Channel& channel, gc2::Labels* output_labels) {
    const GarblePlan& p = plan_for(program);
    const std::uint64_t chunk = std::min<std::uint64_t>(kGarbleChunk, (instances + 31) / 32 * 32);
    const GarbleLayout layout = detail::garble_layout(p, chunk);
    // Two areas for what a chunk hands over (tables, bits, labels), slots and inputs once.
    const std::size_t area = layout.total - layout.tables;
    const std::size_t total = layout.tables + 2 * area;
    if (workspace.bytes() < total) {
      check(cudaDeviceSynchronize(), "garbling workspace growth");
      workspace.allocate(total, "garbling workspace");
    }
    for (PinnedBuffer& b : pinned)
      if (b.bytes() < kPieceBytes) b.allocate(kPieceBytes);
    if (output_labels != nullptr) output_labels->assign_zero(std::size_t{p.num_outputs} * instances);
    std::vector<std::uint8_t> bits(std::size_t{p.num_outputs} * instances);
    struct Wipe {  // the device's labels, on every exit path
      Impl& impl;
      std::size_t bytes;
      ~Wipe() {
        (void)cudaMemsetAsync(impl.workspace.as<void>(), 0, bytes, impl.compute->get());
        (void)cudaStreamSynchronize(impl.compute->get());
        (void)cudaStreamSynchronize(impl.copy->get());
      }
    } wipe_on_exit{*this, total};

    static constexpr detail::AesTables kTables = detail::make_aes_tables();
    GarbleArgs base{};
    base.ops = ops.as<detail::DeviceOp>();
    base.slots = workspace.as<Label>(layout.slots);
    base.inputs = workspace.as<Label>(layout.inputs);
    base.key = detail::aes128_expand_key(two_party::kFixedKey, kTables);
    base.flip = flip;
    base.constant = constant;
    base.tweak_high = number;
    base.and_gates = p.and_gates;
    base.instances = instances;
    base.garbler = garbler ? 1 : 0;
    auto args_of = [&](std::uint64_t first) {
      GarbleArgs a = base;
      const std::size_t at = layout.tables + area * ((first / chunk) % 2);
      a.tables = workspace.as<Label>(at);
      a.bits = workspace.as<std::uint8_t>(at + (layout.bits - layout.tables));
      a.output_labels = workspace.as<Label>(at + (layout.labels - layout.tables));
      a.first = first;
      a.count = std::min<std::uint64_t>(chunk, instances - first);
      return a;
    };
    const cudaStream_t cs = compute->get();
    const cudaStream_t xs = copy->get();
    kernel_ms = 0;

    // Tables of a chunk between the device and the channel, piece by piece through the two
    // pinned buffers (a piece's copy overlaps the channel's work on the previous one).
    auto move_tables = [&](const GarbleArgs& a, bool to_channel) {
      const std::size_t bytes = static_cast<std::size_t>(2 * p.and_gates * a.count * sizeof(Label));
      auto* device_bytes = reinterpret_cast<std::uint8_t*>(a.tables);
      const std::size_t pieces = (bytes + kPieceBytes - 1) / kPieceBytes;
      auto piece = [&](std::size_t k) { return std::min(kPieceBytes, bytes - k * kPieceBytes); };
      if (to_channel) {
        check(cudaStreamWaitEvent(xs, events->chunk_done[(a.first / chunk) % 2].get(), 0), "stream order");
        for (std::size_t k = 0; k < std::min<std::size_t>(2, pieces); ++k) {
          check(cudaMemcpyAsync(pinned[k].data(), device_bytes + k * kPieceBytes, piece(k), cudaMemcpyDeviceToHost, xs),
                "tables download");
          check(cudaEventRecord(events->piece[k].get(), xs), "event");
        }
        for (std::size_t k = 0; k < pieces; ++k) {
          check(cudaEventSynchronize(events->piece[k % 2].get()), "tables download");
          channel.send({pinned[k % 2].data(), piece(k)});
          if (k + 2 < pieces) {
            check(cudaMemcpyAsync(pinned[k % 2].data(), device_bytes + (k + 2) * kPieceBytes, piece(k + 2),
                                  cudaMemcpyDeviceToHost, xs),
                  "tables download");
            check(cudaEventRecord(events->piece[k % 2].get(), xs), "event");
          }
        }
      } else {
        for (std::size_t k = 0; k < pieces; ++k) {
          // The pinned buffer's previous upload must be done before the channel refills it.
          if (k >= 2) check(cudaEventSynchronize(events->piece[k % 2].get()), "tables upload");
          channel.receive({pinned[k % 2].data(), piece(k)});
          check(cudaMemcpyAsync(device_bytes + k * kPieceBytes, pinned[k % 2].data(), piece(k),
                                cudaMemcpyHostToDevice, xs),
                "tables upload");
          check(cudaEventRecord(events->piece[k % 2].get(), xs), "event");
        }
        check(cudaEventRecord(events->tables_ready[(a.first / chunk) % 2].get(), xs), "event");
        for (auto& e : events->piece) check(cudaEventSynchronize(e.get()), "tables upload");
      }
    };

    auto outputs_of = [&](const GarbleArgs& a) {
      if (p.num_outputs == 0) return;
      check(cudaStreamWaitEvent(xs, events->chunk_done[(a.first / chunk) % 2].get(), 0), "stream order");
      check(cudaMemcpy2DAsync(bits.data() + a.first, instances, a.bits, a.count, a.count, p.num_outputs,
                              cudaMemcpyDeviceToHost, xs),
            "output bits");
      if (output_labels != nullptr)
        check(cudaMemcpy2DAsync(output_labels->data() + a.first, instances * sizeof(Label), a.output_labels,
                                a.count * sizeof(Label), a.count * sizeof(Label), p.num_outputs,
                                cudaMemcpyDeviceToHost, xs),
              "output labels");
      check(cudaStreamSynchronize(xs), "outputs");
    };

    auto compute_chunk = [&](const GarbleArgs& a) {
      if (p.num_inputs != 0)
        check(cudaMemcpy2DAsync(const_cast<Label*>(a.inputs), a.count * sizeof(Label), inputs.data() + a.first,
                                instances * sizeof(Label), a.count * sizeof(Label), p.num_inputs,
                                cudaMemcpyHostToDevice, cs),
              "input labels");
      if (!garbler) check(cudaStreamWaitEvent(cs, events->tables_ready[(a.first / chunk) % 2].get(), 0), "stream order");
      check(cudaEventRecord(events->kernels_begin.get(), cs), "event");
      for (const detail::GarbleLayer& layer : p.layers) {
        check(detail::launch_garble_linear(a, layer.linear_begin, layer.linear_end, cs), "garbling linear kernel");
        check(detail::launch_garble_ands(a, layer.and_begin, layer.and_end - layer.and_begin, layer.first_gate, cs),
              "garbling AND kernel");
      }
      check(detail::launch_garble_linear(a, p.outputs_begin, p.outputs_end, cs), "garbling output kernel");
      check(cudaEventRecord(events->kernels_end.get(), cs), "event");
      check(cudaEventRecord(events->chunk_done[(a.first / chunk) % 2].get(), cs), "event");
    };
    auto add_kernel_time = [&] {
      check(cudaEventSynchronize(events->kernels_end.get()), "garbling kernels");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, events->kernels_begin.get(), events->kernels_end.get()), "timing");
      kernel_ms += ms;
    };

    if (garbler) {
      // Chunk c computes while chunk c-1's tables travel.
      bool pending = false;
      GarbleArgs previous{};
      for (std::uint64_t first = 0; first < instances; first += chunk) {
        const GarbleArgs a = args_of(first);
        compute_chunk(a);
        if (pending) {
          move_tables(previous, true);
          outputs_of(previous);
        }
        add_kernel_time();
        previous = a;
        pending = true;
      }
      move_tables(previous, true);
      outputs_of(previous);
    } else {
      // Chunk c+1's tables arrive while chunk c computes.
      move_tables(args_of(0), false);
      for (std::uint64_t first = 0; first < instances; first += chunk) {
        const GarbleArgs a = args_of(first);
        compute_chunk(a);
        if (first + chunk < instances) move_tables(args_of(first + chunk), false);
        add_kernel_time();
        outputs_of(a);
      }
    }
    return bits;
  }

  struct Events {
    Event kernels_begin{true}, kernels_end{true};
    std::array<Event, 2> chunk_done, tables_ready, piece;
  };

  int device;
  std::unique_ptr<Stream> compute, copy;
  std::unique_ptr<Events> events;
  GarblePlan plan;
  circuits::Program program_copy;
  const circuits::Program* cached_program = nullptr;
  DeviceBuffer ops;
  DeviceBuffer workspace;
  std::array<PinnedBuffer, 2> pinned;
  double kernel_ms = 0;
  std::mutex mutex;  // one garbling or evaluation at a time
};

namespace {

void check_call(const circuits::Program& program, std::size_t instances, std::size_t labels) {
  if (instances == 0) throw Error(Component::Protocol, "garbled circuit of zero instances");
  if (labels != static_cast<std::size_t>(program.num_inputs) * instances)
    throw Error(Component::Protocol, "garbled circuit input: " + std::to_string(labels) + " labels for " +
                                         std::to_string(program.num_inputs) + " rows x " + std::to_string(instances) +
                                         " instances");
}

std::vector<std::uint8_t> garble_impl(GpuGarbling::Impl& impl, gc2::Garbler& garbler, const gc2::Block& constant,
                                      const circuits::Program& program, std::size_t instances,
                                      std::span<const gc2::Block> zero_labels, two_party::Channel& channel,
                                      gc2::Labels* output_zero_labels) {
  check_call(program, instances, zero_labels.size());
  std::lock_guard<std::mutex> lock(impl.mutex);
  impl.select();
  (void)impl.plan_for(program);  // refuses a bad program before a garbling number is drawn
  const std::uint64_t number = garbler.draw_garbling_number();
  std::uint8_t header[kHeaderBytes];
  for (int i = 0; i < 8; ++i) header[i] = static_cast<std::uint8_t>(number >> (8 * i));
  std::memcpy(header + 8, &constant, sizeof constant);
  channel.send(header);
  std::vector<std::uint8_t> decoding = impl.run(program, instances, zero_labels, to_label(garbler.delta()),
                                                to_label(constant), number, true, channel, output_zero_labels);
  channel.flush();
  return decoding;
}

}  // namespace

GpuGarbling::GpuGarbling(int device) {
  if (!cuda_device_available()) throw Error(Component::Protocol, "no CUDA device for garbling");
  int count = 0;
  check(cudaGetDeviceCount(&count), "device count");
  if (device < 0 || device >= count) throw Error(Component::Protocol, "no CUDA device " + std::to_string(device));
  impl_ = std::make_unique<Impl>(device);
}

GpuGarbling::~GpuGarbling() = default;

std::vector<std::uint8_t> GpuGarbling::garble(gc2::Garbler& garbler, const circuits::Program& program,
                                              std::size_t instances, std::span<const gc2::Block> input_zero_labels,
                                              two_party::Channel& channel, gc2::Labels* output_zero_labels) {
  gc2::Labels constant(1);
  randombytes_buf(constant.data(), sizeof(gc2::Block));
  return garble_impl(*impl_, garbler, constant[0], program, instances, input_zero_labels, channel, output_zero_labels);
}

std::vector<std::uint8_t> GpuGarbling::evaluate(const circuits::Program& program, std::size_t instances,
                                                std::span<const gc2::Block> input_labels, two_party::Channel& channel,
                                                gc2::Labels* output_labels) {
  check_call(program, instances, input_labels.size());
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->select();
  (void)impl_->plan_for(program);
  std::uint8_t header[kHeaderBytes];
  channel.receive(header);
  std::uint64_t number = 0;
  for (int i = 0; i < 8; ++i) number |= static_cast<std::uint64_t>(header[i]) << (8 * i);
  if (number >= kGarblingLimit) throw PeerError(Component::Protocol, "garbled circuit stream: bad garbling number");
  Label constant{};
  std::memcpy(&constant, header + 8, sizeof constant);
  std::vector<std::uint8_t> colours =
      impl_->run(program, instances, input_labels, Label{0, 0}, constant, number, false, channel, output_labels);
  wipe(&constant, sizeof constant);
  return colours;
}

double GpuGarbling::last_kernel_ms() const noexcept { return impl_->kernel_ms; }

namespace detail {
std::vector<std::uint8_t> garble_with_constant(GpuGarbling& gpu, gc2::Garbler& garbler, const gc2::Block& constant,
                                               const circuits::Program& program, std::size_t instances,
                                               std::span<const gc2::Block> input_zero_labels,
                                               two_party::Channel& channel, gc2::Labels* output_zero_labels) {
  return garble_impl(*gpu.impl_, garbler, constant, program, instances, input_zero_labels, channel,
                     output_zero_labels);
}
}  // namespace detail

std::size_t gpu_garbling_min_instances() noexcept { return kGarblingMinInstances; }

bool gpu_garbling_preferred(const circuits::Program& program, std::size_t instances, std::size_t min_instances) noexcept {
  if (program.and_gates == 0) return false;
  return instances >= (min_instances != 0 ? min_instances : kGarblingMinInstances) && cuda_device_available();
}

}  // namespace mpc::cuda
