// cuda/cuda_evaluator.cpp: the GPU evaluator (Araki, Furukawa, Lindell, Nof, Ohara,
// "High-Throughput Semi-Honest Secure Three-Party Computation with an Honest Majority",
// ACM CCS 2016, eprint 2016/768): host side, the owner of streams, device and pinned
// memory, and of the order in which kernels, copies and exchanges happen.
//
// Streams and what they carry, per pass p (finish of layer p-1, linear ops and AND local
// phase of layer p):
//   compute:  pass kernels (staged or device-memory), segment by segment; the outputs
//   prf:      alpha of layer p+1 (GPU PRF) while pass p runs: it waits only for pass p-1,
//             the last reader of the buffer it fills (outgoing messages rotate over three)
//   input:    input rows from pinned slots that host threads fill from the caller's
//             pageable matrices (staging_pool.hpp), issued by those threads as each slot
//             fills; the rows a pass loads first form a group, and the pass waits for its
//             group's event only (the staging runs ahead of the passes on its own)
//   upload:   incoming messages (segment by segment) and CPU alpha
//   download: outgoing messages, each segment after its kernel
// Host-staged messages (LayerExchange): the host waits for the download of layer p, calls
// exchange(), and the next pass's segments start as their part of the answer arrives.
// Device messages (DeviceRing): nothing waits on the host; the next party's pass reads the
// message where this party's kernel wrote it, ordered by events that the ring hands over.
//
// Nothing synchronous on the hot path: no allocation after reserve(), no wipe of host
// memory per layer, and the end of an evaluation waits only for its outputs. The device
// workspace (shares) is wiped by an asynchronous memset queued after the output copy,
// ahead of anything the next evaluation does; pinned alpha (CPU alpha only) is wiped
// after each evaluation; the staging slots (input shares) are wiped by the staging
// threads once their last copy has read them, while the last passes run. Pinned message
// buffers hold what crosses the wire (r masked by alpha, which only the PRF keys unmask)
// and are wiped when released or on failure.
//
// Memory: one device workspace and four pinned buffers, sized by
// detail::workspace_layout() (the sizing call) and grown only by reserve() or by an
// evaluation that needs more, and a fixed set of staging slots (CudaOptions). One
// evaluation at a time per evaluator (a mutex); use one evaluator per party and per batch
// in flight.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "cuda/aes_ttable.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "cuda/cuda_resources.hpp"
#include "cuda/device_helpers.hpp"
#include "cuda/device_plan.hpp"
#include "cuda/device_ring.hpp"
#include "cuda/device_upload.hpp"
#include "cuda/kernels.hpp"
#include "cuda/input_staging.hpp"
#include "cuda/staging_pool.hpp"
#include "cuda/timeline.hpp"

namespace mpc::cuda {
namespace {

using detail::check;
using detail::DeviceBuffer;
using detail::DevicePlan;
using detail::DeviceUpload;
using detail::Event;
using detail::PinnedBuffer;
using detail::Stream;
using detail::Timeline;
using detail::WorkspaceLayout;
using Clock = std::chrono::steady_clock;

constexpr int kMinComputeMajor = 9;         // built for sm_90 (SASS) + compute_90 (PTX)
constexpr std::size_t kCachedPrograms = 8;  // as the CPU evaluator's plan cache
constexpr std::uint64_t kMaxSegments = 4;   // copy/compute overlap granularity per pass
constexpr int kSegmentBlocksPerSm = 4;      // a segment must still fill the GPU: chunks >= this * SMs
constexpr std::size_t kRing = 4;            // events per kind, reused round robin (see passes())

bool device_usable(int device) noexcept {
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return major >= kMinComputeMajor;
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Adds the time until it goes out of scope to a host counter of the profile.
class HostTimer {
 public:
  explicit HostTimer(double& sink) : sink_(sink), start_(Clock::now()) {}
  HostTimer(const HostTimer&) = delete;
  HostTimer& operator=(const HostTimer&) = delete;
  ~HostTimer() { sink_ += ms_since(start_); }

 private:
  double& sink_;
  Clock::time_point start_;
};

// A plan resident on the device: op and level arrays uploaded once per program.
struct ResidentProgram {
  DevicePlan plan;
  DeviceBuffer ops, level_bounds;
  DeviceBuffer staged_ops, staged_bounds;
};

bool well_formed(const rss3::ShareMatrix& m) {
  return m.words_per_row == rss3::words_for(m.instances) &&
         (m.words_per_row == 0 || m.rows <= m.x.max_size() / m.words_per_row) &&
         m.x.size() == m.rows * m.words_per_row && m.a.size() == m.x.size();
}

// Where alpha comes from (the caller's CorrelatedRandomness or the GPU PRF) and where
// messages go (a LayerExchange through pinned host memory, or a DeviceRing).
struct Io {
  rss3::CorrelatedRandomness* randomness = nullptr;
  const DevicePrf* prf = nullptr;
  rss3::LayerExchange* exchange = nullptr;
  DeviceRing* ring = nullptr;
  int party = 0;
};

void upload_program(DeviceBuffer& buffer, const void* data, std::size_t bytes) {
  buffer.allocate(bytes, "program upload");
  if (bytes != 0) check(cudaMemcpy(buffer.as<void>(), data, bytes, cudaMemcpyHostToDevice), "program upload");
}

class CudaEvaluatorImpl final : public CudaEvaluator {
 public:
  CudaEvaluatorImpl(int device, const CudaOptions& options) : device_(device), options_(options) {
    if (options.staged_words != 0 && options.staged_words != 8 && options.staged_words != 16 &&
        options.staged_words != 32)
      throw Error(Component::Protocol, "staged kernel blocks of " + std::to_string(options.staged_words) +
                                           " words: 8, 16 or 32");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device_), "device properties");
    name_ = "cuda-" + std::to_string(device_) + " (" + prop.name + ", sm_" + std::to_string(prop.major) +
            std::to_string(prop.minor) + ")";
    min_segment_chunks_ = static_cast<std::uint64_t>(std::max(1, prop.multiProcessorCount)) * kSegmentBlocksPerSm;
    shared_per_block_ = static_cast<std::uint64_t>(prop.sharedMemPerBlockOptin);
    shared_per_sm_ = static_cast<std::uint64_t>(prop.sharedMemPerMultiprocessor);
    select();
    check(detail::prepare_staged_kernels(static_cast<int>(shared_per_block_)), "staged kernel set-up");
    for (auto* s : {&compute_, &prf_, &input_, &upload_, &download_}) *s = std::make_unique<Stream>();
    events_ = std::make_unique<Events>();
    const unsigned threads = options.staging_threads != 0 ? options.staging_threads : detail::default_staging_threads();
    const std::uint64_t slot_bytes =
        options.staging_slot_bytes != 0 ? options.staging_slot_bytes : detail::kDefaultStagingSlotBytes;
    staging_ = std::make_unique<DeviceUpload>(device_, detail::staging_slots_for(threads), slot_bytes);
    stagers_ = std::make_unique<detail::StagingPool>(*staging_, threads);
  }

  ~CudaEvaluatorImpl() override {
    // Every evaluation ends with its wipe still queued: wait for it before the buffers'
    // release (which zeroes and frees them) and the streams' destruction.
    (void)cudaSetDevice(device_);
    for (auto* s : {&compute_, &prf_, &input_, &upload_, &download_})
      if (*s) (void)cudaStreamSynchronize((*s)->get());
  }

  rss3::EvaluationStats evaluate(const circuits::Program& program, const rss3::ShareMatrix& inputs,
                                 rss3::ShareMatrix& outputs, rss3::CorrelatedRandomness& randomness,
                                 rss3::LayerExchange& exchange) override {
    Io io;
    io.randomness = &randomness;
    io.exchange = &exchange;
    return run(program, inputs, outputs, io);
  }

  rss3::EvaluationStats evaluate_with_device_prf(const circuits::Program& program, const rss3::ShareMatrix& inputs,
                                                 rss3::ShareMatrix& outputs, const DevicePrf& prf,
                                                 rss3::LayerExchange& exchange) override {
    Io io;
    io.prf = &prf;
    io.exchange = &exchange;
    return run(program, inputs, outputs, io);
  }

  rss3::EvaluationStats evaluate_on_ring(const circuits::Program& program, const rss3::ShareMatrix& inputs,
                                         rss3::ShareMatrix& outputs, const DevicePrf& prf, DeviceRing& ring,
                                         int party) override {
    Io io;
    io.prf = &prf;
    io.ring = &ring;
    io.party = party;
    try {
      return run(program, inputs, outputs, io);
    } catch (...) {
      ring.abort();
      throw;
    }
  }

  void reserve(const circuits::Program& program, std::size_t instances) override {
    std::lock_guard<std::mutex> lock(mutex_);
    select();
    const ResidentProgram& resident = program_for(program);
    if (instances != 0) ensure_memory(detail::workspace_layout(resident.plan, instances, kernel_for(resident.plan) != 0));
  }

  EvaluationProfile last_profile() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return profile_;
  }

  std::string name() const override { return name_; }
  int device() const noexcept override { return device_; }

 private:
  void select() const { check(cudaSetDevice(device_), "cudaSetDevice"); }

  // Words per block of the staged kernel for `plan`, or 0 for the device-memory kernel.
  std::uint32_t kernel_for(const DevicePlan& plan) const {
    if (options_.kernel == CudaKernel::DeviceMemory) return 0;
    const detail::StagedPlan& staged = plan.staged;
    auto fits = [&](std::uint32_t words, std::uint64_t blocks) {
      // Each block also has 1 KiB of shared memory the system reserves.
      return detail::staged_shared_bytes(staged.max_regs, words) <= shared_per_block_ &&
             blocks * (detail::staged_shared_bytes(staged.max_regs, words) + 1024) <= shared_per_sm_;
    };
    std::uint32_t words = 0;
    if (staged.usable) {
      if (options_.staged_words != 0) {
        if (fits(options_.staged_words, 1)) words = options_.staged_words;
      } else {
        for (std::uint32_t w : {32u, 16u, 8u})
          if (words == 0 && fits(w, 2)) words = w;
        for (std::uint32_t w : {32u, 16u, 8u})
          if (words == 0 && fits(w, 1)) words = w;
      }
    }
    if (words == 0 && options_.kernel == CudaKernel::Staged)
      throw Error(Component::Protocol, "the staged kernel cannot run this program (registers or slots)");
    return words;
  }

  // The resident plan of `program` (recognised by content, most recently used first).
  const ResidentProgram& program_for(const circuits::Program& program) {
    for (std::size_t i = 0; i < programs_.size(); ++i) {
      if (detail::plan_matches(program, programs_[i]->plan)) {
        std::rotate(programs_.begin(), programs_.begin() + static_cast<std::ptrdiff_t>(i),
                    programs_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        return *programs_.front();
      }
    }
    auto resident = std::make_unique<ResidentProgram>();
    resident->plan = detail::build_device_plan(program);
    const DevicePlan& plan = resident->plan;
    upload_program(resident->ops, plan.ops.data(), plan.ops.size() * sizeof(detail::DeviceOp));
    upload_program(resident->level_bounds, plan.level_bounds.data(), plan.level_bounds.size() * sizeof(std::uint32_t));
    if (plan.staged.usable) {
      upload_program(resident->staged_ops, plan.staged.ops.data(), plan.staged.ops.size() * sizeof(detail::DeviceOp));
      upload_program(resident->staged_bounds, plan.staged.level_bounds.data(),
                     plan.staged.level_bounds.size() * sizeof(std::uint32_t));
    }
    programs_.insert(programs_.begin(), std::move(resident));
    if (programs_.size() > kCachedPrograms) programs_.pop_back();
    return *programs_.front();
  }

  void ensure_memory(const WorkspaceLayout& layout) {
    if (workspace_.bytes() < layout.total) {
      check(cudaDeviceSynchronize(), "workspace growth");  // an earlier wipe may still be queued
      workspace_.release();
      workspace_.allocate(layout.total, "device workspace");
    }
    const std::size_t message = layout.message_capacity;
    for (PinnedBuffer* b : {&host_out_, &host_in_, &host_alpha_[0], &host_alpha_[1]})
      if (b->bytes() < message) b->allocate(message);
  }

  // Per-layer events of the device ring, grown to the plan's passes.
  void ensure_ring_events(std::size_t passes) {
    while (ready_.size() < passes) ready_.push_back(std::make_unique<Event>());
    while (consumed_.size() < passes) consumed_.push_back(std::make_unique<Event>());
  }

  void ensure_row_events(std::size_t passes) {
    while (rows_ready_.size() < passes) rows_ready_.push_back(std::make_unique<Event>());
  }

  rss3::EvaluationStats run(const circuits::Program& program, const rss3::ShareMatrix& inputs,
                            rss3::ShareMatrix& outputs, const Io& io) {
    const Clock::time_point start = Clock::now();
    if (inputs.rows != program.num_inputs)
      throw Error(Component::Protocol, "input matrix has " + std::to_string(inputs.rows) + " rows, program expects " +
                                           std::to_string(program.num_inputs));
    if (!well_formed(inputs)) throw Error(Component::Protocol, "malformed input share matrix");

    std::lock_guard<std::mutex> lock(mutex_);
    select();
    profile_ = EvaluationProfile{};
    const ResidentProgram& resident = program_for(program);
    const std::uint32_t words = kernel_for(resident.plan);
    const std::uint64_t generation = io.ring != nullptr ? io.ring->state().begin(io.party) : 0;

    rss3::ShareMatrix aliased;
    rss3::ShareMatrix& target = (&outputs == &inputs) ? aliased : outputs;
    const std::size_t n = inputs.instances;
    if (target.rows != program.num_outputs || target.instances != n || !well_formed(target)) {
      target.wipe();
      target = rss3::ShareMatrix(program.num_outputs, n);
    }
    rss3::EvaluationStats stats;
    if (n != 0) {
      const WorkspaceLayout layout = detail::workspace_layout(resident.plan, n, words != 0);
      ensure_memory(layout);
      Failure failure(*this, layout);
      passes(resident, layout, words, inputs, target, io, generation, stats);
      failure.disarm();
    }
    if (&target == &aliased) outputs = std::move(aliased);
    profile_.wall_ms = ms_since(start);
    if (!options_.profile) profile_ = EvaluationProfile{};
    return stats;
  }

  // On an exception: waits for every stream and wipes everything the evaluation used.
  class Failure {
   public:
    Failure(CudaEvaluatorImpl& owner, const WorkspaceLayout& layout) : owner_(owner), layout_(layout) {}
    Failure(const Failure&) = delete;
    Failure& operator=(const Failure&) = delete;
    ~Failure() {
      if (armed_) owner_.wipe_after_failure(layout_);
    }
    void disarm() noexcept { armed_ = false; }

   private:
    CudaEvaluatorImpl& owner_;
    WorkspaceLayout layout_;
    bool armed_ = true;
  };

  void wipe_after_failure(const WorkspaceLayout& layout) noexcept {
    stagers_->abandon();  // first: no staging thread may read the caller's inputs after this
    for (auto* s : {&compute_, &prf_, &input_, &upload_, &download_}) (void)cudaStreamSynchronize((*s)->get());
    if (layout.total != 0) (void)cudaMemset(workspace_.as<void>(), 0, layout.total);
    (void)cudaDeviceSynchronize();
    for (PinnedBuffer* b : {&host_out_, &host_in_, &host_alpha_[0], &host_alpha_[1]})
      if (b->bytes() != 0) wipe(b->data(), std::min(b->bytes(), layout.message_capacity));
  }

  void passes(const ResidentProgram& resident, const WorkspaceLayout& layout, std::uint32_t staged_words,
              const rss3::ShareMatrix& inputs, rss3::ShareMatrix& outputs, const Io& io, std::uint64_t generation,
              rss3::EvaluationStats& stats) {
    const DevicePlan& plan = resident.plan;
    const bool staged = staged_words != 0;
    const bool ring = io.ring != nullptr;
    const std::uint64_t n = inputs.instances;
    const std::uint64_t words = detail::words_for(n);
    const std::uint64_t pitch = layout.pitch;
    const std::uint64_t chunks = detail::chunks_for(n);
    const std::size_t pass_count = plan.passes.size();
    const cudaStream_t compute = compute_->get();
    const cudaStream_t prf = prf_->get();
    const cudaStream_t input = input_->get();
    const cudaStream_t upload = upload_->get();
    const cudaStream_t download = download_->get();
    DeviceRing::State* ring_state = ring ? &io.ring->state() : nullptr;
    if (ring) ensure_ring_events(pass_count);
    ensure_row_events(pass_count);
    timeline_.reset(options_.profile);
    profile_.passes = static_cast<std::uint32_t>(pass_count);
    profile_.staged_words = staged_words;

    // Everything of this evaluation comes after the previous one's wipe (queued on compute).
    check(cudaEventRecord(events_->start.get(), compute), "event");
    for (cudaStream_t s : {prf, input, upload, download}) check(cudaStreamWaitEvent(s, events_->start.get(), 0), "stream order");
    const int span = timeline_.begin(Timeline::kSpan, compute);

    // Segments of whole chunks: the unit of copy/compute overlap for host-staged messages,
    // only for batches large enough that each segment's kernel still fills the GPU.
    const std::uint64_t segments =
        ring ? 1 : std::clamp<std::uint64_t>(chunks / min_segment_chunks_, 1, kMaxSegments);
    profile_.segments = static_cast<std::uint32_t>(segments);
    std::array<std::uint64_t, kMaxSegments + 1> seg{};
    for (std::uint64_t s = 0; s <= segments; ++s) seg[s] = chunks * s / segments;

    // ---- input rows: padding words zeroed once; the rows themselves go up from pinned slots
    // that the staging threads fill, group p holding the rows pass p loads first
    // (input_staging.hpp); rows_ready_[p] is recorded after group p's last copy.
    const std::size_t row_bytes = words * sizeof(std::uint64_t);
    const std::size_t pitch_bytes = pitch * sizeof(std::uint64_t);
    std::uint64_t* in_x = workspace_.as<std::uint64_t>(layout.in_x);
    std::uint64_t* in_a = workspace_.as<std::uint64_t>(layout.in_a);
    if (plan.num_inputs != 0 && pitch > words) {
      for (std::uint64_t* rows : {in_x, in_a})
        check(cudaMemset2DAsync(rows + words, pitch_bytes, 0, pitch_bytes - row_bytes, plan.num_inputs, input),
              "input padding");
    }
    staging_plan_ = detail::evaluator_input_staging(plan, n, staging_->slot_bytes());
    staging_->timeline().reset(options_.profile);
    staging_->configure(input,
                        {{workspace_.as<std::uint8_t>(layout.in_x), pitch_bytes, 0},
                         {workspace_.as<std::uint8_t>(layout.in_a), pitch_bytes, 0}},
                        {}, [this, input](std::uint32_t group) {
                          check(cudaEventRecord(rows_ready_[group]->get(), input), "event");
                        });
    stagers_->begin(staging_plan_,
                    {{reinterpret_cast<const std::uint8_t*>(inputs.x.data()), row_bytes},
                     {reinterpret_cast<const std::uint8_t*>(inputs.a.data()), row_bytes}},
                    static_cast<std::uint32_t>(pass_count));
    auto wait_rows = [&](std::size_t pass) {
      if (plan.input_row_bounds[pass] == plan.input_row_bounds[pass + 1]) return;
      {
        HostTimer timer(profile_.host_input_ms);
        stagers_->wait_group(static_cast<std::uint32_t>(pass));
      }
      check(cudaStreamWaitEvent(compute, rows_ready_[pass]->get(), 0), "stream order");
    };

    // ---- alpha: layer q into msg_out[q % 3]. That buffer last held r of layer q-3, read by
    // pass q-2 (its finish), by the download of layer q-3 (waited for before that exchange)
    // and, on a ring, by the next party's pass q-2 (its receipt).
    detail::AlphaKeys keys{};
    std::uint64_t counter = 0;
    if (io.prf != nullptr) {
      static constexpr detail::AesTables kTables = detail::make_aes_tables();
      keys.own = detail::aes128_expand_key(io.prf->own_key.data(), kTables);
      keys.previous = detail::aes128_expand_key(io.prf->previous_key.data(), kTables);
      std::uint32_t block[4];
      detail::counter_block_words(io.prf->nonce.epoch, io.prf->nonce.sequence, 0, block);
      std::copy(block, block + 3, keys.prefix);
      counter = io.prf->first_block;
      std::uint64_t needed = 0;
      for (const detail::PassPlan& pass : plan.passes)
        if (pass.ands != 0) needed += detail::alpha_bytes(detail::message_bytes(n, pass.ands)) / 16;
      if (counter > rss3::kOutputMaskCounterBase || needed > rss3::kOutputMaskCounterBase - counter) {
        wipe(&keys, sizeof keys);
        throw Error(Component::Protocol, "correlated randomness exhausted for this batch");
      }
    }
    struct KeyWipe {
      detail::AlphaKeys& keys;
      ~KeyWipe() { wipe(&keys, sizeof keys); }
    } key_wipe{keys};

    std::size_t receipts_through = 0;  // ring: receipts of layers below this are waited for
    auto wait_receipts_below = [&](std::size_t layer_end, cudaStream_t stream) {
      for (; receipts_through < layer_end; ++receipts_through) {
        if (plan.passes[receipts_through].ands == 0) continue;
        HostTimer timer(profile_.host_ring_ms);
        const auto receipt =
            ring_state->receipt(io.party, generation, static_cast<std::uint32_t>(receipts_through));
        check(cudaStreamWaitEvent(stream, static_cast<cudaEvent_t>(receipt.consumed), 0), "stream order");
      }
    };

    std::array<bool, 2> host_alpha_pending{false, false};
    std::array<std::size_t, 2> host_alpha_event{0, 0};
    std::size_t host_alpha_used = 0;
    auto produce_alpha = [&](std::size_t q) {
      const std::uint64_t bytes = detail::alpha_bytes(detail::message_bytes(n, plan.passes[q].ands));
      std::uint8_t* device_alpha = workspace_.as<std::uint8_t>(layout.msg_out[q % 3]);
      const cudaStream_t stream = io.prf != nullptr ? prf : upload;
      if (q >= 2) check(cudaStreamWaitEvent(stream, events_->pass_done[(q - 2) % kRing].get(), 0), "stream order");
      if (ring && q >= 3) wait_receipts_below(q - 2, stream);
      if (io.prf != nullptr) {
        const int interval = timeline_.begin(Timeline::kAlpha, prf);
        check(detail::launch_alpha(keys, static_cast<std::uint32_t>(counter), bytes / 16, device_alpha, prf),
              "alpha kernel");
        timeline_.end(interval, prf);
        counter += bytes / 16;
      } else {
        const std::size_t b = q & 1;
        HostTimer timer(profile_.host_alpha_ms);
        // The pinned buffer was last read by the upload two layers ago.
        if (host_alpha_pending[b])
          check(cudaEventSynchronize(events_->alpha_done[host_alpha_event[b]].get()), "alpha upload");
        io.randomness->next_alpha({host_alpha_[b].data(), static_cast<std::size_t>(bytes)});
        host_alpha_used = std::max<std::size_t>(host_alpha_used, bytes);
        const int interval = timeline_.begin(Timeline::kMessageUp, upload);
        check(cudaMemcpyAsync(device_alpha, host_alpha_[b].data(), bytes, cudaMemcpyHostToDevice, upload),
              "alpha upload");
        timeline_.end(interval, upload);
        host_alpha_pending[b] = true;
        host_alpha_event[b] = q % kRing;
      }
      check(cudaEventRecord(events_->alpha_done[q % kRing].get(), stream), "event");
    };

    detail::PassArgs args{};
    args.instances = n;
    args.pitch = pitch;
    args.state = workspace_.as<std::uint64_t>(layout.state);
    args.in_x = in_x;
    args.in_a = in_a;
    args.out_x = workspace_.as<std::uint64_t>(layout.out_x);
    args.out_a = workspace_.as<std::uint64_t>(layout.out_a);
    args.ops = resident.ops.as<detail::DeviceOp>();
    detail::StagedArgs sargs{};
    sargs.instances = n;
    sargs.pitch = pitch;
    sargs.state = args.state;
    sargs.in_x = in_x;
    sargs.in_a = in_a;
    sargs.out_x = args.out_x;
    sargs.out_a = args.out_a;
    sargs.ops = resident.staged_ops.as<detail::DeviceOp>();

    if (plan.passes[0].ands != 0) produce_alpha(0);
    const std::uint8_t* ring_in = nullptr;  // ring: where the previous party's message of layer p-1 lies
    for (std::size_t p = 0; p < pass_count; ++p) {
      const detail::PassPlan& pass = plan.passes[p];
      std::uint8_t* and_msg = workspace_.as<std::uint8_t>(layout.msg_out[p % 3]);
      std::uint8_t* msg_in = workspace_.as<std::uint8_t>(layout.msg_in[(p + 1) & 1]);
      const std::uint8_t* fin_in = ring ? ring_in : msg_in;
      args.level_bounds = resident.level_bounds.as<std::uint32_t>() + pass.first_level;
      args.levels = pass.levels;
      args.ands = pass.ands;
      args.prev_ands = pass.prev_ands;
      args.and_msg = and_msg;
      args.fin_out = workspace_.as<std::uint8_t>(layout.msg_out[(p + 2) % 3]);
      args.fin_in = fin_in;
      std::uint32_t regs = 0;
      if (staged) {
        const detail::StagedPassPlan& sp = plan.staged.passes[p];
        sargs.level_bounds = resident.staged_bounds.as<std::uint32_t>() + sp.first_level;
        sargs.levels = sp.levels;
        sargs.ands = sp.ands;
        sargs.prev_ands = sp.prev_ands;
        sargs.and_msg = and_msg;
        sargs.fin_out = args.fin_out;
        sargs.fin_in = fin_in;
        regs = sp.regs;
      }
      if (pass.ands != 0) check(cudaStreamWaitEvent(compute, events_->alpha_done[p % kRing].get(), 0), "stream order");
      wait_rows(p);

      const int pass_interval = timeline_.begin(Timeline::kPass, compute);
      for (std::uint64_t s = 0; s < segments; ++s) {
        if (!ring && pass.prev_ands != 0) {
          const std::uint64_t lo = detail::message_prefix_bytes(n, pass.prev_ands, seg[s]);
          const std::uint64_t hi = detail::message_prefix_bytes(n, pass.prev_ands, seg[s + 1]);
          const int interval = timeline_.begin(Timeline::kMessageUp, upload);
          check(cudaMemcpyAsync(msg_in + lo, host_in_.data() + lo, hi - lo, cudaMemcpyHostToDevice, upload),
                "message upload");
          timeline_.end(interval, upload);
          check(cudaEventRecord(events_->segment_in[s].get(), upload), "event");
          check(cudaStreamWaitEvent(compute, events_->segment_in[s].get(), 0), "stream order");
        }
        if (staged) {
          check(detail::launch_staged_pass(sargs, staged_words, seg[s] * detail::kChunkWords,
                                           (seg[s + 1] - seg[s]) * detail::kChunkWords, regs, compute),
                "staged pass kernel");
        } else {
          check(detail::launch_pass(args, seg[s], seg[s + 1] - seg[s], compute), "pass kernel");
        }
        if (!ring && pass.ands != 0) {
          const std::uint64_t lo = detail::message_prefix_bytes(n, pass.ands, seg[s]);
          const std::uint64_t hi = detail::message_prefix_bytes(n, pass.ands, seg[s + 1]);
          check(cudaEventRecord(events_->segment_done[s].get(), compute), "event");
          check(cudaStreamWaitEvent(download, events_->segment_done[s].get(), 0), "stream order");
          const int interval = timeline_.begin(Timeline::kMessageDown, download);
          check(cudaMemcpyAsync(host_out_.data() + lo, and_msg + lo, hi - lo, cudaMemcpyDeviceToHost, download),
                "message download");
          timeline_.end(interval, download);
        }
      }
      timeline_.end(pass_interval, compute);
      check(cudaEventRecord(events_->pass_done[p % kRing].get(), compute), "event");
      if (ring && pass.prev_ands != 0) {
        // This pass read the previous party's message of layer p-1: its buffer may go.
        check(cudaEventRecord(consumed_[p - 1]->get(), compute), "event");
        ring_state->acknowledge(io.party, generation, static_cast<std::uint32_t>(p - 1), consumed_[p - 1]->get());
      }
      if (ring && pass.ands != 0) {
        check(cudaEventRecord(ready_[p]->get(), compute), "event");
        ring_state->post(io.party, generation, static_cast<std::uint32_t>(p), and_msg, ready_[p]->get());
      }
      if (!ring && pass.ands != 0) check(cudaEventRecord(events_->download_done.get(), download), "event");

      // While this pass runs: alpha of the next layer.
      if (p + 1 < pass_count && plan.passes[p + 1].ands != 0) produce_alpha(p + 1);

      if (pass.ands == 0) continue;
      const std::size_t message = static_cast<std::size_t>(detail::message_bytes(n, pass.ands));
      if (ring) {
        HostTimer timer(profile_.host_ring_ms);
        const auto incoming = ring_state->take(io.party, generation, static_cast<std::uint32_t>(p));
        check(cudaStreamWaitEvent(compute, static_cast<cudaEvent_t>(incoming.ready), 0), "stream order");
        ring_in = incoming.data;
      } else {
        {
          HostTimer timer(profile_.host_wait_ms);
          check(cudaEventSynchronize(events_->download_done.get()), "message download");
        }
        HostTimer timer(profile_.host_exchange_ms);
        io.exchange->exchange(static_cast<std::uint32_t>(p), {host_out_.data(), message}, {host_in_.data(), message});
      }
      stats.bytes_sent += message;
      stats.bytes_received += message;  // both paths above fill `message` bytes from party i-1
      stats.layers_exchanged += 1;
    }

    // Every row has gone up by now (each pass waited for its group); the staging threads
    // wipe the slots once their copies have read them, while the last passes run.
    {
      HostTimer timer(profile_.host_input_ms);
      stagers_->finish();
    }
    // Outputs: the copy into pageable memory returns when it is done.
    if (plan.num_outputs != 0) {
      HostTimer timer(profile_.host_wait_ms);
      for (auto [host_rows, device_rows] : {std::pair{outputs.x.data(), args.out_x}, std::pair{outputs.a.data(), args.out_a}})
        check(cudaMemcpy2DAsync(host_rows, row_bytes, device_rows, pitch_bytes, row_bytes, plan.num_outputs,
                                cudaMemcpyDeviceToHost, compute),
              "output download");
    }
    check(cudaEventRecord(events_->outputs_done.get(), compute), "event");
    timeline_.end(span, compute);
    // Before the wipe: every other stream's work of this evaluation, and on a ring the
    // next party's reads of our messages.
    for (cudaStream_t s : {prf, input, upload, download}) {
      check(cudaEventRecord(events_->stream_idle.get(), s), "event");
      check(cudaStreamWaitEvent(compute, events_->stream_idle.get(), 0), "stream order");
    }
    if (ring) wait_receipts_below(pass_count, compute);
    check(cudaMemsetAsync(workspace_.as<void>(), 0, layout.total, compute), "workspace wipe");
    {
      HostTimer timer(profile_.host_wait_ms);
      check(cudaEventSynchronize(events_->outputs_done.get()), "evaluation");
    }
    for (std::size_t b = 0; b < 2; ++b)
      if (host_alpha_pending[b]) wipe(host_alpha_[b].data(), host_alpha_used);
    if (timeline_.on()) {
      const auto ms = timeline_.totals();
      profile_.gpu_span_ms = ms[Timeline::kSpan];
      profile_.gpu_pass_ms = ms[Timeline::kPass];
      profile_.gpu_alpha_ms = ms[Timeline::kAlpha];
      profile_.gpu_input_ms = ms[Timeline::kInput] + staging_->timeline().totals()[Timeline::kInput];
      profile_.gpu_message_up_ms = ms[Timeline::kMessageUp];
      profile_.gpu_message_down_ms = ms[Timeline::kMessageDown];
    }
  }

  mutable std::mutex mutex_;  // one evaluation (or reserve) at a time
  int device_;
  CudaOptions options_;
  std::uint64_t min_segment_chunks_ = 1;
  std::uint64_t shared_per_block_ = 0;
  std::uint64_t shared_per_sm_ = 0;
  std::string name_;
  std::unique_ptr<Stream> compute_, prf_, input_, upload_, download_;
  // Created after the device is selected (events belong to a device).
  struct Events {
    Event start, outputs_done, download_done, stream_idle;
    std::array<Event, kRing> pass_done, alpha_done;
    std::array<Event, kMaxSegments> segment_in, segment_done;
  };
  std::unique_ptr<Events> events_;
  std::vector<std::unique_ptr<Event>> rows_ready_;           // per pass
  std::vector<std::unique_ptr<Event>> ready_, consumed_;     // per layer, ring only
  std::vector<std::unique_ptr<ResidentProgram>> programs_;  // most recently used first
  // Input staging: the slots and their copies (the engine), then its threads (which use it).
  std::unique_ptr<DeviceUpload> staging_;
  std::unique_ptr<detail::StagingPool> stagers_;
  detail::StagingPlan staging_plan_;  // of the evaluation in progress
  DeviceBuffer workspace_;
  PinnedBuffer host_out_, host_in_;
  std::array<PinnedBuffer, 2> host_alpha_;
  Timeline timeline_;
  EvaluationProfile profile_;
};

}  // namespace

int cuda_device_count() noexcept {
  try {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    int usable = 0;
    for (int d = 0; d < count; ++d) usable += device_usable(d) ? 1 : 0;
    return usable;
  } catch (...) {
    return 0;
  }
}

bool cuda_device_available() noexcept { return cuda_device_count() > 0; }

std::unique_ptr<CudaEvaluator> create_cuda_evaluator(int device, const CudaOptions& options) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(Component::Protocol, std::string("no CUDA device: ") + cudaGetErrorString(status));
  }
  if (device < 0 || device >= count)
    throw Error(Component::Protocol, "no CUDA device " + std::to_string(device) + " (" + std::to_string(count) +
                                         " visible)");
  if (!device_usable(device))
    throw Error(Component::Protocol, "CUDA device " + std::to_string(device) + " is older than compute capability " +
                                         std::to_string(kMinComputeMajor) + ".0 (this build targets sm_90)");
  return std::make_unique<CudaEvaluatorImpl>(device, options);
}

std::unique_ptr<rss3::Evaluator> make_cuda_evaluator(int device) { return create_cuda_evaluator(device); }

}  // namespace mpc::cuda
