// tests/bench/gpu/cuda_bench.cpp: throughput of the GPU back end of the three-party
// evaluation (Araki et al., CCS 2016, eprint 2016/768), next to the floor that device
// memory bandwidth puts under it, and where the time goes.
//
//   cuda_bench [--circuit NAME|all] [--instances N] [--iterations K] [--mode MODE[,MODE...]]
//              [--peak-gbs X] [--device D] [--json FILE] [--commit ID]
//   MODE: plan     plan statistics and the bandwidth floors only (needs no GPU)
//         memory   device-to-device copy rate; PCIe rates from pinned and pageable memory,
//                  and from pageable memory through the input staging (1 to 8 threads)
//         prf      the PRF kernel alone (alpha bytes/s)
//         one      one party per GPU: party 0 alone, its own message coming back, through
//                  pinned host memory (an echo: PCIe both ways, a host copy) or kept on the
//                  device (DeviceRing of one: what the GPU sustains when neither network
//                  nor PCIe limits); one and two batches in flight; eight staging threads
//         three    three parties on one GPU: host-staged messages over an in-memory ring,
//                  or a DeviceRing; one and two batches in flight
//         kernels  the pass kernels side by side (device memory; staged with 8, 16, 32
//                  words per block), one party on a DeviceRing
//         route    CPU evaluator against GPU evaluator, three parties with host-staged
//                  messages, per batch size (the routing threshold)
//         garble   half-gates garbling of AES-128: the CPU garbler on one core and on all,
//                  the GPU garbler end to end and its kernels alone, the GPU evaluator
//         all      plan, memory, prf, one, three, kernels, route, garble (default)
//   NAME: aes128-and32 aes128-depth4 aes256-and32 aes256-depth4 (encrypt) or all.
//
// Each timed figure is the wall time of evaluate() calls (inputs from pageable host
// memory to outputs back in it), after a warm-up batch, over --iterations batches per
// flight; with several flights in flight, batches per second of all of them together.
// Each run is followed by one profiled batch alone (CudaOptions::profile) whose breakdown
// is printed beside it.
//
// The floors: every op's device-memory traffic per 64-instance word counted from the plan
// as if nothing stayed in cache (device_plan.hpp: XOR 48 bytes, AND 48 + 32 + 8, ...), and
// the staged plan's own traffic (staged_plan.hpp: each value crossing a pass boundary
// once); time >= bytes / peak bandwidth. Peak bandwidth is the vendor's figure for the
// device found by name (H100 SXM 3350 GB/s, H100 PCIe 2000, H200 4800), or --peak-gbs;
// the measured device-to-device copy rate is printed beside it. --json writes every figure
// (docs/benchmarks/gpu.json keeps one record per GPU run).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "circuits/aes.hpp"
#include "circuits/program.hpp"
#include "cuda/aes_ttable.hpp"
#include "bench/gpu/evaluator_runs.hpp"
#include "bench/gpu/garble_runs.hpp"
#include "bench/gpu/staging_runs.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "cuda/device_plan.hpp"
#include "cuda/device_upload.hpp"
#include "cuda/kernels.hpp"
#include "cuda/staging_pool.hpp"

namespace {

using namespace mpc;
using cuda::bench::RunResult;
using cuda::bench::RunSpec;
using cuda::bench::Transport;

struct Options {
  std::string circuit = "aes128-and32";
  std::uint64_t instances = 1 << 20;
  int iterations = 5;
  std::string mode = "all";
  double peak_gbs = 0;
  int device = 0;
  std::string json;
  std::string commit = "unknown";
};

[[noreturn]] void usage(const char* error) {
  std::fprintf(stderr,
               "error: %s\nusage: cuda_bench [--circuit aes128-and32|aes128-depth4|aes256-and32|aes256-depth4|all]\n"
               "                  [--instances N] [--iterations K]\n"
               "                  [--mode plan|memory|prf|one|three|kernels|route|garble|all[,...]]\n"
               "                  [--peak-gbs X] [--device D] [--json FILE] [--commit ID]\n",
               error);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value for " + arg).c_str());
      return argv[++i];
    };
    try {
      if (arg == "--circuit") o.circuit = value();
      else if (arg == "--instances") o.instances = std::stoull(value());
      else if (arg == "--iterations") o.iterations = std::stoi(value());
      else if (arg == "--mode") o.mode = value();
      else if (arg == "--peak-gbs") o.peak_gbs = std::stod(value());
      else if (arg == "--device") o.device = std::stoi(value());
      else if (arg == "--json") o.json = value();
      else if (arg == "--commit") o.commit = value();
      else usage(("unknown option " + arg).c_str());
    } catch (const std::logic_error&) {
      usage(("bad value for " + arg).c_str());
    }
  }
  if (o.iterations < 1 || o.instances == 0) usage("--iterations and --instances must be positive");
  return o;
}

bool has_mode(const Options& o, const char* mode) {
  if (o.mode == "all") return true;
  std::stringstream list(o.mode);
  for (std::string item; std::getline(list, item, ',');)
    if (item == mode) return true;
  return false;
}

struct NamedCircuit {
  std::string name;
  circuits::AesKeySize size;
  circuits::SboxVariant sbox;
};

std::vector<NamedCircuit> circuits_for(const std::string& name) {
  const std::vector<NamedCircuit> all = {
      {"aes128-and32", circuits::AesKeySize::Aes128, circuits::SboxVariant::And32},
      {"aes128-depth4", circuits::AesKeySize::Aes128, circuits::SboxVariant::Depth4},
      {"aes256-and32", circuits::AesKeySize::Aes256, circuits::SboxVariant::And32},
      {"aes256-depth4", circuits::AesKeySize::Aes256, circuits::SboxVariant::Depth4}};
  if (name == "all") return all;
  for (const auto& c : all)
    if (c.name == name) return {c};
  usage(("unknown circuit " + name).c_str());
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

// Vendor peak memory bandwidth by device name (GB/s), 0 if unknown.
double nominal_bandwidth(const std::string& name) {
  if (name.find("H200") != std::string::npos) return 4800;
  if (name.find("H100") != std::string::npos)
    return name.find("PCIe") != std::string::npos ? 2000 : name.find("NVL") != std::string::npos ? 3900 : 3350;
  return 0;
}

// Every figure for --json, as a flat list of records.
class JsonLog {
 public:
  void field(const std::string& key, const std::string& value) { current_ += quote(key) + ": " + quote(value) + ", "; }
  void field(const std::string& key, double value) {
    char text[64];
    // Whole numbers (instance counts) exactly, the rest to six digits.
    std::snprintf(text, sizeof text, value == static_cast<double>(static_cast<long long>(value)) && value < 1e15
                                         ? "%.0f" : "%.6g", value);
    current_ += quote(key) + ": " + text + ", ";
  }
  void end_record() {
    if (current_.size() >= 2) current_.resize(current_.size() - 2);
    records_.push_back("{" + current_ + "}");
    current_.clear();
  }
  void write(const std::string& path, const std::string& header) const {
    if (path.empty()) return;
    std::ofstream out(path);
    out << "{" << header << ", \"runs\": [\n";
    for (std::size_t i = 0; i < records_.size(); ++i) out << "  " << records_[i] << (i + 1 < records_.size() ? ",\n" : "\n");
    out << "]}\n";
  }
  static std::string quote(const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  }

 private:
  std::string current_;
  std::vector<std::string> records_;
};

void print_plan(const NamedCircuit& c, const circuits::Program& program, std::uint64_t instances) {
  const cuda::detail::DevicePlan plan = cuda::detail::build_device_plan(program);
  const cuda::detail::TrafficCount t = cuda::detail::count_traffic(plan);
  std::uint32_t levels = 0, max_levels = 0;
  for (const auto& pass : plan.passes) {
    levels += pass.levels;
    max_levels = std::max(max_levels, pass.levels);
  }
  using namespace cuda::detail;
  const double bytes_per_instance = static_cast<double>(t.bytes_per_word()) / 64.0;
  std::printf("circuit %s: %llu AND, %u layers with ANDs, %u slots (%u on the device), ops: xor %llu inv %llu copy %llu const %llu "
              "load %llu and %llu finish %llu output %llu; %u levels (at most %u per pass)\n",
              c.name.c_str(), static_cast<unsigned long long>(program.and_gates), program.and_depth, plan.num_slots, plan.num_device_slots,
              static_cast<unsigned long long>(t.ops[kDevXor]), static_cast<unsigned long long>(t.ops[kDevInv]),
              static_cast<unsigned long long>(t.ops[kDevCopy]),
              static_cast<unsigned long long>(t.ops[kDevConst0] + t.ops[kDevConst1]),
              static_cast<unsigned long long>(t.ops[kDevLoad]), static_cast<unsigned long long>(t.ops[kDevAnd]),
              static_cast<unsigned long long>(t.ops[kDevFinish]), static_cast<unsigned long long>(t.ops[kDevOutput]),
              levels, max_levels);
  std::printf("  device-memory traffic, no cache reuse: %.1f bytes per instance (%.2f bytes per AND gate)\n",
              bytes_per_instance, bytes_per_instance / static_cast<double>(program.and_gates));
  if (plan.staged.usable) {
    std::uint32_t staged_levels = 0, staged_max_levels = 0;
    for (const auto& pass : plan.staged.passes) {
      staged_levels += pass.levels;
      staged_max_levels = std::max(staged_max_levels, pass.levels);
    }
    const double staged_bytes = static_cast<double>(plan.staged.bytes_per_word()) / 64.0;
    std::printf("  staged (shared-memory) passes: %u shared registers at most (%.1f KiB per 32 words), %u levels (at most "
                "%u per pass), device-memory traffic %.1f bytes per instance (%.2f per AND gate)\n",
                plan.staged.max_regs, plan.staged.max_regs * 16.0 * 32 / 1024, staged_levels, staged_max_levels,
                staged_bytes, staged_bytes / static_cast<double>(program.and_gates));
  } else {
    std::printf("  staged (shared-memory) passes: not usable for this program (16-bit homes or registers)\n");
  }
  for (const auto& [device, gbs] : std::vector<std::pair<const char*, double>>{{"H100 SXM", 3350}, {"H200", 4800}}) {
    const double blocks = gbs * 1e9 / bytes_per_instance;
    std::printf("  floor on %-8s (%4.0f GB/s): %.3g AES blocks/s, %.3g AND gates/s per party\n", device, gbs, blocks,
                blocks * static_cast<double>(program.and_gates));
  }
  std::printf("  wire: %llu bytes per instance per party per direction (1 bit per AND); PCIe per party: %.0f bytes per "
              "instance each way with the GPU PRF (+%.0f host-to-device with CorrelatedRandomness)\n",
              static_cast<unsigned long long>(program.and_gates / 8), program.and_gates / 8.0,
              program.and_gates / 8.0);
  const WorkspaceLayout layout = workspace_layout(plan, instances, plan.staged.usable);
  const unsigned threads = cuda::detail::default_staging_threads();
  std::printf("  memory for %llu instances per party (%s kernel): %.1f MiB on the device (state %.1f MiB), %.1f MiB "
              "pinned on the host for messages and alpha, %.1f MiB of staging slots (%u staging thread%s here); largest "
              "layer %u ANDs\n",
              static_cast<unsigned long long>(instances), plan.staged.usable ? "staged" : "device-memory",
              layout.total / 1048576.0, (layout.in_x - layout.state) / 1048576.0,
              4.0 * layout.message_capacity / 1048576.0,
              static_cast<double>(cuda::detail::staging_slots_for(threads) * cuda::detail::kDefaultStagingSlotBytes) /
                  1048576.0,
              threads, threads == 1 ? "" : "s", plan.max_ands);
}


struct Floors {
  double no_reuse_seconds = 0;  // per batch per party
  double staged_seconds = 0;
};

Floors floors_for(const circuits::Program& program, std::uint64_t instances, double peak_gbs) {
  const cuda::detail::DevicePlan plan = cuda::detail::build_device_plan(program);
  Floors f;
  if (peak_gbs <= 0) return f;
  const double n = static_cast<double>(instances);
  f.no_reuse_seconds = static_cast<double>(cuda::detail::count_traffic(plan).bytes_per_word()) / 64.0 * n / (peak_gbs * 1e9);
  if (plan.staged.usable)
    f.staged_seconds = static_cast<double>(plan.staged.bytes_per_word()) / 64.0 * n / (peak_gbs * 1e9);
  return f;
}

void print_profile(const cuda::EvaluationProfile& p) {
  std::printf("      profile (party 0, one batch alone): wall %.2f ms = host exchange %.2f + ring %.2f + wait on GPU %.2f "
              "+ input staging %.2f + CPU alpha %.2f + rest %.2f; GPU span %.2f ms: passes %.2f, PRF %.2f, inputs up "
              "%.2f, messages up %.2f, down %.2f (%u passes, %u segments, %s)\n",
              p.wall_ms, p.host_exchange_ms, p.host_ring_ms, p.host_wait_ms, p.host_input_ms, p.host_alpha_ms,
              p.wall_ms - p.host_exchange_ms - p.host_ring_ms - p.host_wait_ms - p.host_input_ms - p.host_alpha_ms,
              p.gpu_span_ms, p.gpu_pass_ms, p.gpu_alpha_ms, p.gpu_input_ms, p.gpu_message_up_ms, p.gpu_message_down_ms,
              p.passes, p.segments,
              p.staged_words != 0 ? ("staged kernel, " + std::to_string(p.staged_words) + " words per block").c_str()
                                  : "device-memory kernel");
}

RunSpec spec_of(int parties, Transport transport, int in_flight) {
  RunSpec spec;
  spec.parties = parties;
  spec.transport = transport;
  spec.in_flight = in_flight;
  return spec;
}

std::string kernel_label(const cuda::CudaOptions& o) {
  if (o.kernel == cuda::CudaKernel::DeviceMemory) return "device-memory";
  return o.staged_words == 0 ? "auto" : "staged-" + std::to_string(o.staged_words);
}

// The figures of docs/benchmarks/gpu.json: AES-128/32-AND at 2^20 instances, one party
// per GPU (the best of its runs with messages on the device) and three parties on one GPU.
struct Headline {
  double one_party = 0;
  double one_party_floor_fraction = 0;
  double three_parties = 0;
};

void report(JsonLog& json, Headline& headline, const std::string& circuit, const std::string& what,
            const RunSpec& spec, const circuits::Program& program, std::uint64_t n, const RunResult& r,
            const Floors& floors) {
  const double ands = static_cast<double>(program.and_gates) * static_cast<double>(n);
  // Three parties on one GPU share it: the floor of one batch of each is three party floors.
  const double share = spec.parties == 3 ? 3.0 : 1.0;
  const double per_party = ands / r.seconds_per_batch;
  const double no_reuse = floors.no_reuse_seconds > 0 ? share * floors.no_reuse_seconds / r.seconds_per_batch : 0;
  const double staged = floors.staged_seconds > 0 ? share * floors.staged_seconds / r.seconds_per_batch : 0;
  std::printf("  %-58s %8.2f ms per batch (latency %7.2f ms), %.3g AES blocks/s, %.3g AND gates/s per party; %.0f%% "
              "of the no-reuse memory floor, %.0f%% of the staged floor\n",
              what.c_str(), r.seconds_per_batch * 1e3, r.latency * 1e3, static_cast<double>(n) / r.seconds_per_batch,
              per_party, 100 * no_reuse, 100 * staged);
  print_profile(r.profile);
  if (circuit == "aes128-and32" && n == (std::uint64_t{1} << 20) && spec.transport == Transport::Device &&
      spec.options.kernel == cuda::CudaKernel::Auto && spec.options.staged_words == 0) {
    if (spec.parties == 1 && per_party > headline.one_party) {
      headline.one_party = per_party;
      headline.one_party_floor_fraction = no_reuse;
    }
    if (spec.parties == 3) headline.three_parties = std::max(headline.three_parties, per_party);
  }
  json.field("circuit", circuit);
  json.field("what", what);
  json.field("parties_on_gpu", spec.parties);
  json.field("transport", spec.transport == Transport::Host ? "host" : "device");
  json.field("in_flight", spec.in_flight);
  json.field("kernel", kernel_label(spec.options));
  json.field("instances", static_cast<double>(n));
  json.field("ms_per_batch", r.seconds_per_batch * 1e3);
  json.field("latency_ms", r.latency * 1e3);
  json.field("and_gates_per_s_per_party", per_party);
  json.field("blocks_per_s_per_party", static_cast<double>(n) / r.seconds_per_batch);
  json.field("fraction_of_no_reuse_floor", no_reuse);
  json.field("fraction_of_staged_floor", staged);
  const auto& p = r.profile;
  json.field("profile_wall_ms", p.wall_ms);
  json.field("profile_host_exchange_ms", p.host_exchange_ms);
  json.field("profile_host_ring_ms", p.host_ring_ms);
  json.field("profile_host_wait_ms", p.host_wait_ms);
  json.field("profile_host_input_ms", p.host_input_ms);
  json.field("profile_gpu_span_ms", p.gpu_span_ms);
  json.field("profile_gpu_pass_ms", p.gpu_pass_ms);
  json.field("profile_gpu_alpha_ms", p.gpu_alpha_ms);
  json.field("profile_gpu_input_ms", p.gpu_input_ms);
  json.field("profile_gpu_message_up_ms", p.gpu_message_up_ms);
  json.field("profile_gpu_message_down_ms", p.gpu_message_down_ms);
  json.end_record();
}

void bench_prf(JsonLog& json, int device) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const std::uint64_t bytes = std::uint64_t{1} << 30;
  std::uint8_t* out = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&out), bytes), "cudaMalloc");
  constexpr cuda::detail::AesTables tables = cuda::detail::make_aes_tables();
  cuda::detail::AlphaKeys keys{};
  // Any keys: the rate does not depend on them.
  const std::uint8_t k0[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  keys.own = cuda::detail::aes128_expand_key(k0, tables);
  keys.previous = cuda::detail::aes128_expand_key(k0, tables);
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  check(cuda::detail::launch_alpha(keys, 0, bytes / 16, out, nullptr), "alpha warm-up");
  check(cudaEventRecord(start, nullptr), "event");
  const int reps = 5;
  for (int r = 0; r < reps; ++r) check(cuda::detail::launch_alpha(keys, 0, bytes / 16, out, nullptr), "alpha");
  check(cudaEventRecord(stop, nullptr), "event");
  check(cudaEventSynchronize(stop), "event");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "event");
  const double rate = static_cast<double>(bytes) * reps / (ms * 1e-3);
  std::printf("prf: %.1f GB/s of alpha (two AES-128 per 16 bytes, T-tables in shared memory): %.3g AND gates/s of "
              "correlated randomness\n",
              rate / 1e9, rate * 8);
  json.field("what", "prf");
  json.field("alpha_gb_per_s", rate / 1e9);
  json.end_record();
  check(cudaEventDestroy(start), "event");
  check(cudaEventDestroy(stop), "event");
  check(cudaFree(out), "cudaFree");
}

// Device-to-device copy rate (bytes read plus written) and PCIe rates from pinned and
// pageable memory, what pinning pageable memory costs, and the input staging's rate from
// pageable memory (rows of 128 KiB: an input row of 2^20 instances).
double bench_memory(JsonLog& json, int device, double nominal) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const std::size_t bytes = std::size_t{1} << 30;
  const std::size_t host_bytes = bytes / 4;
  void *a = nullptr, *b = nullptr, *pinned = nullptr;
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  check(cudaHostAlloc(&pinned, host_bytes, cudaHostAllocDefault), "cudaHostAlloc");
  std::vector<std::uint8_t> pageable(host_bytes, 1);
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  auto timed = [&](const std::function<void()>& body) {
    body();
    check(cudaEventRecord(start, nullptr), "event");
    body();
    check(cudaEventRecord(stop, nullptr), "event");
    check(cudaEventSynchronize(stop), "event");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "event");
    return ms * 1e-3;
  };
  const double d2d = timed([&] { check(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, nullptr), "copy"); });
  const double h2d = timed([&] { check(cudaMemcpyAsync(a, pinned, host_bytes, cudaMemcpyHostToDevice, nullptr), "copy"); });
  const double d2h = timed([&] { check(cudaMemcpyAsync(pinned, a, host_bytes, cudaMemcpyDeviceToHost, nullptr), "copy"); });
  const double h2d_pageable =
      timed([&] { check(cudaMemcpyAsync(a, pageable.data(), host_bytes, cudaMemcpyHostToDevice, nullptr), "copy"); });
  const double d2h_pageable =
      timed([&] { check(cudaMemcpyAsync(pageable.data(), a, host_bytes, cudaMemcpyDeviceToHost, nullptr), "copy"); });
  const auto t0 = std::chrono::steady_clock::now();
  check(cudaHostRegister(pageable.data(), host_bytes, cudaHostRegisterDefault), "cudaHostRegister");
  const double registration = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  check(cudaHostUnregister(pageable.data()), "cudaHostUnregister");
  const double d2d_rate = 2.0 * bytes / d2d / 1e9;
  std::printf("memory: device-to-device copy %.0f GB/s (read + write; nominal peak %.0f GB/s); PCIe from pinned memory "
              "%.1f GB/s up, %.1f GB/s down; from pageable memory %.1f GB/s up, %.1f GB/s down; pinning %.0f MiB of "
              "pageable memory takes %.1f ms\n",
              d2d_rate, nominal, host_bytes / h2d / 1e9, host_bytes / d2h / 1e9, host_bytes / h2d_pageable / 1e9,
              host_bytes / d2h_pageable / 1e9, host_bytes / 1048576.0, registration * 1e3);
  json.field("what", "memory");
  json.field("device_to_device_gb_per_s", d2d_rate);
  json.field("pinned_up_gb_per_s", host_bytes / h2d / 1e9);
  json.field("pinned_down_gb_per_s", host_bytes / d2h / 1e9);
  json.field("pageable_up_gb_per_s", host_bytes / h2d_pageable / 1e9);
  json.field("pageable_down_gb_per_s", host_bytes / d2h_pageable / 1e9);
  json.field("register_ms_per_gib", registration * 1e3 * 4);
  std::printf("  staged from pageable memory (host threads -> 4 MiB pinned slots -> device):");
  for (unsigned threads : {1u, 2u, 4u, 8u}) {
    const double rate = cuda::bench::staged_upload_rate(device, pageable.data(), static_cast<std::uint8_t*>(a),
                                                        host_bytes, std::size_t{128} << 10, threads);
    std::printf(" %u thread%s %.1f GB/s%s", threads, threads == 1 ? "" : "s", rate / 1e9, threads == 8 ? "\n" : ",");
    json.field("staged_up_gb_per_s_" + std::to_string(threads) + "_threads", rate / 1e9);
  }
  json.end_record();
  check(cudaEventDestroy(start), "event");
  check(cudaEventDestroy(stop), "event");
  check(cudaFree(a), "cudaFree");
  check(cudaFree(b), "cudaFree");
  check(cudaFreeHost(pinned), "cudaFreeHost");
  return d2d_rate;
}

void bench_route(JsonLog& json, const circuits::Program& program, int device) {
  std::printf("routing: three parties over an in-memory ring, CPU evaluator (%s) against GPU evaluator (host-staged "
              "messages, GPU PRF), AES-128/32-AND\n",
              rss3::simd_level_name(rss3::best_simd_level()));
  for (std::uint64_t n : {1u, 64u, 2048u, 8192u, 32768u, 131072u}) {
    const auto inputs = cuda::bench::random_inputs(program, n, n);
    const double cpu = cuda::bench::time_cpu_three(program, inputs, 0.3);
    const double gpu = cuda::bench::time_gpu_three_host(program, inputs, device, 0.3);
    std::printf("  %7llu instances: CPU %8.2f ms, GPU %8.2f ms per batch (%s)\n", static_cast<unsigned long long>(n),
                cpu * 1e3, gpu * 1e3, gpu < cpu ? "GPU sooner" : "CPU sooner");
    json.field("what", "route");
    json.field("instances", static_cast<double>(n));
    json.field("cpu_ms", cpu * 1e3);
    json.field("gpu_ms", gpu * 1e3);
    json.end_record();
  }
}

void bench_garble(JsonLog& json, const circuits::Program& program, int device) {
  // Eight chunks of the GPU garbler: the pipeline's start (the first chunk's inputs and
  // kernels) weighs an eighth of a chunk's download.
  const std::uint64_t cpu_instances = 2048, gpu_instances = 131072;
  const cuda::bench::GarbleRates r = cuda::bench::measure_garbling(program, cpu_instances, gpu_instances, device);
  const double pcie_bound = r.pcie_down_bytes_per_s / 32;  // 32 bytes of tables per AND
  std::printf("garbling AES-128/32-AND (half-gates, 32 bytes of tables per AND): CPU garbler %.3g AND/s on one core, "
              "%.3g on %u cores (%llu instances each); GPU garbler (%llu instances) %.3g AND/s end to end (%.1fx one "
              "core), kernels alone %.3g AND/s (%.1fx one core, %.1fx all cores); GPU evaluator %.3g AND/s end to end, "
              "kernels alone %.3g\n",
              r.cpu_one_core, r.cpu_all_cores, r.cores, static_cast<unsigned long long>(cpu_instances),
              static_cast<unsigned long long>(gpu_instances), r.gpu_end_to_end, r.gpu_end_to_end / r.cpu_one_core,
              r.gpu_kernels, r.gpu_kernels / r.cpu_one_core, r.gpu_kernels / r.cpu_all_cores, r.gpu_evaluate_end_to_end,
              r.gpu_evaluate_kernels);
  std::printf("  PCIe bound of garbling end to end: tables down at %.1f GB/s = %.3g AND/s (%.1fx one core); the GPU "
              "garbler end to end reaches %.0f%% of it\n",
              r.pcie_down_bytes_per_s / 1e9, pcie_bound, pcie_bound / r.cpu_one_core,
              100 * r.gpu_end_to_end / pcie_bound);
  json.field("what", "garble");
  json.field("cpu_one_core_and_per_s", r.cpu_one_core);
  json.field("cpu_all_cores_and_per_s", r.cpu_all_cores);
  json.field("cores", r.cores);
  json.field("gpu_instances", static_cast<double>(gpu_instances));
  json.field("gpu_end_to_end_and_per_s", r.gpu_end_to_end);
  json.field("gpu_kernels_and_per_s", r.gpu_kernels);
  json.field("gpu_evaluate_end_to_end_and_per_s", r.gpu_evaluate_end_to_end);
  json.field("gpu_evaluate_kernels_and_per_s", r.gpu_evaluate_kernels);
  json.field("pcie_down_gb_per_s", r.pcie_down_bytes_per_s / 1e9);
  json.field("pcie_bound_and_per_s", pcie_bound);
  json.end_record();
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const auto selected = circuits_for(o.circuit);
  std::map<std::string, circuits::Program> programs;
  for (const auto& c : selected)
    programs[c.name] = circuits::compile(circuits::build_aes_circuit(c.size, circuits::AesDirection::Encrypt, c.sbox));
  if (has_mode(o, "plan"))
    for (const auto& c : selected) print_plan(c, programs[c.name], o.instances);
  if (o.mode == "plan") return 0;

  if (!cuda::cuda_device_available()) {
    std::printf("no CUDA device: only the plan statistics above (--mode plan)\n");
    return o.mode == "all" ? 0 : 1;
  }
  JsonLog json;
  Headline headline;
  std::string header;
  try {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, o.device), "device properties");
    const double peak = o.peak_gbs > 0 ? o.peak_gbs : nominal_bandwidth(prop.name);
    std::printf("device %d: %s, %d SMs, %.0f MiB L2, %.1f GiB; peak memory bandwidth %.0f GB/s%s\n", o.device,
                prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1048576.0, prop.totalGlobalMem / 1073741824.0,
                peak, o.peak_gbs > 0 ? " (--peak-gbs)" : " (vendor figure by name)");
    header = JsonLog::quote("device") + ": " + JsonLog::quote(prop.name) + ", " + JsonLog::quote("date") + ": " +
             JsonLog::quote(utc_now()) + ", " + JsonLog::quote("commit") + ": " + JsonLog::quote(o.commit) + ", " +
             JsonLog::quote("peak_gb_per_s") + ": " + std::to_string(peak);
    if (has_mode(o, "memory")) bench_memory(json, o.device, peak);
    if (has_mode(o, "prf")) bench_prf(json, o.device);
    for (const auto& c : selected) {
      const circuits::Program& program = programs[c.name];
      const Floors floors = floors_for(program, o.instances, peak);
      std::printf("%s, %llu instances: memory floor per batch per party %.3f ms without reuse, %.3f ms for the staged "
                  "plan\n",
                  c.name.c_str(), static_cast<unsigned long long>(o.instances), floors.no_reuse_seconds * 1e3,
                  floors.staged_seconds * 1e3);
      const auto inputs = cuda::bench::random_inputs(program, o.instances, 1);
      auto run = [&](const std::string& what, RunSpec spec) {
        spec.iterations = o.iterations;
        spec.device = o.device;
        report(json, headline, c.name, what, spec, program, o.instances,
               cuda::bench::run_evaluator(program, inputs, spec), floors);
      };
      if (has_mode(o, "one")) {
        for (int flights : {1, 2}) {
          run("one party, host echo, " + std::to_string(flights) + " in flight", spec_of(1, Transport::Host, flights));
          run("one party, device ring, " + std::to_string(flights) + " in flight", spec_of(1, Transport::Device, flights));
        }
        // The default staging threads (a quarter of the host's) against eight.
        RunSpec wide = spec_of(1, Transport::Device, 1);
        wide.options.staging_threads = 8;
        run("one party, device ring, 1 in flight, 8 staging threads", wide);
      }
      if (has_mode(o, "three")) {
        run("three parties on one GPU, host ring, 1 in flight", spec_of(3, Transport::Host, 1));
        run("three parties on one GPU, device ring, 1 in flight", spec_of(3, Transport::Device, 1));
        run("three parties on one GPU, device ring, 2 in flight", spec_of(3, Transport::Device, 2));
      }
      if (has_mode(o, "kernels")) {
        const std::vector<cuda::CudaOptions> kernels = {{cuda::CudaKernel::DeviceMemory, 0, false},
                                                        {cuda::CudaKernel::Staged, 8, false},
                                                        {cuda::CudaKernel::Staged, 16, false},
                                                        {cuda::CudaKernel::Staged, 32, false}};
        for (const auto& k : kernels) {
          RunSpec spec = spec_of(1, Transport::Device, 1);
          spec.options = k;
          try {
            run("kernel " + kernel_label(k) + ", one party, device ring", spec);
          } catch (const std::exception& e) {
            std::printf("  kernel %s: %s\n", kernel_label(k).c_str(), e.what());
          }
        }
      }
    }
    if (has_mode(o, "route") || has_mode(o, "garble")) {
      const circuits::Program program = circuits::compile(circuits::build_aes_circuit(
          circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt, circuits::SboxVariant::And32));
      if (has_mode(o, "route")) bench_route(json, program, o.device);
      if (has_mode(o, "garble")) bench_garble(json, program, o.device);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    json.write(o.json, header);
    return 1;
  }
  if (headline.one_party > 0 || headline.three_parties > 0) {
    std::printf("AES-128 at 2^20 instances: %.3g AND gates/s per party with one party per GPU (%.0f%% of the no-reuse "
                "memory floor), %.3g per party with three parties on one GPU\n",
                headline.one_party, 100 * headline.one_party_floor_fraction, headline.three_parties);
    char text[256];
    std::snprintf(text, sizeof text,
                  ", \"aes128_and_gates_per_s_per_party\": %.6g, \"fraction_of_memory_floor\": %.4g, "
                  "\"aes128_three_on_one_gpu_and_gates_per_s_per_party\": %.6g",
                  headline.one_party, headline.one_party_floor_fraction, headline.three_parties);
    header += text;
  }
  json.write(o.json, header);
  return 0;
}
