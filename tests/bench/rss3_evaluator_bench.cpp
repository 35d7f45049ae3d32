// rss3_evaluator_bench: single-party throughput of the CPU evaluator, no network (the
// LayerExchange loops each message back), per SIMD level. Uses the AES-128 circuit when
// the circuits library provides it, else a random program of AES-128's shape.
//
//   rss3_evaluator_bench [instances] [repetitions] [portable|avx2|avx512]
// (naming a level runs only that level's evaluator: handy under a profiler)
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/rss3/evaluator.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "protocol/rss3/transpose.hpp"
#include "support/random_program.hpp"

#if defined(MPC_RSS3_HAVE_AES_CIRCUIT)
#include "circuits/aes.hpp"
#endif

namespace {

using namespace mpc::rss3;
using Clock = std::chrono::steady_clock;

class LoopbackExchange final : public LayerExchange {
 public:
  void exchange(std::uint32_t, std::span<const std::uint8_t> outgoing, std::span<std::uint8_t> incoming) override {
    std::memcpy(incoming.data(), outgoing.data(), outgoing.size());
  }
};

// CPU time of this thread: not inflated when other processes share the cores.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Workload {
  std::string name;
  mpc::circuits::Program program;
};

Workload make_workload() {
#if defined(MPC_RSS3_HAVE_AES_CIRCUIT)
  using namespace mpc::circuits;
  const char* variant = std::getenv("RSS3_BENCH_SBOX");
  const bool depth4 = variant != nullptr && std::string(variant) == "depth4";
  return {depth4 ? "AES-128 encrypt circuit (34-AND depth-4 S-box)" : "AES-128 encrypt circuit (32-AND depth-6 S-box)",
          compile(build_aes_circuit(AesKeySize::Aes128, AesDirection::Encrypt,
                                    depth4 ? SboxVariant::Depth4 : SboxVariant::And32))};
#else
  std::mt19937_64 rng(1);
  testing::RandomProgramShape shape;
  shape.inputs = 1536;
  shape.outputs = 128;
  shape.slots = 512;
  shape.and_layers = 40;
  shape.ands_per_layer = 128;
  shape.linear_per_layer = 625;
  shape.unusual_percent = 3;
  return {"synthetic AES-128-shaped program", testing::random_program(rng, shape)};
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t instances = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 65536;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string only = argc > 3 ? argv[3] : "";
  Workload workload = make_workload();
  const auto& program = workload.program;
  std::size_t linear_ops = 0;
  for (const auto& layer : program.layers) linear_ops += layer.linear.size();
  std::printf("program: %s\n  inputs %u, outputs %u, slots %u, layers %zu, AND %llu, linear ops %zu\n",
              workload.name.c_str(), program.num_inputs, program.num_outputs, program.num_slots,
              program.layers.size(), static_cast<unsigned long long>(program.and_gates), linear_ops);
  {
    // How often a linear op reads the slot the op right before it wrote (a dependency
    // through memory that store-to-load forwarding latency puts on the critical path).
    std::size_t chained = 0, total = 0;
    for (const auto& layer : program.layers)
      for (std::size_t i = 1; i < layer.linear.size(); ++i) {
        const auto& op = layer.linear[i];
        const auto prev = layer.linear[i - 1].out;
        chained += op.in0 == prev || (op.kind == mpc::circuits::OpKind::Xor && op.in1 == prev);
        ++total;
      }
    std::printf("  linear ops reading the previous op's output: %.1f%%\n", total ? 100.0 * chained / total : 0.0);
  }
  std::printf("instances per batch: %zu, repetitions: %d\n\n", instances, repetitions);

  std::mt19937_64 rng(2);
  ShareMatrix inputs(program.num_inputs, instances);
  for (auto& w : inputs.x) w = rng();
  for (auto& w : inputs.a) w = rng();
  const PrfKey k0{1, 2, 3}, k1{4, 5, 6};

  // PRF alone: the alpha bytes one evaluation needs, drawn in pieces of 32 KiB (about
  // what the evaluator draws per chunk and layer). Best of the repetitions.
  double prf_best = 1e30;
  {
    const std::size_t alpha_bytes = program.and_gates * instances / 8;
    std::vector<std::uint8_t> buffer(32768);
    for (int r = 0; r < repetitions; ++r) {
      CorrelatedRandomness randomness(k0, k1, BatchNonce{7, static_cast<std::uint32_t>(r)});
      const double start = thread_cpu_seconds();
      for (std::size_t left = alpha_bytes; left != 0;) {
        const std::size_t piece = std::min(left, buffer.size());
        randomness.next_alpha({buffer.data(), (piece + 15) / 16 * 16});
        left -= piece;
      }
      prf_best = std::min(prf_best, thread_cpu_seconds() - start);
    }
    if (only.empty())
      std::printf("PRF only: %.2f GB/s of alpha (2 AES-128-CTR keystreams each), %.2f ms per batch = %.2f M blocks/s\n\n",
                  alpha_bytes / prf_best / 1e9, prf_best * 1e3, instances / prf_best / 1e6);
  }

  std::printf("%-9s %14s %14s %16s %10s %14s %16s\n", "level", "blocks/s", "AND gates/s", "PRF alpha B/s", "ms/batch",
              "cpu blocks/s", "cpu minus PRF");
  for (SimdLevel level : {SimdLevel::Portable, SimdLevel::Avx2, SimdLevel::Avx512}) {
    if (!only.empty() && only != simd_level_name(level)) continue;
    std::unique_ptr<Evaluator> evaluator;
    try {
      evaluator = make_cpu_evaluator(level);
    } catch (const std::exception&) {
      std::printf("%-9s not supported by this CPU\n", simd_level_name(level));
      continue;
    }
    LoopbackExchange loopback;
    ShareMatrix outputs;
    {  // warm-up (allocates the workspace)
      CorrelatedRandomness randomness(k0, k1, BatchNonce{9, 0});
      evaluator->evaluate(program, inputs, outputs, randomness, loopback);
    }
    double best = 1e30, best_cpu = 1e30;
    EvaluationStats stats;
    for (int r = 0; r < repetitions; ++r) {
      CorrelatedRandomness randomness(k0, k1, BatchNonce{9, static_cast<std::uint32_t>(r + 1)});
      const auto start = Clock::now();
      const double cpu_start = thread_cpu_seconds();
      stats = evaluator->evaluate(program, inputs, outputs, randomness, loopback);
      best_cpu = std::min(best_cpu, thread_cpu_seconds() - cpu_start);
      best = std::min(best, seconds_since(start));
    }
    std::printf("%-9s %14.0f %14.3e %16.3e %10.2f %14.0f %16.0f\n", simd_level_name(level), instances / best,
                static_cast<double>(program.and_gates) * instances / best, stats.bytes_sent / best, best * 1e3,
                instances / best_cpu, instances / (best_cpu - prf_best));
  }

  if (!only.empty()) return 0;
  // Transposes: 16-byte records (AES blocks) into rows and back.
  {
    std::vector<std::uint8_t> records(instances * 16);
    for (auto& b : records) b = static_cast<std::uint8_t>(rng());
    std::vector<std::uint64_t> rows(128 * words_for(instances));
    auto start = Clock::now();
    for (int r = 0; r < repetitions; ++r) slice(records, 16, instances, rows, words_for(instances));
    const double s1 = seconds_since(start) / repetitions;
    start = Clock::now();
    for (int r = 0; r < repetitions; ++r) unslice(rows, words_for(instances), 0, 16, instances, records);
    const double s2 = seconds_since(start) / repetitions;
    std::printf("\ntranspose 16-byte records: slice %.1f M records/s, unslice %.1f M records/s\n",
                instances / s1 / 1e6, instances / s2 / 1e6);
  }

  // Three parties in three threads over the in-memory ring (all on this machine's cores).
  {
    auto shares = share_matrix(std::vector<std::uint64_t>(program.num_inputs * words_for(instances), 0),
                               program.num_inputs, instances);
    const std::array<PrfKey, 3> keys{PrfKey{1}, PrfKey{2}, PrfKey{3}};
    std::array<std::unique_ptr<Evaluator>, 3> evaluators;
    ThreePartyOptions options;
    for (int i = 0; i < 3; ++i) {
      evaluators[i] = make_cpu_evaluator(best_simd_level());
      options.evaluators[i] = evaluators[i].get();
    }
    double best = 1e30;
    for (int r = 0; r < repetitions; ++r) {
      const auto start = Clock::now();
      auto out = evaluate_three_parties(program, shares, best_simd_level(), BatchNonce{11, static_cast<std::uint32_t>(r)},
                                        keys, options);
      best = std::min(best, seconds_since(start));
    }
    std::printf("three parties in-process (%s): %.0f blocks/s\n", simd_level_name(best_simd_level()),
                instances / best);
  }
  return 0;
}
