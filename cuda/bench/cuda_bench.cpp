// cuda/bench/cuda_bench.cpp: throughput of the GPU back end of the three-party
// evaluation (Araki et al., CCS 2016, eprint 2016/768), next to the floor that device
// memory bandwidth puts under it.
//
//   cuda_bench [--circuit NAME|all] [--instances N] [--iterations K] [--mode MODE]
//              [--peak-gbs X] [--device D]
//   MODE: plan   plan statistics and the bandwidth floors only (needs no GPU)
//         three  three parties on one GPU over an in-memory ring (AND gates/s per party,
//                AES blocks/s), alpha from the GPU PRF and from CorrelatedRandomness
//         one    one party per GPU: with three devices, parties on devices 0, 1, 2;
//                with fewer, party 0 alone with an echo exchange (its own message comes
//                back: what one party's GPU and PCIe sustain with an infinitely fast
//                network; the result is garbage, the timing is not)
//         prf    the PRF kernel alone (alpha bytes/s)
//         all    plan, prf, three, one (default)
//   NAME: aes128-and32 aes128-depth4 aes256-and32 aes256-depth4 (encrypt) or all.
//
// The floor: every op's device-memory traffic per 64-instance word counted from the plan
// (device_plan.hpp: op_bytes_per_word; XOR 48 bytes, AND local phase 48, finish 32, alpha
// 8, ...) as if nothing stayed in cache; time >= bytes / peak bandwidth. Peak bandwidth is
// the vendor's figure for the device found by name (H100 SXM 3350 GB/s, H100 PCIe 2000,
// H200 4800), or --peak-gbs; the measured device-to-device copy rate is printed beside it.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "circuits/aes.hpp"
#include "circuits/program.hpp"
#include "cuda/aes_ttable.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "cuda/device_plan.hpp"
#include "cuda/kernels.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "protocol/rss3/memory_ring.hpp"

namespace {

using namespace mpc;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string circuit = "aes128-and32";
  std::uint64_t instances = 1 << 20;
  int iterations = 5;
  std::string mode = "all";
  double peak_gbs = 0;
  int device = 0;
};

[[noreturn]] void usage(const char* error) {
  std::fprintf(stderr,
               "error: %s\nusage: cuda_bench [--circuit aes128-and32|aes128-depth4|aes256-and32|aes256-depth4|all]\n"
               "                  [--instances N] [--iterations K] [--mode plan|three|one|prf|all]\n"
               "                  [--peak-gbs X] [--device D]\n",
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
      else usage(("unknown option " + arg).c_str());
    } catch (const std::logic_error&) {
      usage(("bad value for " + arg).c_str());
    }
  }
  if (o.iterations < 1 || o.instances == 0) usage("--iterations and --instances must be positive");
  return o;
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
  const WorkspaceLayout layout = workspace_layout(plan, instances);
  std::printf("  memory for %llu instances per party: %.1f MiB on the device (state %.1f MiB), %.1f MiB pinned on the "
              "host; largest layer %u ANDs\n",
              static_cast<unsigned long long>(instances), layout.total / 1048576.0,
              (layout.in_x - layout.state) / 1048576.0, 4.0 * layout.message_capacity / 1048576.0, plan.max_ands);
}

// Dealer work for a benchmark batch: random shares (their values do not matter).
std::array<rss3::ShareMatrix, 3> random_inputs(const circuits::Program& program, std::uint64_t n) {
  std::array<rss3::ShareMatrix, 3> inputs;
  std::mt19937_64 rng(1);
  for (auto& m : inputs) {
    m = rss3::ShareMatrix(program.num_inputs, n);
    for (auto& w : m.x) w = rng();
    for (auto& w : m.a) w = rng();
  }
  return inputs;
}

std::array<rss3::PrfKey, 3> bench_keys() {
  std::array<rss3::PrfKey, 3> keys{};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t b = 0; b < 16; ++b) keys[i][b] = static_cast<std::uint8_t>(17 * i + b);
  return keys;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void report(const char* what, const circuits::Program& program, std::uint64_t n, double seconds, double floor_seconds) {
  const double ands = static_cast<double>(program.and_gates) * static_cast<double>(n);
  std::printf("  %-44s %9.3f ms per batch, %.3g AES blocks/s, %.3g AND gates/s per party (%.0f%% of the memory "
              "floor's rate)\n",
              what, seconds * 1e3, static_cast<double>(n) / seconds, ands / seconds,
              100.0 * floor_seconds / seconds);
}

// Three parties in three threads, evaluators on the given devices.
double time_three(const circuits::Program& program, const std::array<rss3::ShareMatrix, 3>& inputs,
                  const std::array<int, 3>& devices, bool device_prf, int iterations) {
  std::array<std::unique_ptr<cuda::CudaEvaluator>, 3> evaluators;
  for (std::size_t i = 0; i < 3; ++i) {
    evaluators[i] = cuda::create_cuda_evaluator(devices[i]);
    evaluators[i]->reserve(program, inputs[i].instances);
  }
  const auto keys = bench_keys();
  std::vector<double> times;
  for (int it = 0; it <= iterations; ++it) {  // iteration 0 warms up
    rss3::MemoryRing ring(std::chrono::seconds(600));
    std::array<rss3::ShareMatrix, 3> outputs;
    const rss3::BatchNonce nonce{42, static_cast<std::uint32_t>(it)};
    const auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
      threads.emplace_back([&, i] {
        const auto index = static_cast<std::size_t>(i);
        const auto& own = keys[index];
        const auto& previous = keys[static_cast<std::size_t>(rss3::previous_party(i))];
        if (device_prf) {
          evaluators[index]->evaluate_with_device_prf(program, inputs[index], outputs[index],
                                                      cuda::DevicePrf{own, previous, nonce, 0}, ring.endpoint(i));
        } else {
          rss3::CorrelatedRandomness randomness(own, previous, nonce);
          evaluators[index]->evaluate(program, inputs[index], outputs[index], randomness, ring.endpoint(i));
        }
      });
    for (auto& t : threads) t.join();
    if (it > 0) times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return median(times);
}

// Party 0 alone: its outgoing message comes straight back as the incoming one.
class EchoExchange final : public rss3::LayerExchange {
 public:
  void exchange(std::uint32_t, std::span<const std::uint8_t> outgoing, std::span<std::uint8_t> incoming) override {
    std::memcpy(incoming.data(), outgoing.data(), outgoing.size());
  }
};

double time_alone(const circuits::Program& program, const rss3::ShareMatrix& inputs, int device, int iterations) {
  auto evaluator = cuda::create_cuda_evaluator(device);
  evaluator->reserve(program, inputs.instances);
  const auto keys = bench_keys();
  EchoExchange echo;
  std::vector<double> times;
  rss3::ShareMatrix outputs;
  for (int it = 0; it <= iterations; ++it) {
    const auto start = Clock::now();
    evaluator->evaluate_with_device_prf(program, inputs, outputs,
                                        cuda::DevicePrf{keys[0], keys[2], {43, static_cast<std::uint32_t>(it)}, 0}, echo);
    if (it > 0) times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return median(times);
}

void bench_prf(int device) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const std::uint64_t bytes = std::uint64_t{1} << 30;
  std::uint8_t* out = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&out), bytes), "cudaMalloc");
  constexpr cuda::detail::AesTables tables = cuda::detail::make_aes_tables();
  cuda::detail::AlphaKeys keys{};
  const auto k = bench_keys();
  keys.own = cuda::detail::aes128_expand_key(k[0].data(), tables);
  keys.previous = cuda::detail::aes128_expand_key(k[2].data(), tables);
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
  check(cudaEventDestroy(start), "event");
  check(cudaEventDestroy(stop), "event");
  check(cudaFree(out), "cudaFree");
}

// Measured device-to-device copy rate (bytes read plus written) and pinned PCIe rates.
void bench_memory(int device, double nominal) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const std::size_t bytes = std::size_t{1} << 30;
  void *a = nullptr, *b = nullptr, *pinned = nullptr;
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  check(cudaHostAlloc(&pinned, bytes / 4, cudaHostAllocDefault), "cudaHostAlloc");
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
  const double h2d = timed([&] { check(cudaMemcpyAsync(a, pinned, bytes / 4, cudaMemcpyHostToDevice, nullptr), "copy"); });
  const double d2h = timed([&] { check(cudaMemcpyAsync(pinned, a, bytes / 4, cudaMemcpyDeviceToHost, nullptr), "copy"); });
  std::printf("memory: device-to-device copy %.0f GB/s (read + write; nominal peak %.0f GB/s); pinned PCIe "
              "host-to-device %.1f GB/s, device-to-host %.1f GB/s\n",
              2.0 * bytes / d2d / 1e9, nominal, bytes / 4 / h2d / 1e9, bytes / 4 / d2h / 1e9);
  check(cudaEventDestroy(start), "event");
  check(cudaEventDestroy(stop), "event");
  check(cudaFree(a), "cudaFree");
  check(cudaFree(b), "cudaFree");
  check(cudaFreeHost(pinned), "cudaFreeHost");
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const auto selected = circuits_for(o.circuit);
  auto mode = [&](const char* m) { return o.mode == "all" || o.mode == m; };
  std::map<std::string, circuits::Program> programs;
  for (const auto& c : selected)
    programs[c.name] = circuits::compile(circuits::build_aes_circuit(c.size, circuits::AesDirection::Encrypt, c.sbox));
  if (mode("plan"))
    for (const auto& c : selected) print_plan(c, programs[c.name], o.instances);
  if (o.mode == "plan") return 0;

  if (!cuda::cuda_device_available()) {
    std::printf("no CUDA device: only the plan statistics above (--mode plan)\n");
    return o.mode == "all" ? 0 : 1;
  }
  try {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, o.device), "device properties");
    const double peak = o.peak_gbs > 0 ? o.peak_gbs : nominal_bandwidth(prop.name);
    std::printf("device %d: %s, %d SMs, %.0f MiB L2, %.1f GiB; peak memory bandwidth %.0f GB/s%s\n", o.device,
                prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1048576.0, prop.totalGlobalMem / 1073741824.0,
                peak, o.peak_gbs > 0 ? " (--peak-gbs)" : " (vendor figure by name)");
    bench_memory(o.device, peak);
    if (mode("prf")) bench_prf(o.device);
    for (const auto& c : selected) {
      const circuits::Program& program = programs[c.name];
      const auto t = cuda::detail::count_traffic(cuda::detail::build_device_plan(program));
      const double floor_seconds = peak > 0 ? static_cast<double>(t.bytes_per_word()) / 64.0 *
                                                  static_cast<double>(o.instances) / (peak * 1e9)
                                            : 0;
      std::printf("%s, %llu instances: memory floor %.3f ms per batch per party\n", c.name.c_str(),
                  static_cast<unsigned long long>(o.instances), floor_seconds * 1e3);
      const auto inputs = random_inputs(program, o.instances);
      if (mode("three")) {
        report("three parties on one GPU, GPU PRF:", program, o.instances,
               time_three(program, inputs, {o.device, o.device, o.device}, true, o.iterations), 3 * floor_seconds);
        report("three parties on one GPU, CPU alpha:", program, o.instances,
               time_three(program, inputs, {o.device, o.device, o.device}, false, o.iterations), 3 * floor_seconds);
      }
      if (mode("one")) {
        int count = 0;
        check(cudaGetDeviceCount(&count), "device count");
        if (count >= 3)
          report("one party per GPU (devices 0, 1, 2):", program, o.instances,
                 time_three(program, inputs, {0, 1, 2}, true, o.iterations), floor_seconds);
        else
          report("one party per GPU (party 0 alone, echo):", program, o.instances,
                 time_alone(program, inputs[0], o.device, o.iterations), floor_seconds);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
