// tests/unit/cuda/gpu_kernels_test.cpp: the GPU kernels one by one (PRF against
// CorrelatedRandomness, slicing against rss3::slice/unslice, with odd sizes and partial
// tiles), and the evaluator's edge cases on a device: random programs against the CPU,
// zero instances, aliasing, reuse across programs and sizes, reserve(), bad input,
// exhausted counters, a peer failing mid-evaluation.
//
// Every test skips with "no CUDA device: GPU tests skipped" where there is no device.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <random>

#include "common/error.hpp"
#include "cuda/aes_ttable.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "cuda/kernels.hpp"
#include "support/random_program.hpp"
#include "three_parties.hpp"

#define MPC_REQUIRE_GPU()                                                             \
  do {                                                                                \
    if (!::mpc::cuda::cuda_device_available()) GTEST_SKIP() << "no CUDA device: GPU tests skipped"; \
  } while (0)

namespace mpc::cuda {
namespace {

constexpr detail::AesTables kTables = detail::make_aes_tables();

#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

// A device allocation for the duration of a test.
template <class T>
struct DeviceArray {
  T* data = nullptr;
  explicit DeviceArray(std::size_t count) {
    if (cudaMalloc(reinterpret_cast<void**>(&data), std::max<std::size_t>(count, 1) * sizeof(T)) != cudaSuccess)
      data = nullptr;
  }
  ~DeviceArray() { (void)cudaFree(data); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

TEST(GpuKernels, AlphaMatchesCorrelatedRandomness) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(31);
  for (std::uint32_t skip : {0u, 5u, 100003u}) {
    for (std::uint64_t blocks : test::sizes_within_limit({1, 7, 256, 100003})) {
      rss3::PrfKey own{}, previous{};
      for (auto& b : own) b = static_cast<std::uint8_t>(rng());
      for (auto& b : previous) b = static_cast<std::uint8_t>(rng());
      const rss3::BatchNonce nonce{rng(), static_cast<std::uint32_t>(rng())};
      rss3::CorrelatedRandomness randomness(own, previous, nonce);
      std::vector<std::uint8_t> skipped(16 * std::size_t{skip}), expected(16 * blocks);
      if (skip != 0) randomness.next_alpha(skipped);
      randomness.next_alpha(expected);

      detail::AlphaKeys keys{};
      keys.own = detail::aes128_expand_key(own.data(), kTables);
      keys.previous = detail::aes128_expand_key(previous.data(), kTables);
      std::uint32_t block[4];
      detail::counter_block_words(nonce.epoch, nonce.sequence, 0, block);
      std::copy(block, block + 3, keys.prefix);
      DeviceArray<std::uint8_t> out(16 * blocks);
      ASSERT_NE(out.data, nullptr);
      ASSERT_CUDA(detail::launch_alpha(keys, skip, blocks, out.data, nullptr));
      ASSERT_CUDA(cudaDeviceSynchronize());
      std::vector<std::uint8_t> got(16 * blocks);
      ASSERT_CUDA(cudaMemcpy(got.data(), out.data, got.size(), cudaMemcpyDeviceToHost));
      EXPECT_EQ(test::first_difference(got, expected), "") << "skip " << skip << ", blocks " << blocks;
    }
  }
}

TEST(GpuKernels, AlphaRejectsWhatItCannotDo) {
  MPC_REQUIRE_GPU();
  detail::AlphaKeys keys{};
  DeviceArray<std::uint8_t> out(64);
  EXPECT_EQ(detail::launch_alpha(keys, 0xffffffffu, 2, out.data, nullptr), cudaErrorInvalidValue);  // counter wrap
  EXPECT_EQ(detail::launch_alpha(keys, 0, 1, out.data + 1, nullptr), cudaErrorInvalidValue);       // misaligned
  EXPECT_EQ(detail::launch_alpha(keys, 0, 0, out.data, nullptr), cudaSuccess);                     // nothing to do
}

TEST(GpuKernels, SliceAndUnsliceMatchRss3) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(32);
  for (std::uint64_t record_bytes : {1u, 9u, 16u, 176u}) {
    for (std::uint64_t n : test::sizes_within_limit({1, 31, 32, 33, 1000, 2049, 100003})) {
      const std::uint64_t wpr = rss3::words_for(n) + (n % 2);
      const std::uint64_t first_row = n % 3;
      const std::uint64_t rows = first_row + record_bytes * 8;
      const auto records = test::random_bytes(rng, n * record_bytes);
      std::vector<std::uint64_t> expected(rows * wpr, 0);
      rss3::slice(records, record_bytes, n, expected, wpr, first_row);

      DeviceArray<std::uint8_t> d_records(records.size());
      DeviceArray<std::uint64_t> d_rows(rows * wpr);
      ASSERT_CUDA(cudaMemcpy(d_records.data, records.data(), records.size(), cudaMemcpyHostToDevice));
      ASSERT_CUDA(cudaMemset(d_rows.data, 0, rows * wpr * 8));
      ASSERT_CUDA(detail::launch_slice(d_records.data, record_bytes, n, d_rows.data, wpr, first_row, nullptr));
      std::vector<std::uint64_t> got(rows * wpr);
      ASSERT_CUDA(cudaMemcpy(got.data(), d_rows.data, got.size() * 8, cudaMemcpyDeviceToHost));
      EXPECT_EQ(test::first_difference(got, expected), "") << record_bytes << " bytes, n = " << n;

      ASSERT_CUDA(cudaMemset(d_records.data, 0, records.size()));
      ASSERT_CUDA(detail::launch_unslice(d_rows.data, wpr, first_row, record_bytes, n, d_records.data, nullptr));
      std::vector<std::uint8_t> back(records.size());
      ASSERT_CUDA(cudaMemcpy(back.data(), d_records.data, back.size(), cudaMemcpyDeviceToHost));
      EXPECT_EQ(test::first_difference(back, records), "") << record_bytes << " bytes, n = " << n;
    }
  }
  EXPECT_EQ(detail::launch_slice(nullptr, 16, 65, nullptr, 1, 0, nullptr), cudaErrorInvalidValue);
}

test::ThreePartyResult run_gpu(std::array<std::unique_ptr<CudaEvaluator>, 3>& evaluators,
                               const circuits::Program& program, const std::array<rss3::ShareMatrix, 3>& inputs,
                               rss3::BatchNonce nonce, const std::array<rss3::PrfKey, 3>& keys, bool device_prf) {
  return test::run_three_parties(inputs, [&](int i, const rss3::ShareMatrix& in, rss3::ShareMatrix& out,
                                             rss3::LayerExchange& exchange) {
    const rss3::PrfKey& own = keys[static_cast<std::size_t>(i)];
    const rss3::PrfKey& previous = keys[static_cast<std::size_t>(rss3::previous_party(i))];
    CudaEvaluator& e = *evaluators[static_cast<std::size_t>(i)];
    if (device_prf) return e.evaluate_with_device_prf(program, in, out, DevicePrf{own, previous, nonce, 0}, exchange);
    rss3::CorrelatedRandomness randomness(own, previous, nonce);
    return e.evaluate(program, in, out, randomness, exchange);
  });
}

std::array<std::unique_ptr<CudaEvaluator>, 3> three_evaluators() {
  return {create_cuda_evaluator(0), create_cuda_evaluator(0), create_cuda_evaluator(0)};
}

// Random programs (many ANDs per layer, odd sizes, partial chunks), one set of evaluators
// reused across programs and sizes (growing and shrinking).
TEST(GpuEvaluator, RandomProgramsMatchCpu) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(33);
  auto evaluators = three_evaluators();
  EXPECT_NE(evaluators[0]->name().find("cuda"), std::string::npos);
  std::vector<rss3::testing::RandomProgramShape> shapes(3);
  shapes[1].unusual_percent = 60;
  shapes[2].ands_per_layer = 300;
  shapes[2].slots = 700;
  shapes[2].linear_per_layer = 600;
  for (const auto& shape : shapes) {
    const circuits::Program program = rss3::testing::random_program(rng, shape);
    for (std::uint64_t n : test::sizes_within_limit({2049, 1, 2047, 33, 100003, 64})) {
      const auto inputs = rss3::share_matrix(
          rss3::testing::random_words(rng, program.num_inputs * rss3::words_for(n)), program.num_inputs, n);
      const auto keys = test::random_keys(rng);
      const rss3::BatchNonce nonce{rng(), 5};
      const auto cpu = test::run_cpu_reference(program, inputs, nonce, keys);
      for (bool device_prf : {false, true}) {
        const auto gpu = run_gpu(evaluators, program, inputs, nonce, keys, device_prf);
        for (std::size_t i = 0; i < 3; ++i) {
          EXPECT_EQ(test::first_difference(gpu.transcripts[i], cpu.transcripts[i]), "") << n;
          EXPECT_EQ(test::first_difference(gpu.outputs[i].x, cpu.outputs[i].x), "") << n;
          EXPECT_EQ(test::first_difference(gpu.outputs[i].a, cpu.outputs[i].a), "") << n;
        }
      }
    }
  }
}

TEST(GpuEvaluator, EdgeCases) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(34);
  const circuits::Program program = rss3::testing::random_program(rng, rss3::testing::RandomProgramShape{});
  auto evaluator = create_cuda_evaluator(0);
  rss3::MemoryRing ring(std::chrono::seconds(5));
  rss3::CorrelatedRandomness randomness(test::random_keys(rng)[0], test::random_keys(rng)[1], {1, 1});

  // Zero instances: no message, empty rows of the right shape.
  rss3::ShareMatrix empty_in(program.num_inputs, 0), out;
  const auto stats = evaluator->evaluate(program, empty_in, out, randomness, ring.endpoint(0));
  EXPECT_EQ(stats.bytes_sent, 0u);
  EXPECT_EQ(out.rows, program.num_outputs);
  EXPECT_EQ(out.instances, 0u);

  // Wrong input shape and invalid programs are refused before anything is sent.
  rss3::ShareMatrix wrong(program.num_inputs + 1, 64);
  EXPECT_THROW(evaluator->evaluate(program, wrong, out, randomness, ring.endpoint(0)), Error);
  rss3::ShareMatrix malformed(program.num_inputs, 64);
  malformed.x.pop_back();
  EXPECT_THROW(evaluator->evaluate(program, malformed, out, randomness, ring.endpoint(0)), Error);
  circuits::Program bad = program;
  bad.output_slots[0] = program.num_slots + 7;
  rss3::ShareMatrix in(program.num_inputs, 64);
  EXPECT_THROW(evaluator->evaluate(bad, in, out, randomness, ring.endpoint(0)), FormatError);

  // Exhausted counter space for the GPU PRF.
  DevicePrf prf{};
  prf.first_block = rss3::kOutputMaskCounterBase;
  EXPECT_THROW(evaluator->evaluate_with_device_prf(program, in, out, prf, ring.endpoint(0)), Error);

  // reserve() then evaluations of that size and smaller.
  EXPECT_NO_THROW(evaluator->reserve(program, 100000));
  EXPECT_EQ(evaluator->device(), 0);
}

// Outputs may alias inputs (as with the CPU evaluator).
TEST(GpuEvaluator, OutputsMayAliasInputs) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(35);
  rss3::testing::RandomProgramShape shape;
  shape.outputs = shape.inputs;
  const circuits::Program program = rss3::testing::random_program(rng, shape);
  const std::uint64_t n = 1000;
  const auto inputs = rss3::share_matrix(rss3::testing::random_words(rng, program.num_inputs * rss3::words_for(n)),
                                         program.num_inputs, n);
  const auto keys = test::random_keys(rng);
  const auto cpu = test::run_cpu_reference(program, inputs, {7, 7}, keys);
  auto evaluators = three_evaluators();
  const auto gpu = test::run_three_parties(inputs, [&](int i, const rss3::ShareMatrix& in, rss3::ShareMatrix& out,
                                                       rss3::LayerExchange& exchange) {
    rss3::CorrelatedRandomness randomness(keys[static_cast<std::size_t>(i)],
                                          keys[static_cast<std::size_t>(rss3::previous_party(i))], {7, 7});
    out = in;
    return evaluators[static_cast<std::size_t>(i)]->evaluate(program, out, out, randomness, exchange);
  });
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(gpu.outputs[i].x, cpu.outputs[i].x);
    EXPECT_EQ(gpu.outputs[i].a, cpu.outputs[i].a);
  }
}

// A peer that fails mid-evaluation: the others get PeerError, and every evaluator is
// usable afterwards.
TEST(GpuEvaluator, PeerFailureLeavesEvaluatorsUsable) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(36);
  const circuits::Program program = rss3::testing::random_program(rng, rss3::testing::RandomProgramShape{});
  const std::uint64_t n = 5000;
  const auto inputs = rss3::share_matrix(rss3::testing::random_words(rng, program.num_inputs * rss3::words_for(n)),
                                         program.num_inputs, n);
  const auto keys = test::random_keys(rng);
  auto evaluators = three_evaluators();
  class FailingExchange final : public rss3::LayerExchange {
   public:
    explicit FailingExchange(rss3::LayerExchange& inner) : inner_(inner) {}
    void exchange(std::uint32_t layer, std::span<const std::uint8_t> out, std::span<std::uint8_t> in) override {
      if (layer == 2) throw PeerError(Component::Protocol, "injected failure");
      inner_.exchange(layer, out, in);
    }

   private:
    rss3::LayerExchange& inner_;
  };
  EXPECT_THROW(test::run_three_parties(inputs,
                                       [&](int i, const rss3::ShareMatrix& in, rss3::ShareMatrix& out,
                                           rss3::LayerExchange& exchange) {
                                         rss3::CorrelatedRandomness randomness(
                                             keys[static_cast<std::size_t>(i)],
                                             keys[static_cast<std::size_t>(rss3::previous_party(i))], {3, 3});
                                         FailingExchange failing(exchange);
                                         rss3::LayerExchange& use = i == 1 ? static_cast<rss3::LayerExchange&>(failing)
                                                                           : exchange;
                                         return evaluators[static_cast<std::size_t>(i)]->evaluate(
                                             program, in, out, randomness, use);
                                       }),
               PeerError);
  const auto cpu = test::run_cpu_reference(program, inputs, {4, 4}, keys);
  const auto gpu = run_gpu(evaluators, program, inputs, {4, 4}, keys, false);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(gpu.transcripts[i], cpu.transcripts[i]);
}

}  // namespace
}  // namespace mpc::cuda
