// The published Bristol Fashion AES-128 (https://nigelsmart.github.io/MPC-Circuits/,
// aes_128.txt: key expansion inside, 6,400 AND), read unchanged from $MPC_BRISTOL_DIR.
//
// Its bit order, found by trying the candidates against OpenSSL: group 0 is the key,
// group 1 the plaintext, and wire j of a group is bit j of the 128-bit string read as a
// big-endian integer, i.e. bit j % 8 of byte 15 - j / 8. The output uses the same order.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>

#include "circuits/bristol.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/program.hpp"
#include "circuits/stats.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using test::Bytes;

// Our byte strings use byte b bit k at b * 8 + k; the published file reverses the bytes.
Bytes to_published_order(const Bytes& bytes) { return Bytes(bytes.rbegin(), bytes.rend()); }

std::filesystem::path published_file() {
  const char* directory = std::getenv("MPC_BRISTOL_DIR");
  if (directory == nullptr || *directory == '\0') return {};
  return std::filesystem::path(directory) / "aes_128.txt";
}

TEST(BristolPublished, Aes128MatchesOpenSsl) {
  const auto path = published_file();
  if (path.empty() || !std::filesystem::exists(path)) {
    GTEST_SKIP() << "set MPC_BRISTOL_DIR to a folder holding the published Bristol Fashion aes_128.txt";
  }
  const Circuit circuit = read_bristol_file(path);
  const CircuitStats stats = compute_stats(circuit);
  EXPECT_EQ(stats.gates, 36663U);
  EXPECT_EQ(stats.and_gates, 6400U);
  EXPECT_EQ(stats.input_widths, (std::vector<std::uint32_t>{128, 128}));
  EXPECT_EQ(stats.output_widths, (std::vector<std::uint32_t>{128}));

  // FIPS-197 Appendix C.1.
  const Bytes key = test::from_hex("000102030405060708090a0b0c0d0e0f");
  const Bytes plaintext = test::from_hex("00112233445566778899aabbccddeeff");
  Bytes input = to_published_order(key);
  const Bytes block = to_published_order(plaintext);
  input.insert(input.end(), block.begin(), block.end());
  const Bytes output = test::bits_to_bytes(evaluate(circuit, test::bytes_to_bits(input)));
  EXPECT_EQ(to_published_order(output), test::from_hex("69c4e0d86a7b0430d8cdb78070b4c55a"));

  // 10,000 random keys and blocks, through the circuit and through the compiled program.
  const Program program = compile(circuit);
  ASSERT_NO_THROW(validate(program));
  std::mt19937_64 rng(10);
  std::size_t mismatches = 0;
  for (std::size_t done = 0; done < 10000; done += 64) {
    const std::size_t lanes = std::min<std::size_t>(64, 10000 - done);
    std::vector<Bytes> inputs;
    std::vector<Bytes> expected;
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      const Bytes random_key = test::random_bytes(rng, 16);
      const Bytes random_block = test::random_bytes(rng, 16);
      Bytes lane_input = to_published_order(random_key);
      const Bytes reversed_block = to_published_order(random_block);
      lane_input.insert(lane_input.end(), reversed_block.begin(), reversed_block.end());
      inputs.push_back(lane_input);
      expected.push_back(test::openssl_encrypt(random_key, random_block));
    }
    const auto words = test::pack_lanes(inputs);
    const auto from_circuit = evaluate_packed(circuit, words);
    const auto from_program = evaluate_program_packed(program, words);
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      if (to_published_order(test::unpack_lane(from_circuit, lane)) != expected[lane]) ++mismatches;
      if (to_published_order(test::unpack_lane(from_program, lane)) != expected[lane]) ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0U);
  std::cout << "[ published] aes_128.txt: " << program.num_slots << " slots, " << program.and_depth << " layers\n";
}

}  // namespace
}  // namespace mpc::circuits
