// tests/bench/gpu/evaluator_runs.cpp: see evaluator_runs.hpp.
#include "bench/gpu/evaluator_runs.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <random>
#include <thread>

#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/rss3/evaluator.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "protocol/rss3/memory_ring.hpp"

namespace mpc::cuda::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::array<rss3::PrfKey, 3> bench_keys() {
  std::array<rss3::PrfKey, 3> keys{};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t b = 0; b < 16; ++b) keys[i][b] = static_cast<std::uint8_t>(17 * i + b);
  return keys;
}

// Party 0 alone: its outgoing message comes straight back as the incoming one (a copy in
// host memory, as a loopback transport would make).
class EchoExchange final : public rss3::LayerExchange {
 public:
  void exchange(std::uint32_t, std::span<const std::uint8_t> outgoing, std::span<std::uint8_t> incoming) override {
    std::memcpy(incoming.data(), outgoing.data(), outgoing.size());
  }
};

// One flight: its evaluators, and how it runs one batch.
class Flight {
 public:
  Flight(const circuits::Program& program, const std::array<rss3::ShareMatrix, 3>& inputs, const RunSpec& spec,
         const CudaOptions& options, int flight)
      : program_(program), inputs_(inputs), spec_(spec), flight_(flight) {
    for (int i = 0; i < spec.parties; ++i) {
      evaluators_[static_cast<std::size_t>(i)] = create_cuda_evaluator(spec.device, options);
      evaluators_[static_cast<std::size_t>(i)]->reserve(program, inputs[0].instances);
    }
    if (spec.transport == Transport::Device) ring_ = std::make_unique<DeviceRing>(spec.parties);
  }

  void batch(int iteration) {
    const rss3::BatchNonce nonce{static_cast<std::uint64_t>(1000 + flight_), static_cast<std::uint32_t>(iteration)};
    const auto keys = bench_keys();
    auto party = [&](int i, rss3::LayerExchange* exchange) {
      const auto index = static_cast<std::size_t>(i);
      const DevicePrf prf{keys[index], keys[static_cast<std::size_t>(rss3::previous_party(i))], nonce, 0};
      if (ring_)
        evaluators_[index]->evaluate_on_ring(program_, inputs_[index], outputs_[index], prf, *ring_, i);
      else
        evaluators_[index]->evaluate_with_device_prf(program_, inputs_[index], outputs_[index], prf, *exchange);
    };
    if (spec_.parties == 1) {
      EchoExchange echo;
      party(0, &echo);
      return;
    }
    rss3::MemoryRing memory_ring(std::chrono::seconds(600));
    std::array<std::exception_ptr, 3> errors;
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
      threads.emplace_back([&, i] {
        try {
          party(i, &memory_ring.endpoint(i));
        } catch (...) {
          errors[static_cast<std::size_t>(i)] = std::current_exception();
          memory_ring.abort();
          if (ring_) ring_->abort();
        }
      });
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }

  CudaEvaluator& evaluator(int party) { return *evaluators_[static_cast<std::size_t>(party)]; }

 private:
  const circuits::Program& program_;
  const std::array<rss3::ShareMatrix, 3>& inputs_;
  const RunSpec& spec_;
  int flight_;
  std::array<std::unique_ptr<CudaEvaluator>, 3> evaluators_;
  std::array<rss3::ShareMatrix, 3> outputs_;
  std::unique_ptr<DeviceRing> ring_;
};

}  // namespace

std::array<rss3::ShareMatrix, 3> random_inputs(const circuits::Program& program, std::uint64_t instances,
                                               std::uint64_t seed) {
  std::array<rss3::ShareMatrix, 3> inputs;
  std::mt19937_64 rng(seed);
  for (auto& m : inputs) {
    m = rss3::ShareMatrix(program.num_inputs, instances);
    for (auto& w : m.x) w = rng();
    for (auto& w : m.a) w = rng();
  }
  return inputs;
}

RunResult run_evaluator(const circuits::Program& program, const std::array<rss3::ShareMatrix, 3>& inputs,
                        const RunSpec& spec) {
  CudaOptions options = spec.options;
  options.profile = false;
  std::vector<std::unique_ptr<Flight>> flights;
  for (int f = 0; f < spec.in_flight; ++f) flights.push_back(std::make_unique<Flight>(program, inputs, spec, options, f));
  for (auto& flight : flights) flight->batch(0);  // warm-up: plans, kernels' first launch

  RunResult result;
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(spec.in_flight));
  std::barrier start(spec.in_flight + 1);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(spec.in_flight));
  std::vector<std::thread> threads;
  for (int f = 0; f < spec.in_flight; ++f)
    threads.emplace_back([&, f] {
      const auto index = static_cast<std::size_t>(f);
      start.arrive_and_wait();
      try {
        for (int it = 1; it <= spec.iterations; ++it) {
          const auto t0 = Clock::now();
          flights[index]->batch(it);
          latencies[index].push_back(seconds_since(t0));
        }
      } catch (...) {
        errors[index] = std::current_exception();
      }
    });
  start.arrive_and_wait();
  const auto t0 = Clock::now();
  for (auto& t : threads) t.join();
  const double wall = seconds_since(t0);
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  result.seconds_per_batch = wall / (static_cast<double>(spec.in_flight) * spec.iterations);
  result.latency = median(latencies[0]);

  // One more batch, alone and profiled, for where the time goes.
  RunSpec alone = spec;
  alone.in_flight = 1;
  CudaOptions profiled = spec.options;
  profiled.profile = true;
  Flight flight(program, inputs, alone, profiled, 99);
  flight.batch(0);
  flight.batch(1);
  result.profile = flight.evaluator(0).last_profile();
  return result;
}

double time_cpu_three(const circuits::Program& program, const std::array<rss3::ShareMatrix, 3>& inputs,
                      double min_seconds) {
  const auto keys = bench_keys();
  const rss3::SimdLevel level = rss3::best_simd_level();
  std::array<std::unique_ptr<rss3::Evaluator>, 3> owned;
  rss3::ThreePartyOptions options;
  for (std::size_t i = 0; i < 3; ++i) {
    owned[i] = rss3::make_cpu_evaluator(level);
    options.evaluators[i] = owned[i].get();
  }
  (void)rss3::evaluate_three_parties(program, inputs, level, {7, 0}, keys, options);
  std::vector<double> times;
  const auto begin = Clock::now();
  for (std::uint32_t it = 1; times.size() < 3 || seconds_since(begin) < min_seconds; ++it) {
    const auto t0 = Clock::now();
    (void)rss3::evaluate_three_parties(program, inputs, level, {7, it}, keys, options);
    times.push_back(seconds_since(t0));
  }
  return median(times);
}

double time_gpu_three_host(const circuits::Program& program, const std::array<rss3::ShareMatrix, 3>& inputs,
                           int device, double min_seconds) {
  RunSpec spec;
  spec.parties = 3;
  spec.transport = Transport::Host;
  spec.device = device;
  Flight flight(program, inputs, spec, CudaOptions{}, 7);
  flight.batch(0);
  std::vector<double> times;
  const auto begin = Clock::now();
  for (int it = 1; times.size() < 3 || seconds_since(begin) < min_seconds; ++it) {
    const auto t0 = Clock::now();
    flight.batch(it);
    times.push_back(seconds_since(t0));
  }
  return median(times);
}

}  // namespace mpc::cuda::bench
