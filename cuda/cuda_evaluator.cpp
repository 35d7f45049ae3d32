// cuda/cuda_evaluator.cpp: the GPU evaluator (Araki, Furukawa, Lindell, Nof, Ohara,
// "High-Throughput Semi-Honest Secure Three-Party Computation with an Honest Majority",
// ACM CCS 2016, eprint 2016/768): host side, the owner of streams, device and pinned
// memory, and of the order in which kernels, copies and exchanges happen.
//
// Per pass p (finish of layer p-1, linear ops and AND local phase of layer p):
//   upload stream:   r_prev of layer p-1, pinned host -> device, chunk segment by segment
//   compute stream:  pass kernel per segment, each after its segment of r_prev arrived
//   download stream: r of layer p, device -> pinned host, each segment after its kernel
//   host:            exchange() on the pinned buffers, then the next pass
// so the copies of one segment overlap the kernel of the next, and alpha for layer p+1
// (GPU PRF kernel on the compute stream, or CPU AES into a pinned buffer uploaded on the
// upload stream) is produced while layer p's message is on the wire. The message goes
// device -> pinned -> exchange() -> pinned -> device with no other copy.
//
// Memory: one device workspace and four pinned buffers, sized by
// detail::workspace_layout() (the sizing call) and grown only by reserve() or by an
// evaluation that needs more; everything is wiped after each evaluation, as the CPU
// evaluator wipes its scratch. One evaluation at a time per evaluator (a mutex); use one
// evaluator per party.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "cuda/aes_ttable.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "cuda/device_helpers.hpp"
#include "cuda/device_plan.hpp"
#include "cuda/kernels.hpp"

namespace mpc::cuda {
namespace {

using detail::DevicePlan;
using detail::WorkspaceLayout;

constexpr int kMinComputeMajor = 9;           // built for sm_90 (SASS) + compute_90 (PTX)
constexpr std::size_t kCachedPrograms = 8;    // as the CPU evaluator's plan cache
constexpr std::uint64_t kMaxSegments = 4;     // copy/compute overlap granularity per pass
constexpr int kSegmentBlocksPerSm = 4;        // a segment must still fill the GPU: chunks >= this * SMs

[[noreturn]] void throw_cuda(cudaError_t status, const char* what) {
  throw Error(Component::Protocol, std::string("CUDA: ") + what + ": " + cudaGetErrorName(status) + " (" +
                                       cudaGetErrorString(status) + ")");
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw_cuda(status, what);
}

bool device_usable(int device) noexcept {
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return major >= kMinComputeMajor;
}

// Owning handles; destructors never throw and ignore errors (a failed context).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(); }
  void allocate(std::size_t bytes, const char* what) {
    release();
    if (bytes == 0) return;
    check(cudaMalloc(&data_, bytes), what);
    bytes_ = bytes;
  }
  void release() noexcept {
    if (data_ != nullptr) (void)cudaFree(data_);
    data_ = nullptr;
    bytes_ = 0;
  }
  template <class T>
  T* as(std::size_t offset = 0) const noexcept {
    return reinterpret_cast<T*>(static_cast<std::uint8_t*>(data_) + offset);
  }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { release(); }
  void allocate(std::size_t bytes) {
    release();
    if (bytes == 0) return;
    check(cudaHostAlloc(&data_, bytes, cudaHostAllocDefault), "pinned host allocation");
    bytes_ = bytes;
  }
  void release() noexcept {
    if (data_ != nullptr) {
      wipe(data_, bytes_);
      (void)cudaFreeHost(data_);
    }
    data_ = nullptr;
    bytes_ = 0;
  }
  std::uint8_t* data() const noexcept { return static_cast<std::uint8_t*>(data_); }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

class Stream {
 public:
  Stream() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream creation"); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { (void)cudaStreamDestroy(stream_); }
  cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event() { check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "event creation"); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { (void)cudaEventDestroy(event_); }
  cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// A plan resident on the device: op and level arrays uploaded once per program.
struct ResidentProgram {
  DevicePlan plan;
  DeviceBuffer ops;
  DeviceBuffer level_bounds;
};

bool well_formed(const rss3::ShareMatrix& m) {
  return m.words_per_row == rss3::words_for(m.instances) &&
         (m.words_per_row == 0 || m.rows <= m.x.max_size() / m.words_per_row) &&
         m.x.size() == m.rows * m.words_per_row && m.a.size() == m.x.size();
}

// Where alpha comes from: the caller's CorrelatedRandomness, or the GPU PRF.
struct AlphaSource {
  rss3::CorrelatedRandomness* randomness = nullptr;
  const DevicePrf* prf = nullptr;
};

class CudaEvaluatorImpl final : public CudaEvaluator {
 public:
  explicit CudaEvaluatorImpl(int device) : device_(device) {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device_), "device properties");
    name_ = "cuda-" + std::to_string(device_) + " (" + prop.name + ", sm_" + std::to_string(prop.major) +
            std::to_string(prop.minor) + ")";
    min_segment_chunks_ = static_cast<std::uint64_t>(std::max(1, prop.multiProcessorCount)) * kSegmentBlocksPerSm;
    select();
    compute_ = std::make_unique<Stream>();
    upload_ = std::make_unique<Stream>();
    download_ = std::make_unique<Stream>();
    events_ = std::make_unique<Events>();
  }

  ~CudaEvaluatorImpl() override {
    // Every evaluation ends with its streams idle; the buffers are freed below (cudaFree
    // waits for the device) before the streams and events are destroyed.
    (void)cudaSetDevice(device_);
  }

  rss3::EvaluationStats evaluate(const circuits::Program& program, const rss3::ShareMatrix& inputs,
                                 rss3::ShareMatrix& outputs, rss3::CorrelatedRandomness& randomness,
                                 rss3::LayerExchange& exchange) override {
    return run(program, inputs, outputs, AlphaSource{&randomness, nullptr}, exchange);
  }

  rss3::EvaluationStats evaluate_with_device_prf(const circuits::Program& program, const rss3::ShareMatrix& inputs,
                                                 rss3::ShareMatrix& outputs, const DevicePrf& prf,
                                                 rss3::LayerExchange& exchange) override {
    return run(program, inputs, outputs, AlphaSource{nullptr, &prf}, exchange);
  }

  void reserve(const circuits::Program& program, std::size_t instances) override {
    std::lock_guard<std::mutex> lock(mutex_);
    select();
    const ResidentProgram& resident = program_for(program);
    ensure_memory(detail::workspace_layout(resident.plan, instances));
  }

  std::string name() const override { return name_; }
  int device() const noexcept override { return device_; }

 private:
  struct Events {
    std::array<Event, kMaxSegments> input_ready;   // r_prev segment uploaded
    std::array<Event, kMaxSegments> segment_done;  // pass kernel of a segment finished
    Event pass_done;                               // whole pass finished
    std::array<Event, 2> alpha_ready;              // host alpha uploaded into msg_out[b]
    std::array<bool, 2> alpha_pending{false, false};
  };

  void select() const { check(cudaSetDevice(device_), "cudaSetDevice"); }

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
    const std::size_t op_bytes = plan.ops.size() * sizeof(detail::DeviceOp);
    const std::size_t bound_bytes = plan.level_bounds.size() * sizeof(std::uint32_t);
    resident->ops.allocate(op_bytes, "program upload");
    resident->level_bounds.allocate(bound_bytes, "program upload");
    if (op_bytes != 0)
      check(cudaMemcpy(resident->ops.as<void>(), plan.ops.data(), op_bytes, cudaMemcpyHostToDevice), "program upload");
    check(cudaMemcpy(resident->level_bounds.as<void>(), plan.level_bounds.data(), bound_bytes, cudaMemcpyHostToDevice),
          "program upload");
    programs_.insert(programs_.begin(), std::move(resident));
    if (programs_.size() > kCachedPrograms) programs_.pop_back();
    return *programs_.front();
  }

  void ensure_memory(const WorkspaceLayout& layout) {
    if (workspace_.bytes() < layout.total) {
      workspace_.release();
      workspace_.allocate(layout.total, "device workspace");
    }
    const std::size_t message = layout.message_capacity;
    for (PinnedBuffer* b : {&host_out_, &host_in_, &host_alpha_[0], &host_alpha_[1]})
      if (b->bytes() < message) b->allocate(message);
  }

  rss3::EvaluationStats run(const circuits::Program& program, const rss3::ShareMatrix& inputs,
                            rss3::ShareMatrix& outputs, const AlphaSource& alpha, rss3::LayerExchange& exchange) {
    if (inputs.rows != program.num_inputs)
      throw Error(Component::Protocol, "input matrix has " + std::to_string(inputs.rows) + " rows, program expects " +
                                           std::to_string(program.num_inputs));
    if (!well_formed(inputs)) throw Error(Component::Protocol, "malformed input share matrix");

    std::lock_guard<std::mutex> lock(mutex_);
    select();
    const ResidentProgram& resident = program_for(program);

    rss3::ShareMatrix aliased;
    rss3::ShareMatrix& target = (&outputs == &inputs) ? aliased : outputs;
    const std::size_t n = inputs.instances;
    if (target.rows != program.num_outputs || target.instances != n || !well_formed(target)) {
      target.wipe();
      target = rss3::ShareMatrix(program.num_outputs, n);
    }
    rss3::EvaluationStats stats;
    if (n != 0) {
      const WorkspaceLayout layout = detail::workspace_layout(resident.plan, n);
      ensure_memory(layout);
      Cleanup cleanup(*this, layout);
      passes(resident, layout, inputs, target, alpha, exchange, stats);
      cleanup.finish();
    }
    if (&target == &aliased) outputs = std::move(aliased);
    return stats;
  }

  // Waits for every stream and wipes what the evaluation used, also when it throws.
  class Cleanup {
   public:
    Cleanup(CudaEvaluatorImpl& owner, const WorkspaceLayout& layout) : owner_(owner), layout_(layout) {}
    Cleanup(const Cleanup&) = delete;
    Cleanup& operator=(const Cleanup&) = delete;
    ~Cleanup() {
      if (!done_) wipe_all();
    }
    // The normal path: reports a failure of the wipe itself.
    void finish() {
      done_ = true;
      check(wipe_all(), "wiping the workspace");
    }

   private:
    cudaError_t wipe_all() noexcept {
      cudaError_t status = cudaSuccess;
      for (Stream* s : {owner_.upload_.get(), owner_.download_.get(), owner_.compute_.get()}) {
        const cudaError_t e = cudaStreamSynchronize(s->get());
        if (status == cudaSuccess) status = e;
      }
      if (layout_.total != 0) {
        const cudaError_t e = cudaMemsetAsync(owner_.workspace_.as<void>(), 0, layout_.total, owner_.compute_->get());
        if (status == cudaSuccess) status = e;
      }
      const cudaError_t s = cudaStreamSynchronize(owner_.compute_->get());
      if (status == cudaSuccess) status = s;
      for (PinnedBuffer* b : {&owner_.host_out_, &owner_.host_in_, &owner_.host_alpha_[0], &owner_.host_alpha_[1]})
        if (b->bytes() != 0) wipe(b->data(), std::min(b->bytes(), layout_.message_capacity));
      owner_.events_->alpha_pending = {false, false};
      return status;
    }

    CudaEvaluatorImpl& owner_;
    WorkspaceLayout layout_;
    bool done_ = false;
  };

  void passes(const ResidentProgram& resident, const WorkspaceLayout& layout, const rss3::ShareMatrix& inputs,
              rss3::ShareMatrix& outputs, const AlphaSource& alpha, rss3::LayerExchange& exchange,
              rss3::EvaluationStats& stats) {
    const DevicePlan& plan = resident.plan;
    const std::uint64_t n = inputs.instances;
    const std::uint64_t words = detail::words_for(n);
    const std::uint64_t pitch = layout.pitch;
    const std::uint64_t chunks = detail::chunks_for(n);
    const cudaStream_t compute = compute_->get();
    const cudaStream_t upload = upload_->get();
    const cudaStream_t download = download_->get();
    Events& ev = *events_;

    // Segments of whole chunks: the unit of copy/compute overlap. Only batches large
    // enough that each segment's kernel still fills the GPU are split.
    const std::uint64_t segments = std::clamp<std::uint64_t>(chunks / min_segment_chunks_, 1, kMaxSegments);
    std::array<std::uint64_t, kMaxSegments + 1> seg{};
    for (std::uint64_t s = 0; s <= segments; ++s) seg[s] = chunks * s / segments;

    // Inputs: row pitch `words` on the host, `pitch` on the device, padding words zero.
    const std::size_t row_bytes = words * sizeof(std::uint64_t);
    const std::size_t pitch_bytes = pitch * sizeof(std::uint64_t);
    std::uint64_t* in_x = workspace_.as<std::uint64_t>(layout.in_x);
    std::uint64_t* in_a = workspace_.as<std::uint64_t>(layout.in_a);
    if (plan.num_inputs != 0) {
      for (auto [device_rows, host_rows] : {std::pair{in_x, inputs.x.data()}, std::pair{in_a, inputs.a.data()}}) {
        if (pitch > words)
          check(cudaMemset2DAsync(device_rows + words, pitch_bytes, 0, pitch_bytes - row_bytes, plan.num_inputs, compute),
                "input padding");
        check(cudaMemcpy2DAsync(device_rows, pitch_bytes, host_rows, row_bytes, row_bytes, plan.num_inputs,
                                cudaMemcpyHostToDevice, compute),
              "input upload");
      }
    }

    // Device PRF: keys expanded here, counter space checked before anything is sent.
    detail::AlphaKeys keys{};
    std::uint64_t counter = 0;
    if (alpha.prf != nullptr) {
      static constexpr detail::AesTables kTables = detail::make_aes_tables();
      keys.own = detail::aes128_expand_key(alpha.prf->own_key.data(), kTables);
      keys.previous = detail::aes128_expand_key(alpha.prf->previous_key.data(), kTables);
      std::uint32_t block[4];
      detail::counter_block_words(alpha.prf->nonce.epoch, alpha.prf->nonce.sequence, 0, block);
      std::copy(block, block + 3, keys.prefix);
      counter = alpha.prf->first_block;
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

    // alpha of layer `pass` into msg_out[pass & 1]; the stream order (or an event) puts it
    // after pass-1, the last reader of that buffer.
    auto produce_alpha = [&](std::size_t pass) {
      const std::uint64_t bytes = detail::alpha_bytes(detail::message_bytes(n, plan.passes[pass].ands));
      const int b = static_cast<int>(pass & 1);
      std::uint8_t* device_alpha = workspace_.as<std::uint8_t>(layout.msg_out[b]);
      if (alpha.prf != nullptr) {
        check(detail::launch_alpha(keys, static_cast<std::uint32_t>(counter), bytes / 16, device_alpha, compute),
              "alpha kernel");
        counter += bytes / 16;
        return;
      }
      // The pinned buffer was last read by the upload two layers ago.
      if (ev.alpha_pending[b]) check(cudaEventSynchronize(ev.alpha_ready[b].get()), "alpha upload");
      ev.alpha_pending[b] = false;
      alpha.randomness->next_alpha({host_alpha_[b].data(), static_cast<std::size_t>(bytes)});
      if (pass > 0) check(cudaStreamWaitEvent(upload, ev.pass_done.get(), 0), "stream order");
      check(cudaMemcpyAsync(device_alpha, host_alpha_[b].data(), bytes, cudaMemcpyHostToDevice, upload), "alpha upload");
      check(cudaEventRecord(ev.alpha_ready[b].get(), upload), "event");
      ev.alpha_pending[b] = true;
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

    const std::size_t pass_count = plan.passes.size();
    if (plan.passes[0].ands != 0) produce_alpha(0);
    for (std::size_t p = 0; p < pass_count; ++p) {
      const detail::PassPlan& pass = plan.passes[p];
      const int b = static_cast<int>(p & 1);
      args.level_bounds = resident.level_bounds.as<std::uint32_t>() + pass.first_level;
      args.levels = pass.levels;
      args.ands = pass.ands;
      args.prev_ands = pass.prev_ands;
      args.and_msg = workspace_.as<std::uint8_t>(layout.msg_out[b]);
      args.fin_out = workspace_.as<std::uint8_t>(layout.msg_out[b ^ 1]);
      args.fin_in = workspace_.as<std::uint8_t>(layout.msg_in[b ^ 1]);
      if (pass.ands != 0 && alpha.prf == nullptr)
        check(cudaStreamWaitEvent(compute, ev.alpha_ready[b].get(), 0), "stream order");

      for (std::uint64_t s = 0; s < segments; ++s) {
        if (pass.prev_ands != 0) {
          const std::uint64_t lo = detail::message_prefix_bytes(n, pass.prev_ands, seg[s]);
          const std::uint64_t hi = detail::message_prefix_bytes(n, pass.prev_ands, seg[s + 1]);
          check(cudaMemcpyAsync(workspace_.as<std::uint8_t>(layout.msg_in[b ^ 1]) + lo, host_in_.data() + lo, hi - lo,
                                cudaMemcpyHostToDevice, upload),
                "message upload");
          check(cudaEventRecord(ev.input_ready[s].get(), upload), "event");
          check(cudaStreamWaitEvent(compute, ev.input_ready[s].get(), 0), "stream order");
        }
        check(detail::launch_pass(args, seg[s], seg[s + 1] - seg[s], compute), "pass kernel");
        if (pass.ands != 0) {
          const std::uint64_t lo = detail::message_prefix_bytes(n, pass.ands, seg[s]);
          const std::uint64_t hi = detail::message_prefix_bytes(n, pass.ands, seg[s + 1]);
          check(cudaEventRecord(ev.segment_done[s].get(), compute), "event");
          check(cudaStreamWaitEvent(download, ev.segment_done[s].get(), 0), "stream order");
          check(cudaMemcpyAsync(host_out_.data() + lo, args.and_msg + lo, hi - lo, cudaMemcpyDeviceToHost, download),
                "message download");
        }
      }
      check(cudaEventRecord(ev.pass_done.get(), compute), "event");

      // alpha of the next layer while this layer's message travels.
      if (p + 1 < pass_count && plan.passes[p + 1].ands != 0) produce_alpha(p + 1);

      if (pass.ands != 0) {
        // The download waited for every kernel of this pass, which waited for every upload
        // from host_in_: once it is done, both pinned buffers are free for the exchange.
        check(cudaStreamSynchronize(download), "message download");
        const std::size_t message = static_cast<std::size_t>(detail::message_bytes(n, pass.ands));
        exchange.exchange(static_cast<std::uint32_t>(p), {host_out_.data(), message}, {host_in_.data(), message});
        stats.bytes_sent += message;
        stats.layers_exchanged += 1;
      }
    }

    if (plan.num_outputs != 0) {
      check(cudaMemcpy2DAsync(outputs.x.data(), row_bytes, args.out_x, pitch_bytes, row_bytes, plan.num_outputs,
                              cudaMemcpyDeviceToHost, compute),
            "output download");
      check(cudaMemcpy2DAsync(outputs.a.data(), row_bytes, args.out_a, pitch_bytes, row_bytes, plan.num_outputs,
                              cudaMemcpyDeviceToHost, compute),
            "output download");
    }
    check(cudaStreamSynchronize(compute), "evaluation");
  }

  std::mutex mutex_;  // one evaluation (or reserve) at a time
  int device_;
  std::uint64_t min_segment_chunks_ = 1;
  std::string name_;
  std::unique_ptr<Stream> compute_, upload_, download_;
  std::unique_ptr<Events> events_;
  std::vector<std::unique_ptr<ResidentProgram>> programs_;  // most recently used first
  DeviceBuffer workspace_;
  PinnedBuffer host_out_, host_in_;
  std::array<PinnedBuffer, 2> host_alpha_;
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

std::unique_ptr<CudaEvaluator> create_cuda_evaluator(int device) {
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
  return std::make_unique<CudaEvaluatorImpl>(device);
}

std::unique_ptr<rss3::Evaluator> make_cuda_evaluator(int device) { return create_cuda_evaluator(device); }

}  // namespace mpc::cuda
