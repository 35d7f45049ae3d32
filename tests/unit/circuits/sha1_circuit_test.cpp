// The SHA-1 compression circuit against the cleartext reference (circuits/sha1_reference)
// and the FIPS 180 "abc" example.
#include <gtest/gtest.h>

#include <random>

#include "circuits/evaluate.hpp"
#include "circuits/program.hpp"
#include "circuits/sha1.hpp"
#include "circuits/sha1_reference.hpp"
#include "circuits/stats.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using test::Bytes;

Bytes state_bytes(const Sha1State& state) {
  const auto bytes = sha1_state_bytes(state);
  return {bytes.begin(), bytes.end()};
}

Bytes reference_compress(Sha1State state, const Bytes& block) {
  sha1_compress(state, std::span<const std::uint8_t, kSha1BlockBytes>(block.data(), kSha1BlockBytes));
  return state_bytes(state);
}

Sha1State random_state(std::mt19937_64& rng) {
  Sha1State state{};
  for (auto& word : state) word = static_cast<std::uint32_t>(rng());
  return state;
}

TEST(Sha1Circuit, FipsAbcExample) {
  // FIPS 180 example: "abc" padded to one block from the initial state.
  Bytes block(64, 0);
  block[0] = 'a';
  block[1] = 'b';
  block[2] = 'c';
  block[3] = 0x80;
  block[63] = 24;  // bit length
  Bytes input = state_bytes(sha1_initial_state());
  input.insert(input.end(), block.begin(), block.end());
  const Bytes digest = test::bits_to_bytes(evaluate(build_sha1_compress_circuit(), test::bytes_to_bits(input)));
  EXPECT_EQ(digest, test::from_hex("a9993e364706816aba3e25717850c26c9cd0d89d"));
}

TEST(Sha1Circuit, RandomStatesAndBlocksMatchReference) {
  const Circuit circuit = build_sha1_compress_circuit();
  const Program program = compile(circuit);
  std::mt19937_64 rng(11);
  for (int batch = 0; batch < 4; ++batch) {
    std::vector<Bytes> inputs;
    std::vector<Bytes> expected;
    for (int lane = 0; lane < 64; ++lane) {
      Sha1State state = random_state(rng);
      if (lane == 0) state = {0xFFFFFFFFU, 0xFFFFFFFFU, 0xFFFFFFFFU, 0xFFFFFFFFU, 0xFFFFFFFFU};
      if (lane == 1) state = {0, 0, 0, 0, 0};
      Bytes block = test::random_bytes(rng, 64);
      if (lane == 0) block.assign(64, 0xFF);
      if (lane == 1) block.assign(64, 0);
      Bytes input = state_bytes(state);
      input.insert(input.end(), block.begin(), block.end());
      inputs.push_back(input);
      expected.push_back(reference_compress(state, block));
    }
    const auto words = test::pack_lanes(inputs);
    const auto from_circuit = evaluate_packed(circuit, words);
    const auto from_program = batch == 0 ? evaluate_program_packed(program, words) : from_circuit;
    for (int lane = 0; lane < 64; ++lane) {
      ASSERT_EQ(test::unpack_lane(from_circuit, lane), expected[lane]) << "batch " << batch << " lane " << lane;
      ASSERT_EQ(test::unpack_lane(from_program, lane), expected[lane]) << "batch " << batch << " lane " << lane;
    }
  }
}

TEST(Sha1Circuit, AndDepthPerCompression) {
  // 80 rounds at 6 AND layers: a 3:2 layer plus the prefix adder after a_t, everything else
  // prepared off the path. Round 0 waits 2 more layers: its f (one AND) and the 3:2 layer that
  // takes it in are not ready before the round starts. 6 * 80 + 2 = 482.
  const CircuitStats stats = compute_stats(build_sha1_compress_circuit());
  EXPECT_LE(stats.and_depth, 6U * 80U + 2U);
  EXPECT_GE(stats.and_depth, 6U * 80U);
  EXPECT_LE(stats.and_gates, 21500U);
  std::cout << "[ stats    ] sha1-compress: and " << stats.and_gates << ", and-depth " << stats.and_depth << "\n";
}

}  // namespace
}  // namespace mpc::circuits
