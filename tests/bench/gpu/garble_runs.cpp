// tests/bench/gpu/garble_runs.cpp: see garble_runs.hpp.
#include "bench/gpu/garble_runs.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "cuda/cuda_resources.hpp"
#include "cuda/gpu_garbling.hpp"
#include "protocol/gc2/half_gates.hpp"

namespace mpc::cuda::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Discards what is sent; answers every receive with zeros (tables of nothing: the
// evaluator's work per gate does not depend on the bytes).
class NullChannel final : public two_party::Channel {
 public:
  void send(std::span<const std::uint8_t> bytes) override { sent_ += bytes.size(); }
  void flush() override {}
  void receive(std::span<std::uint8_t> out) override { std::memset(out.data(), 0, out.size()); }
  std::uint64_t bytes_sent() const override { return sent_; }

 private:
  std::uint64_t sent_ = 0;
};

// Pinned device-to-host copies of 64 MiB, as the garbler makes them, back to back.
double pcie_down_rate(int device) {
  detail::check(cudaSetDevice(device), "cudaSetDevice");
  const std::size_t bytes = std::size_t{64} << 20;
  const int pieces = 16;
  detail::DeviceBuffer from;
  from.allocate(bytes, "bench buffer");
  detail::PinnedBuffer to;
  to.allocate(bytes);
  detail::Stream stream;
  detail::check(cudaMemcpyAsync(to.data(), from.as<void>(), bytes, cudaMemcpyDeviceToHost, stream.get()), "copy");
  detail::check(cudaStreamSynchronize(stream.get()), "copy");
  const auto t0 = Clock::now();
  for (int k = 0; k < pieces; ++k)
    detail::check(cudaMemcpyAsync(to.data(), from.as<void>(), bytes, cudaMemcpyDeviceToHost, stream.get()), "copy");
  detail::check(cudaStreamSynchronize(stream.get()), "copy");
  return static_cast<double>(bytes) * pieces / seconds_since(t0);
}

}  // namespace

GarbleRates measure_garbling(const circuits::Program& program, std::uint64_t cpu_instances,
                             std::uint64_t gpu_instances, int device) {
  GarbleRates r;
  gc2::Garbler garbler;
  const double ands_cpu = static_cast<double>(program.and_gates) * static_cast<double>(cpu_instances);
  const gc2::Labels cpu_zero = gc2::zero_labels(std::size_t{program.num_inputs} * cpu_instances);
  {
    NullChannel channel;
    (void)garbler.garble(program, cpu_instances, cpu_zero, channel);  // warm-up
    const auto t0 = Clock::now();
    (void)garbler.garble(program, cpu_instances, cpu_zero, channel);
    r.cpu_one_core = ands_cpu / seconds_since(t0);
  }
  r.cores = std::max(1u, std::thread::hardware_concurrency());
  {
    std::vector<std::thread> threads;
    const auto t0 = Clock::now();
    for (unsigned c = 0; c < r.cores; ++c)
      threads.emplace_back([&] {
        NullChannel channel;
        (void)garbler.garble(program, cpu_instances, cpu_zero, channel);
      });
    for (auto& t : threads) t.join();
    r.cpu_all_cores = ands_cpu * r.cores / seconds_since(t0);
  }
  r.pcie_down_bytes_per_s = pcie_down_rate(device);
  GpuGarbling gpu(device);
  const double ands_gpu = static_cast<double>(program.and_gates) * static_cast<double>(gpu_instances);
  const gc2::Labels gpu_zero = gc2::zero_labels(std::size_t{program.num_inputs} * gpu_instances);
  {
    NullChannel channel;
    (void)gpu.garble(garbler, program, gpu_instances, gpu_zero, channel);  // warm-up: allocations, first launches
    const auto t0 = Clock::now();
    (void)gpu.garble(garbler, program, gpu_instances, gpu_zero, channel);
    r.gpu_end_to_end = ands_gpu / seconds_since(t0);
    r.gpu_kernels = ands_gpu / (gpu.last_kernel_ms() * 1e-3);
  }
  {
    NullChannel channel;
    (void)gpu.evaluate(program, gpu_instances, gpu_zero, channel);
    const auto t0 = Clock::now();
    (void)gpu.evaluate(program, gpu_instances, gpu_zero, channel);
    r.gpu_evaluate_end_to_end = ands_gpu / seconds_since(t0);
    r.gpu_evaluate_kernels = ands_gpu / (gpu.last_kernel_ms() * 1e-3);
  }
  return r;
}

}  // namespace mpc::cuda::bench
