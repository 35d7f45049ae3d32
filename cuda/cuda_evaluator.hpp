// cuda/cuda_evaluator.hpp: the GPU back end of the three-party evaluator (Araki,
// Furukawa, Lindell, Nof, Ohara: "High-Throughput Semi-Honest Secure Three-Party
// Computation with an Honest Majority", ACM CCS 2016, eprint 2016/768).
//
// An rss3::Evaluator whose layers run on an NVIDIA GPU (compute capability 9.0 or later:
// the code is built for sm_90). Its outgoing messages and output shares are
// bit-identical to the CPU evaluator's (rss3::make_cpu_evaluator), so a cluster may mix
// CPU and GPU servers. Design and measurements: docs/gpu.md.
//
// This header needs no CUDA compiler or CUDA headers: the server includes it in every
// build. Without CUDA (MPC_ENABLE_CUDA=OFF or no nvcc), cuda_device_available() is false
// and the factories throw Error(Component::Protocol) "built without CUDA".
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "circuits/program.hpp"
#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/rss3/evaluator.hpp"
#include "protocol/rss3/layer_exchange.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::cuda {

// True when this build has CUDA, a driver is installed and at least one device of
// compute capability 9.0 or later is visible. Never throws.
bool cuda_device_available() noexcept;

// Visible devices of compute capability 9.0 or later (0 when none or without CUDA).
int cuda_device_count() noexcept;

// The keys and nonce a CorrelatedRandomness was built with, for alpha generated on the
// GPU: alpha = AES-128-CTR(own_key) ^ AES-128-CTR(previous_key) over the counter blocks
// epoch || sequence || first_block + j (see correlated_randomness.hpp).
struct DevicePrf {
  rss3::PrfKey own_key{};       // k_i, shared with party i+1
  rss3::PrfKey previous_key{};  // k_{i-1}, shared with party i-1
  rss3::BatchNonce nonce{};
  std::uint32_t first_block = 0;  // alpha blocks this batch has drawn already (0: none)
};

// Which pass kernel runs: the staged one keeps a pass's values in shared memory and moves
// about a third of the device-memory bytes (AES); the device-memory one runs any program.
enum class CudaKernel {
  Auto,          // staged when the program's plan allows it, else device memory
  Staged,        // Error(Protocol) from evaluate() when the plan does not allow it
  DeviceMemory,  // every op reads and writes device memory
};

struct CudaOptions {
  CudaKernel kernel = CudaKernel::Auto;
  // Words per block of the staged kernel (8, 16 or 32); 0: the widest block of which two
  // fit an SM's shared memory, else the widest that fits at all. A width whose block does
  // not fit runs the device-memory kernel instead (Auto) or fails (Staged).
  std::uint32_t staged_words = 0;
  // Record where each evaluation's time goes (last_profile()): timing events around every
  // kernel and copy, host clocks around every wait. Costs a little; off in production.
  bool profile = false;
  // Host threads that copy the caller's (pageable) input shares into pinned slots, from
  // which they go up at the PCIe rate while the first passes run; 0: a quarter of the
  // host's threads, 1 to 4. The evaluator keeps 2 * threads + 2 slots.
  unsigned staging_threads = 0;
  // Bytes per pinned slot; 0: 4 MiB.
  std::size_t staging_slot_bytes = 0;
};

// Where the time of the last evaluation went (CudaOptions::profile). Host figures are
// wall-clock time of the calling thread; GPU figures are summed event intervals (work on
// different streams overlaps, so they may add up to more than gpu_span_ms).
struct EvaluationProfile {
  double wall_ms = 0;            // the whole evaluate() call
  double host_exchange_ms = 0;   // inside LayerExchange::exchange (host-staged messages)
  double host_ring_ms = 0;       // waiting for the other parties' host threads (DeviceRing)
  double host_wait_ms = 0;       // blocked on the GPU: downloads before an exchange, the outputs
  double host_input_ms = 0;      // waiting for the staging threads to send up rows a pass needs
  double host_alpha_ms = 0;      // CPU alpha (evaluate() with a CorrelatedRandomness)
  double gpu_span_ms = 0;        // first GPU work of the evaluation to the outputs' arrival
  double gpu_pass_ms = 0;        // pass kernels
  double gpu_alpha_ms = 0;       // PRF kernels
  double gpu_input_ms = 0;       // input rows, host to device
  double gpu_message_up_ms = 0;  // incoming messages and CPU alpha, host to device
  double gpu_message_down_ms = 0;  // outgoing messages, device to host
  std::uint32_t passes = 0;
  std::uint32_t segments = 0;      // copy/compute segments per pass
  std::uint32_t staged_words = 0;  // 0: the device-memory kernel ran
};

class DeviceRing;

class CudaEvaluator : public rss3::Evaluator {
 public:
  // rss3::Evaluator::evaluate: alpha comes from randomness.next_alpha() (CPU AES) in the
  // CPU evaluator's order, and is uploaded while the GPU works on the previous layer.

  // The same evaluation with alpha generated on the GPU: messages and outputs equal
  // evaluate()'s with a CorrelatedRandomness(prf.own_key, prf.previous_key, prf.nonce)
  // that has drawn prf.first_block blocks. The caller must never draw the same blocks
  // elsewhere (alpha_blocks() says how many this uses). Throws Error(Protocol) when the
  // batch's alpha counter space would be exceeded.
  virtual rss3::EvaluationStats evaluate_with_device_prf(const circuits::Program& program,
                                                         const rss3::ShareMatrix& inputs, rss3::ShareMatrix& outputs,
                                                         const DevicePrf& prf, rss3::LayerExchange& exchange) = 0;

  // Validates and uploads `program`, and allocates the device and pinned host memory of
  // an evaluation over `instances` instances, so that later evaluations of that size or
  // smaller allocate nothing. (evaluate() grows the memory itself when it must.)
  virtual void reserve(const circuits::Program& program, std::size_t instances) = 0;

  // The same evaluation with the messages kept in device memory: party `party` of `ring`
  // (evaluators of one device, one thread each) reads the previous party's message where
  // that party's GPU work wrote it, with no copy through the host and no host wait on the
  // GPU between layers. Equal messages and outputs to evaluate_with_device_prf() over a
  // LayerExchange. On failure the ring is aborted (the other parties fail too).
  virtual rss3::EvaluationStats evaluate_on_ring(const circuits::Program& program, const rss3::ShareMatrix& inputs,
                                                 rss3::ShareMatrix& outputs, const DevicePrf& prf, DeviceRing& ring,
                                                 int party) = 0;

  // Where the last evaluation's time went; all zero unless CudaOptions::profile.
  virtual EvaluationProfile last_profile() const = 0;

  virtual int device() const noexcept = 0;
};

// The message ring of evaluators on one device: parties 0 .. parties - 1, party i reading
// the messages of party i - 1 (mod parties). Three parties of a test or a benchmark on one
// GPU, or one party alone (parties = 1) whose own message comes back as its predecessor's:
// what one GPU sustains when neither the network nor PCIe is the limit. Every party must
// run the same sequence of evaluations (same programs and batch sizes) on the ring; a
// party waits at most `timeout` for another one's host thread, then throws PeerError.
class DeviceRing {
 public:
  explicit DeviceRing(int parties = 3, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  ~DeviceRing();
  DeviceRing(const DeviceRing&) = delete;
  DeviceRing& operator=(const DeviceRing&) = delete;

  int parties() const noexcept;
  // Wakes every waiting party with PeerError, and makes every later evaluation on it fail.
  void abort() noexcept;

  struct State;  // cuda/device_ring.hpp
  State& state() noexcept { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

// Routing between the CPU and GPU evaluators: true when this build has CUDA, a device is
// present and a batch of `instances` instances is large enough that the GPU finishes it
// sooner than the CPU evaluator (a one-block job spends its time in the 60 round trips of
// AES, where the GPU only adds its launch and copy latency). `min_instances` 0 takes the
// measured default (gpu_min_instances(); docs/gpu.md).
bool gpu_preferred(const circuits::Program& program, std::size_t instances, std::size_t min_instances = 0) noexcept;
std::size_t gpu_min_instances() noexcept;

// Alpha blocks (16 bytes each) that an evaluation of `program` over `instances`
// instances draws: round_up(message bytes, 16) / 16 summed over the layers with ANDs.
std::uint64_t alpha_blocks(const circuits::Program& program, std::size_t instances);

// An evaluator on CUDA device `device`. Throws Error(Component::Protocol) when CUDA is
// not built in, or there is no such device of compute capability 9.0 or later.
std::unique_ptr<CudaEvaluator> create_cuda_evaluator(int device = 0, const CudaOptions& options = {});
std::unique_ptr<rss3::Evaluator> make_cuda_evaluator(int device = 0);

}  // namespace mpc::cuda
