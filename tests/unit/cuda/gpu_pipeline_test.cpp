// tests/unit/cuda/gpu_pipeline_test.cpp: the GPU evaluator's pipeline variants on a real
// device, each against the CPU evaluator: both pass kernels (staged with 8, 16 and 32
// words per block, device memory), input staging with one and with eight threads,
// messages kept on the device (DeviceRing of three parties, and of one party whose
// message comes back), several batches in flight on one GPU, a party failing on a ring,
// and the profile's accounting.
//
// Every test skips with "no CUDA device: GPU tests skipped" where there is no device.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>

#include "circuits/aes.hpp"
#include "common/error.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "support/random_program.hpp"
#include "three_parties.hpp"

#define MPC_REQUIRE_GPU()                                                                           \
  do {                                                                                              \
    if (!::mpc::cuda::cuda_device_available()) GTEST_SKIP() << "no CUDA device: GPU tests skipped"; \
  } while (0)

namespace mpc::cuda {
namespace {

using Inputs = std::array<rss3::ShareMatrix, 3>;

Inputs random_inputs(const circuits::Program& program, std::uint64_t n, std::mt19937_64& rng) {
  return rss3::share_matrix(rss3::testing::random_words(rng, program.num_inputs * rss3::words_for(n)),
                            program.num_inputs, n);
}

std::vector<circuits::Program> programs(std::mt19937_64& rng) {
  std::vector<circuits::Program> out;
  rss3::testing::RandomProgramShape wide;
  wide.ands_per_layer = 300;
  wide.slots = 700;
  wide.linear_per_layer = 600;
  rss3::testing::RandomProgramShape unusual;
  unusual.unusual_percent = 60;
  out.push_back(rss3::testing::random_program(rng, wide));
  out.push_back(rss3::testing::random_program(rng, unusual));
  out.push_back(circuits::compile(circuits::build_aes_circuit(circuits::AesKeySize::Aes128,
                                                              circuits::AesDirection::Encrypt,
                                                              circuits::SboxVariant::And32)));
  out.push_back(circuits::compile(circuits::build_aes_circuit(circuits::AesKeySize::Aes256,
                                                              circuits::AesDirection::Decrypt,
                                                              circuits::SboxVariant::Depth4)));
  return out;
}

void expect_outputs(const test::ThreePartyResult& got, const test::ThreePartyResult& want, const std::string& what,
                    bool transcripts) {
  for (std::size_t i = 0; i < 3; ++i) {
    if (transcripts) {
      EXPECT_EQ(test::first_difference(got.transcripts[i], want.transcripts[i]), "") << what << ", party " << i;
    }
    EXPECT_EQ(test::first_difference(got.outputs[i].x, want.outputs[i].x), "") << what << ", party " << i;
    EXPECT_EQ(test::first_difference(got.outputs[i].a, want.outputs[i].a), "") << what << ", party " << i;
  }
}

// Each pass kernel and block width gives the CPU evaluator's messages and outputs.
TEST(GpuPipeline, KernelsAgreeWithCpu) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(41);
  const std::vector<CudaOptions> variants = {{CudaKernel::DeviceMemory, 0, false},
                                             {CudaKernel::Auto, 8, false},
                                             {CudaKernel::Auto, 16, true},
                                             {CudaKernel::Auto, 32, false}};
  for (const circuits::Program& program : programs(rng)) {
    for (const CudaOptions& options : variants) {
      std::array<std::unique_ptr<CudaEvaluator>, 3> evaluators = {
          create_cuda_evaluator(0, options), create_cuda_evaluator(0, options), create_cuda_evaluator(0, options)};
      for (std::uint64_t n : test::sizes_within_limit({2049, 1, 33, 100003})) {
        const auto inputs = random_inputs(program, n, rng);
        const auto keys = test::random_keys(rng);
        const rss3::BatchNonce nonce{rng(), 11};
        const auto cpu = test::run_cpu_reference(program, inputs, nonce, keys);
        const auto gpu = test::run_three_parties(
            inputs, [&](int i, const rss3::ShareMatrix& in, rss3::ShareMatrix& out, rss3::LayerExchange& exchange) {
              const auto index = static_cast<std::size_t>(i);
              const DevicePrf prf{keys[index], keys[static_cast<std::size_t>(rss3::previous_party(i))], nonce, 0};
              return evaluators[index]->evaluate_with_device_prf(program, in, out, prf, exchange);
            });
        const std::string what = "kernel " + std::to_string(static_cast<int>(options.kernel)) + ", words " +
                                 std::to_string(options.staged_words) + ", n = " + std::to_string(n);
        expect_outputs(gpu, cpu, what, true);
        if (options.profile) {
          const EvaluationProfile profile = evaluators[0]->last_profile();
          EXPECT_GT(profile.wall_ms, 0.0) << what;
          EXPECT_GT(profile.gpu_pass_ms, 0.0) << what;
          EXPECT_GT(profile.gpu_span_ms, 0.0) << what;
          // One pass per layer, plus one for the finish of a last layer with ANDs (the CPU
          // evaluator's count; a last layer without ANDs is finished by its own pass).
          const std::size_t passes = program.layers.size() + (program.layers.back().ands.empty() ? 0u : 1u);
          EXPECT_EQ(profile.passes, passes) << what;
          EXPECT_EQ(profile.staged_words, 16u) << what;
        }
      }
    }
  }
}

// Input staging with one thread and slots narrower than a row of 100003 instances (rows
// cut by columns), and with eight threads and slots holding many rows.
TEST(GpuPipeline, StagingVariantsAgreeWithCpu) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(47);
  const circuits::Program program = circuits::compile(circuits::build_aes_circuit(
      circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt, circuits::SboxVariant::And32));
  for (const CudaOptions& options : {CudaOptions{CudaKernel::Auto, 0, false, 1, 4096},
                                     CudaOptions{CudaKernel::Auto, 0, true, 8, std::size_t{1} << 20}}) {
    std::array<std::unique_ptr<CudaEvaluator>, 3> evaluators = {
        create_cuda_evaluator(0, options), create_cuda_evaluator(0, options), create_cuda_evaluator(0, options)};
    for (std::uint64_t n : test::sizes_within_limit({2049, 100003})) {
      const auto inputs = random_inputs(program, n, rng);
      const auto keys = test::random_keys(rng);
      const rss3::BatchNonce nonce{rng(), 12};
      const auto cpu = test::run_cpu_reference(program, inputs, nonce, keys);
      const auto gpu = test::run_three_parties(
          inputs, [&](int i, const rss3::ShareMatrix& in, rss3::ShareMatrix& out, rss3::LayerExchange& exchange) {
            const auto index = static_cast<std::size_t>(i);
            const DevicePrf prf{keys[index], keys[static_cast<std::size_t>(rss3::previous_party(i))], nonce, 0};
            return evaluators[index]->evaluate_with_device_prf(program, in, out, prf, exchange);
          });
      const std::string what = std::to_string(options.staging_threads) + " staging threads, slots of " +
                               std::to_string(options.staging_slot_bytes) + " bytes, n = " + std::to_string(n);
      expect_outputs(gpu, cpu, what, true);
      if (options.profile) {
        const EvaluationProfile profile = evaluators[0]->last_profile();
        EXPECT_GT(profile.gpu_input_ms, 0.0) << what;
      }
    }
  }
}

test::ThreePartyResult run_ring(std::array<std::unique_ptr<CudaEvaluator>, 3>& evaluators, DeviceRing& ring,
                                const circuits::Program& program, const Inputs& inputs, rss3::BatchNonce nonce,
                                const std::array<rss3::PrfKey, 3>& keys) {
  test::ThreePartyResult result;
  std::array<std::exception_ptr, 3> errors;
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&, i] {
      const auto index = static_cast<std::size_t>(i);
      try {
        const DevicePrf prf{keys[index], keys[static_cast<std::size_t>(rss3::previous_party(i))], nonce, 0};
        result.stats[index] =
            evaluators[index]->evaluate_on_ring(program, inputs[index], result.outputs[index], prf, ring, i);
      } catch (...) {
        errors[index] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return result;
}

// A small program through the staged kernel with every block width, on both transports:
// the target of compute-sanitizer's racecheck and synccheck (cuda/run_on_gpu.sh), which
// would take hours over the AES circuits.
TEST(GpuPipeline, StagedKernelSmall) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(46);
  rss3::testing::RandomProgramShape shape;
  shape.and_layers = 3;
  const circuits::Program program = rss3::testing::random_program(rng, shape);
  const std::uint64_t n = 2049;
  const auto inputs = random_inputs(program, n, rng);
  const auto keys = test::random_keys(rng);
  const auto cpu = test::run_cpu_reference(program, inputs, {8, 8}, keys);
  for (std::uint32_t words : {8u, 16u, 32u}) {
    const CudaOptions options{CudaKernel::Staged, words, false};
    std::array<std::unique_ptr<CudaEvaluator>, 3> evaluators = {
        create_cuda_evaluator(0, options), create_cuda_evaluator(0, options), create_cuda_evaluator(0, options)};
    const auto gpu = test::run_three_parties(
        inputs, [&](int i, const rss3::ShareMatrix& in, rss3::ShareMatrix& out, rss3::LayerExchange& exchange) {
          const auto index = static_cast<std::size_t>(i);
          const DevicePrf prf{keys[index], keys[static_cast<std::size_t>(rss3::previous_party(i))], {8, 8}, 0};
          return evaluators[index]->evaluate_with_device_prf(program, in, out, prf, exchange);
        });
    expect_outputs(gpu, cpu, "host, " + std::to_string(words) + " words", true);
    DeviceRing ring(3);
    expect_outputs(run_ring(evaluators, ring, program, inputs, {8, 8}, keys), cpu,
                   "ring, " + std::to_string(words) + " words", false);
  }
}

// Three parties exchanging their messages in device memory: the CPU evaluator's outputs,
// over several evaluations of different sizes on one ring.
TEST(GpuPipeline, RingMatchesCpu) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(42);
  for (const circuits::Program& program : programs(rng)) {
    for (CudaKernel kernel : {CudaKernel::Auto, CudaKernel::DeviceMemory}) {
      const CudaOptions options{kernel, 0, false};
      std::array<std::unique_ptr<CudaEvaluator>, 3> evaluators = {
          create_cuda_evaluator(0, options), create_cuda_evaluator(0, options), create_cuda_evaluator(0, options)};
      DeviceRing ring(3);
      for (std::uint64_t n : test::sizes_within_limit({33, 100003, 1, 2049, 2049})) {
        const auto inputs = random_inputs(program, n, rng);
        const auto keys = test::random_keys(rng);
        const rss3::BatchNonce nonce{rng(), 12};
        const auto cpu = test::run_cpu_reference(program, inputs, nonce, keys);
        const auto gpu = run_ring(evaluators, ring, program, inputs, nonce, keys);
        expect_outputs(gpu, cpu, "ring, n = " + std::to_string(n), false);
        for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(gpu.stats[i].bytes_sent, cpu.stats[i].bytes_sent);
      }
    }
  }
}

// Party 0's own message returned as its predecessor's.
class EchoExchange final : public rss3::LayerExchange {
 public:
  void exchange(std::uint32_t, std::span<const std::uint8_t> outgoing, std::span<std::uint8_t> incoming) override {
    std::memcpy(incoming.data(), outgoing.data(), outgoing.size());
  }
};

// A ring of one party: the CPU evaluator's outputs with an exchange that echoes.
TEST(GpuPipeline, RingOfOneEchoes) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(43);
  auto evaluator = create_cuda_evaluator(0);
  DeviceRing ring(1);
  for (const circuits::Program& program : programs(rng)) {
    for (std::uint64_t n : test::sizes_within_limit({1, 2049, 100003})) {
      const auto inputs = random_inputs(program, n, rng);
      const auto keys = test::random_keys(rng);
      const rss3::BatchNonce nonce{rng(), 13};
      rss3::CorrelatedRandomness randomness(keys[0], keys[2], nonce);
      EchoExchange echo;
      rss3::ShareMatrix cpu, gpu;
      rss3::make_cpu_evaluator(rss3::best_simd_level())->evaluate(program, inputs[0], cpu, randomness, echo);
      evaluator->evaluate_on_ring(program, inputs[0], gpu, DevicePrf{keys[0], keys[2], nonce, 0}, ring, 0);
      EXPECT_EQ(test::first_difference(gpu.x, cpu.x), "") << n;
      EXPECT_EQ(test::first_difference(gpu.a, cpu.a), "") << n;
    }
  }
}

// Two three-party batches at once on one GPU (six evaluators, host-staged messages).
TEST(GpuPipeline, TwoBatchesInFlight) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(44);
  const circuits::Program program = programs(rng)[2];
  const std::uint64_t n = test::sizes_within_limit({100003, 2049}).front();
  std::array<Inputs, 2> inputs = {random_inputs(program, n, rng), random_inputs(program, n, rng)};
  std::array<std::array<rss3::PrfKey, 3>, 2> keys = {test::random_keys(rng), test::random_keys(rng)};
  std::array<test::ThreePartyResult, 2> cpu, gpu;
  for (std::size_t b = 0; b < 2; ++b) cpu[b] = test::run_cpu_reference(program, inputs[b], {9, 9}, keys[b]);
  std::array<std::array<std::unique_ptr<CudaEvaluator>, 3>, 2> evaluators;
  for (auto& group : evaluators)
    for (auto& e : group) e = create_cuda_evaluator(0);
  std::vector<std::thread> batches;
  for (std::size_t b = 0; b < 2; ++b)
    batches.emplace_back([&, b] {
      gpu[b] = test::run_three_parties(
          inputs[b], [&](int i, const rss3::ShareMatrix& in, rss3::ShareMatrix& out, rss3::LayerExchange& exchange) {
            const auto index = static_cast<std::size_t>(i);
            const DevicePrf prf{keys[b][index], keys[b][static_cast<std::size_t>(rss3::previous_party(i))], {9, 9}, 0};
            return evaluators[b][index]->evaluate_with_device_prf(program, in, out, prf, exchange);
          });
    });
  for (auto& t : batches) t.join();
  for (std::size_t b = 0; b < 2; ++b) expect_outputs(gpu[b], cpu[b], "batch " + std::to_string(b), true);
}

// A party that fails on a ring (here: malformed inputs) aborts it: the others get
// PeerError, and all evaluators work on a new ring afterwards.
TEST(GpuPipeline, RingFailureAbortsTheOthers) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(45);
  const circuits::Program program = programs(rng)[2];
  const std::uint64_t n = 5000;
  auto inputs = random_inputs(program, n, rng);
  const auto keys = test::random_keys(rng);
  std::array<std::unique_ptr<CudaEvaluator>, 3> evaluators = {create_cuda_evaluator(0), create_cuda_evaluator(0),
                                                              create_cuda_evaluator(0)};
  Inputs broken = inputs;
  broken[1].x.pop_back();
  {
    DeviceRing ring(3, std::chrono::seconds(20));
    std::array<std::exception_ptr, 3> errors;
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
      threads.emplace_back([&, i] {
        const auto index = static_cast<std::size_t>(i);
        try {
          rss3::ShareMatrix out;
          evaluators[index]->evaluate_on_ring(program, broken[index], out,
                                              DevicePrf{keys[index], keys[(index + 2) % 3], {5, 5}, 0}, ring, i);
        } catch (...) {
          errors[index] = std::current_exception();
        }
      });
    for (auto& t : threads) t.join();
    EXPECT_THROW(std::rethrow_exception(errors[1]), Error);
    for (std::size_t i : {0u, 2u}) {
      ASSERT_TRUE(errors[i]) << i;
      EXPECT_THROW(std::rethrow_exception(errors[i]), PeerError) << i;
    }
  }
  DeviceRing ring(3);
  const auto cpu = test::run_cpu_reference(program, inputs, {6, 6}, keys);
  expect_outputs(run_ring(evaluators, ring, program, inputs, {6, 6}, keys), cpu, "after an abort", false);
}

TEST(GpuPipeline, OptionsAreChecked) {
  MPC_REQUIRE_GPU();
  EXPECT_THROW(create_cuda_evaluator(0, {CudaKernel::Auto, 12, false}), Error);
  // A program too large for the staged kernel, forced onto it.
  circuits::Program p;
  p.num_inputs = 1;
  p.num_slots = 70000;
  circuits::Layer l0;
  l0.linear = {{circuits::OpKind::LoadInput, p.num_slots - 1, 0, 0}, {circuits::OpKind::Inv, 0, p.num_slots - 1, 0}};
  p.layers = {l0};
  p.output_slots = {0};
  p.num_outputs = 1;
  auto forced = create_cuda_evaluator(0, {CudaKernel::Staged, 0, false});
  rss3::ShareMatrix in(1, 64), out;
  rss3::CorrelatedRandomness randomness({}, {}, {1, 1});
  EchoExchange echo;
  EXPECT_THROW(forced->evaluate(p, in, out, randomness, echo), Error);
  auto automatic = create_cuda_evaluator(0);
  EXPECT_NO_THROW(automatic->evaluate(p, in, out, randomness, echo));
  EXPECT_EQ(out.x, in.x);
  EXPECT_EQ(out.a[0], ~in.a[0]);
}

}  // namespace
}  // namespace mpc::cuda
