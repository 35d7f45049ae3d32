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

  virtual int device() const noexcept = 0;
};

// Alpha blocks (16 bytes each) that an evaluation of `program` over `instances`
// instances draws: round_up(message bytes, 16) / 16 summed over the layers with ANDs.
std::uint64_t alpha_blocks(const circuits::Program& program, std::size_t instances);

// An evaluator on CUDA device `device`. Throws Error(Component::Protocol) when CUDA is
// not built in, or there is no such device of compute capability 9.0 or later.
std::unique_ptr<CudaEvaluator> create_cuda_evaluator(int device = 0);
std::unique_ptr<rss3::Evaluator> make_cuda_evaluator(int device = 0);

}  // namespace mpc::cuda
