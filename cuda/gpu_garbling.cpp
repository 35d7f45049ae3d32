// cuda/gpu_garbling.cpp: host side of the GPU half-gates garbler and evaluator (see
// gpu_garbling.hpp): chunks of instances, each with its own area (input labels, tables,
// output bits and labels), two areas used in turn.
//
// Garbler: the kernels of chunk c+1 run while chunk c's tables go device -> pinned ->
// channel in pieces through two pinned buffers; chunk c+2 is queued as soon as chunk c's
// tables and outputs have left its area. The tables' download is then the only serial
// path: 32 bytes per AND over PCIe (docs/gpu.md, section 8).
// Evaluator: chunk c+1's tables come channel -> pinned -> device while chunk c computes.
// Input labels, both sides: host threads copy each chunk's columns from the caller's
// pageable array into pinned slots (staging_pool.hpp), from which they go up on their own
// stream; chunk c+2's may go up once chunk c's kernels are done with its area.
//
// Slots, input labels (secret on the garbler's side: zero labels and delta's offsets) and
// the areas are wiped on the device after every call, the staging slots by the staging
// threads; the tables' pinned buffers hold only tables, which the channel carries anyway,
// and are wiped when released.
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
#include "cuda/device_upload.hpp"
#include "cuda/garble_kernels.hpp"
#include "cuda/garble_plan.hpp"
#include "cuda/gpu_garbling.hpp"
#include "cuda/input_staging.hpp"
#include "cuda/staging_pool.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::cuda {
namespace {

using detail::check;
using detail::DeviceBuffer;
using detail::DeviceUpload;
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
    input = std::make_unique<Stream>();
    events = std::make_unique<Events>();
    const unsigned threads = detail::default_staging_threads();
    staging = std::make_unique<DeviceUpload>(device, detail::staging_slots_for(threads),
                                             detail::kDefaultStagingSlotBytes);
    stagers = std::make_unique<detail::StagingPool>(*staging, threads);
  }

  ~Impl() {
    (void)cudaSetDevice(device);
    for (auto* s : {&compute, &copy, &input})
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
    // Slots once, then two areas for what a chunk reads and hands over (inputs, tables,
    // bits, labels), used by even and odd chunks.
    const std::size_t area = layout.total - layout.inputs;
    const std::size_t total = layout.inputs + 2 * area;
    if (workspace.bytes() < total) {
      check(cudaDeviceSynchronize(), "garbling workspace growth");
      workspace.allocate(total, "garbling workspace");
    }
    for (PinnedBuffer& b : pinned)
      if (b.bytes() < kPieceBytes) b.allocate(kPieceBytes);
    if (output_labels != nullptr) output_labels->assign_zero(std::size_t{p.num_outputs} * instances);
    std::vector<std::uint8_t> bits(std::size_t{p.num_outputs} * instances);
    struct Wipe {  // the device's labels and the staging slots, on every exit path
      Impl& impl;
      std::size_t bytes;
      ~Wipe() {
        impl.stagers->abandon();  // no effect after finish(); else no thread reads the inputs after this
        (void)cudaStreamSynchronize(impl.input->get());
        (void)cudaMemsetAsync(impl.workspace.as<void>(), 0, bytes, impl.compute->get());
        (void)cudaStreamSynchronize(impl.compute->get());
        (void)cudaStreamSynchronize(impl.copy->get());
      }
    } wipe_on_exit{*this, total};

    static constexpr detail::AesTables kTables = detail::make_aes_tables();
    GarbleArgs base{};
    base.ops = ops.as<detail::DeviceOp>();
    base.slots = workspace.as<Label>(layout.slots);
    base.key = detail::aes128_expand_key(two_party::kFixedKey, kTables);
    base.flip = flip;
    base.constant = constant;
    base.tweak_high = number;
    base.and_gates = p.and_gates;
    base.instances = instances;
    base.garbler = garbler ? 1 : 0;
    const std::uint64_t chunks = (instances + chunk - 1) / chunk;
    auto area_of = [&](std::uint64_t c) { return layout.inputs + area * (c % 2); };
    auto args_of = [&](std::uint64_t c) {
      GarbleArgs a = base;
      const std::size_t at = area_of(c);
      a.inputs = workspace.as<Label>(at);
      a.tables = workspace.as<Label>(at + (layout.tables - layout.inputs));
      a.bits = workspace.as<std::uint8_t>(at + (layout.bits - layout.inputs));
      a.output_labels = workspace.as<Label>(at + (layout.labels - layout.inputs));
      a.first = c * chunk;
      a.count = std::min<std::uint64_t>(chunk, instances - a.first);
      return a;
    };
    const cudaStream_t cs = compute->get();
    const cudaStream_t xs = copy->get();
    const cudaStream_t is = input->get();
    kernel_ms = 0;

    // Input labels: chunk c's columns into its area, from pinned slots the staging threads
    // fill. Chunk c+2 shares chunk c's area: its copies wait until chunk c's kernels are
    // done, and may only be issued once that wait can be queued (allow() after chunk c).
    staging_plan = detail::garbling_input_staging(p.num_inputs, instances, chunk, sizeof(Label), staging->slot_bytes());
    {
      std::vector<DeviceUpload::Destination> destinations;
      std::vector<detail::HostRows> sources;
      for (std::uint64_t c = 0; c < chunks; ++c) {
        destinations.push_back({workspace.as<std::uint8_t>(area_of(c)), std::min(chunk, instances - c * chunk) * sizeof(Label),
                                c * chunk * sizeof(Label)});
        sources.push_back({reinterpret_cast<const std::uint8_t*>(inputs.data()), instances * sizeof(Label)});
      }
      staging->configure(
          is, std::move(destinations),
          [this, is](std::uint32_t c) {
            if (c >= 2) check(cudaStreamWaitEvent(is, events->inputs_free[c % 2].get(), 0), "stream order");
          },
          [this, is](std::uint32_t c) { check(cudaEventRecord(events->inputs_ready[c % 2].get(), is), "event"); });
      stagers->begin(staging_plan, std::move(sources), 2);
    }

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

    auto compute_chunk = [&](std::uint64_t c) {
      const GarbleArgs a = args_of(c);
      const std::size_t parity = c % 2;
      if (p.num_inputs != 0) {
        stagers->wait_group(static_cast<std::uint32_t>(c));
        check(cudaStreamWaitEvent(cs, events->inputs_ready[parity].get(), 0), "stream order");
      }
      if (!garbler) check(cudaStreamWaitEvent(cs, events->tables_ready[parity].get(), 0), "stream order");
      check(cudaEventRecord(events->kernels_begin[parity].get(), cs), "event");
      for (const detail::GarbleLayer& layer : p.layers) {
        check(detail::launch_garble_linear(a, layer.linear_begin, layer.linear_end, cs), "garbling linear kernel");
        check(detail::launch_garble_ands(a, layer.and_begin, layer.and_end - layer.and_begin, layer.first_gate, cs),
              "garbling AND kernel");
      }
      check(detail::launch_garble_linear(a, p.outputs_begin, p.outputs_end, cs), "garbling output kernel");
      check(cudaEventRecord(events->kernels_end[parity].get(), cs), "event");
      check(cudaEventRecord(events->inputs_free[parity].get(), cs), "event");
      check(cudaEventRecord(events->chunk_done[parity].get(), cs), "event");
      stagers->allow(static_cast<std::uint32_t>(std::min<std::uint64_t>(c + 3, chunks)));
    };
    auto add_kernel_time = [&](std::uint64_t c) {
      const std::size_t parity = c % 2;
      check(cudaEventSynchronize(events->kernels_end[parity].get()), "garbling kernels");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, events->kernels_begin[parity].get(), events->kernels_end[parity].get()), "timing");
      kernel_ms += ms;
    };

    if (garbler) {
      // Chunk c+1 computes while chunk c's tables travel; chunk c+2 takes chunk c's area
      // once its tables and outputs have left it.
      compute_chunk(0);
      if (chunks > 1) compute_chunk(1);
      for (std::uint64_t c = 0; c < chunks; ++c) {
        const GarbleArgs a = args_of(c);
        move_tables(a, true);
        outputs_of(a);
        add_kernel_time(c);
        if (c + 2 < chunks) compute_chunk(c + 2);
      }
    } else {
      // Chunk c+1's tables arrive while chunk c computes (in the area chunk c-1 has left:
      // its kernels were waited for in the previous round).
      move_tables(args_of(0), false);
      for (std::uint64_t c = 0; c < chunks; ++c) {
        compute_chunk(c);
        if (c + 1 < chunks) move_tables(args_of(c + 1), false);
        add_kernel_time(c);
        outputs_of(args_of(c));
      }
    }
    stagers->finish();
    return bits;
  }

  struct Events {
    std::array<Event, 2> kernels_begin{Event{true}, Event{true}}, kernels_end{Event{true}, Event{true}};
    std::array<Event, 2> chunk_done, tables_ready, piece, inputs_ready, inputs_free;
  };

  int device;
  std::unique_ptr<Stream> compute, copy, input;
  std::unique_ptr<Events> events;
  GarblePlan plan;
  circuits::Program program_copy;
  const circuits::Program* cached_program = nullptr;
  DeviceBuffer ops;
  DeviceBuffer workspace;
  std::array<PinnedBuffer, 2> pinned;
  // Input labels' staging: the slots and their copies, then the threads (which use them).
  std::unique_ptr<DeviceUpload> staging;
  std::unique_ptr<detail::StagingPool> stagers;
  detail::StagingPlan staging_plan;  // of the call in progress
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
