// tests/unit/cuda/gpu_garbling_test.cpp: the GPU half-gates garbler and evaluator on a
// real device against the CPU ones of gc2: the same stream byte for byte (same delta,
// garbling number and constant label), decoding bits and output labels; the CPU stream
// evaluated on the GPU gives the CPU evaluator's colours and labels; a GPU garbling
// evaluated by the CPU opens to OpenSSL's AES; numbers come from the CPU garbler's counter;
// bad calls are refused. Sizes cross the chunk of 16384 instances (up to four chunks, the
// later two reusing the first two's areas) and end in partial tiles.
//
// Every test skips with "no CUDA device: GPU tests skipped" where there is no device.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "common/error.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "cuda/gpu_garbling.hpp"
#include "support/random_program.hpp"
#include "protocol/two_party/buffer_channel.hpp"
#include "three_parties.hpp"

#define MPC_REQUIRE_GPU()                                                                           \
  do {                                                                                              \
    if (!::mpc::cuda::cuda_device_available()) GTEST_SKIP() << "no CUDA device: GPU tests skipped"; \
  } while (0)

namespace mpc::cuda {
namespace {

using two_party::Block;

std::vector<circuits::Program> programs(std::mt19937_64& rng) {
  rss3::testing::RandomProgramShape unusual;
  unusual.unusual_percent = 60;
  return {rss3::testing::random_program(rng, unusual),
          circuits::compile(circuits::build_aes_circuit(circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt,
                                                        circuits::SboxVariant::And32))};
}

bool equal_labels(const gc2::Labels& a, const gc2::Labels& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Block)) == 0;
}

TEST(GpuGarbling, StreamsAreTheCpuGarblers) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(61);
  GpuGarbling gpu;
  const std::vector<circuits::Program> list = programs(rng);
  for (const circuits::Program& program : list) {
    // Four chunks of the random program: chunks 2 and 3 reuse the areas of 0 and 1.
    std::vector<std::uint64_t> sizes = {1, 33, 16384 + 45};
    if (&program == &list.front()) sizes.push_back(3 * 16384 + 45);
    for (std::uint64_t n : test::sizes_within_limit(sizes)) {
      SCOPED_TRACE("n = " + std::to_string(n));
      Block delta{rng(), rng() | 1};
      delta.lo |= 1;
      gc2::Garbler cpu(delta), gpu_numbers(delta);
      (void)cpu.draw_garbling_number();
      (void)gpu_numbers.draw_garbling_number();
      const gc2::Labels zero = gc2::zero_labels(std::size_t{program.num_inputs} * n);
      two_party::RecordingChannel cpu_channel, gpu_channel;
      gc2::Labels cpu_out, gpu_out;
      const auto cpu_bits = cpu.garble(program, n, zero, cpu_channel, cpu_out);
      const std::vector<std::uint8_t> cpu_stream = cpu_channel.take();
      Block constant;
      std::memcpy(&constant, cpu_stream.data() + 8, sizeof constant);
      const auto gpu_bits =
          detail::garble_with_constant(gpu, gpu_numbers, constant, program, n, zero, gpu_channel, &gpu_out);
      const std::vector<std::uint8_t> gpu_stream = gpu_channel.take();
      EXPECT_EQ(test::first_difference(gpu_stream, cpu_stream), "") << "stream";
      EXPECT_EQ(gpu_bits, cpu_bits) << "decoding bits";
      EXPECT_TRUE(equal_labels(gpu_out, cpu_out)) << "output zero labels";
      EXPECT_EQ(gpu_numbers.garblings(), 2u) << "the number came from the CPU garbler's counter";

      // The CPU stream evaluated on the GPU.
      std::vector<std::uint8_t> values(zero.size());
      for (auto& v : values) v = static_cast<std::uint8_t>(rng() & 1);
      const gc2::Labels active = gc2::garbler_input_labels(cpu, values, zero);
      two_party::ReplayChannel cpu_replay(cpu_stream), gpu_replay(cpu_stream);
      gc2::Labels cpu_active, gpu_active;
      const auto cpu_colours = gc2::evaluate(program, n, active, cpu_replay, cpu_active);
      const auto gpu_colours = gpu.evaluate(program, n, active, gpu_replay, &gpu_active);
      EXPECT_EQ(gpu_colours, cpu_colours) << "colours";
      EXPECT_TRUE(equal_labels(gpu_active, cpu_active)) << "active output labels";
      EXPECT_EQ(gpu_replay.remaining(), 0u);
      EXPECT_GT(gpu.last_kernel_ms(), 0.0);
    }
  }
}

// A GPU garbling of AES-128 with random constant label, evaluated by the CPU over a live
// channel, opens to the cleartext AES (the garbler's key bits, the evaluator's blocks).
TEST(GpuGarbling, GpuGarblingOpensToAes) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(62);
  const circuits::Program program = programs(rng)[1];
  const std::uint64_t n = test::sizes_within_limit({1000, 33}).front();
  const std::size_t rk_bytes = circuits::aes_round_key_bits(circuits::AesKeySize::Aes128) / 8;
  std::vector<std::vector<std::uint8_t>> keys, blocks;
  std::vector<std::uint8_t> records(n * (rk_bytes + 16));
  for (std::uint64_t i = 0; i < n; ++i) {
    keys.push_back(test::random_bytes(rng, 16));
    blocks.push_back(test::random_bytes(rng, 16));
    const auto expanded = circuits::aes_expand_key(keys.back());
    std::copy(expanded.begin(), expanded.end(), records.begin() + static_cast<std::ptrdiff_t>(i * (rk_bytes + 16)));
    std::copy(blocks.back().begin(), blocks.back().end(),
              records.begin() + static_cast<std::ptrdiff_t>(i * (rk_bytes + 16) + rk_bytes));
  }
  // Input bit r of instance i, row-major as the garbler takes labels.
  std::vector<std::uint8_t> values(std::size_t{program.num_inputs} * n);
  for (std::uint64_t i = 0; i < n; ++i)
    for (std::uint32_t r = 0; r < program.num_inputs; ++r)
      values[r * n + i] = (records[i * (rk_bytes + 16) + r / 8] >> (r % 8)) & 1;
  gc2::Garbler garbler;
  const gc2::Labels zero = gc2::zero_labels(values.size());
  const gc2::Labels active = gc2::garbler_input_labels(garbler, values, zero);
  auto [garbler_end, evaluator_end] = two_party::make_memory_channel_pair(std::chrono::seconds(60));
  GpuGarbling gpu;
  std::vector<std::uint8_t> decoding;
  std::thread garbling([&, channel = garbler_end.get()] { decoding = gpu.garble(garbler, program, n, zero, *channel); });
  const auto colours = gc2::evaluate(program, n, active, *evaluator_end);
  garbling.join();
  ASSERT_EQ(colours.size(), decoding.size());
  std::size_t mismatches = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint8_t out[16] = {};
    for (std::uint32_t j = 0; j < 128; ++j)
      out[j / 8] |= static_cast<std::uint8_t>((colours[j * n + i] ^ decoding[j * n + i]) << (j % 8));
    const auto want = test::openssl_aes(circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt, keys[i],
                                        blocks[i]);
    mismatches += std::memcmp(want.data(), out, 16) != 0;
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(GpuGarbling, BadCallsAreRefused) {
  MPC_REQUIRE_GPU();
  std::mt19937_64 rng(63);
  const circuits::Program program = programs(rng)[0];
  GpuGarbling gpu;
  gc2::Garbler garbler;
  two_party::RecordingChannel channel;
  const gc2::Labels zero = gc2::zero_labels(program.num_inputs * 10);
  EXPECT_THROW(gpu.garble(garbler, program, 0, {}, channel), Error);
  EXPECT_THROW(gpu.garble(garbler, program, 11, zero, channel), Error);  // labels for 10 instances
  circuits::Program bad = program;
  bad.output_slots[0] = bad.num_slots;
  EXPECT_THROW(gpu.garble(garbler, bad, 10, zero, channel), Error);
  EXPECT_EQ(garbler.garblings(), 0u) << "a refused garbling draws no number";
  // A stream cut short is a PeerError.
  EXPECT_NO_THROW(gpu.garble(garbler, program, 10, zero, channel));
  std::vector<std::uint8_t> stream = channel.take();
  stream.resize(stream.size() - 1);
  two_party::ReplayChannel short_replay(stream);
  EXPECT_THROW(gpu.evaluate(program, 10, zero, short_replay), PeerError);
  EXPECT_THROW(GpuGarbling(99), Error);
}

}  // namespace
}  // namespace mpc::cuda
