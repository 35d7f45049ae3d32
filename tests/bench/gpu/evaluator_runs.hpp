// tests/bench/gpu/evaluator_runs.hpp: timed runs of the GPU evaluator for cuda_bench: one party
// alone or three parties on one GPU, messages through the host or kept on the device,
// several batches in flight, and the CPU evaluator beside it for the routing threshold.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "circuits/program.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::cuda::bench {

// How messages travel: pinned host memory and a LayerExchange (an echo for one party, an
// in-memory ring for three), or a DeviceRing.
enum class Transport { Host, Device };

struct RunSpec {
  int parties = 1;      // 1: party 0 alone, its message coming back; 3: three parties on one GPU
  Transport transport = Transport::Device;
  int in_flight = 1;    // batches evaluated at once (each with its own evaluators and threads)
  int iterations = 5;   // timed batches per flight, after one warm-up batch
  CudaOptions options;  // profile is ignored (a separate run records the profile)
  int device = 0;
};

struct RunResult {
  double seconds_per_batch = 0;  // wall time / batches completed (throughput)
  double latency = 0;            // median wall time of one batch in one flight
  EvaluationProfile profile;     // of party 0, one extra profiled batch run alone
};

// Dealer work: random shares of `program`'s inputs for three parties.
std::array<rss3::ShareMatrix, 3> random_inputs(const circuits::Program& program, std::uint64_t instances,
                                               std::uint64_t seed);

RunResult run_evaluator(const circuits::Program& program, const std::array<rss3::ShareMatrix, 3>& inputs,
                        const RunSpec& spec);

// Median seconds per batch of three parties over an in-memory ring: the CPU evaluator
// (best SIMD level), and the GPU evaluator with host-staged messages and the GPU PRF
// (what a server does), for the routing threshold.
double time_cpu_three(const circuits::Program& program, const std::array<rss3::ShareMatrix, 3>& inputs,
                      double min_seconds);
double time_gpu_three_host(const circuits::Program& program, const std::array<rss3::ShareMatrix, 3>& inputs,
                           int device, double min_seconds);

}  // namespace mpc::cuda::bench
