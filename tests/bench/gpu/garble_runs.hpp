// tests/bench/gpu/garble_runs.hpp: half-gates garbling rates for cuda_bench: the CPU garbler on
// one core and on every core, the GPU garbler end to end (tables into a channel that
// discards them, through PCIe) and its kernels alone, the GPU evaluator, and the PCIe
// download rate that bounds the garbler end to end (32 bytes of tables per AND).
#pragma once

#include <cstdint>

#include "circuits/program.hpp"

namespace mpc::cuda::bench {

struct GarbleRates {  // AND gates per second
  double cpu_one_core = 0;
  double cpu_all_cores = 0;
  unsigned cores = 0;
  double gpu_end_to_end = 0;
  double gpu_kernels = 0;
  double gpu_evaluate_end_to_end = 0;
  double gpu_evaluate_kernels = 0;
  double pcie_down_bytes_per_s = 0;  // pinned device-to-host copies: the garbler's tables leave this way
};

GarbleRates measure_garbling(const circuits::Program& program, std::uint64_t cpu_instances,
                             std::uint64_t gpu_instances, int device);

}  // namespace mpc::cuda::bench
