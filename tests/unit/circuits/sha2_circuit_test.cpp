// The SHA-256 / SHA-512 compression circuits against the cleartext reference
// (circuits/sha2_reference), and the reference against the FIPS 180 "abc" digests and OpenSSL.
#include <gtest/gtest.h>

#include <openssl/evp.h>

#include <random>
#include <stdexcept>

#include "circuits/builder.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/program.hpp"
#include "circuits/sha2.hpp"
#include "circuits/sha2_reference.hpp"
#include "circuits/stats.hpp"
#include "common/error.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using test::Bytes;

Bytes state_bytes(const Sha256State& state) {
  const auto bytes = sha256_state_bytes(state);
  return {bytes.begin(), bytes.end()};
}
Bytes state_bytes(const Sha512State& state) {
  const auto bytes = sha512_state_bytes(state);
  return {bytes.begin(), bytes.end()};
}

Bytes reference_compress(Sha256State state, const Bytes& block) {
  sha256_compress(state, std::span<const std::uint8_t, kSha256BlockBytes>(block.data(), kSha256BlockBytes));
  return state_bytes(state);
}
Bytes reference_compress(Sha512State state, const Bytes& block) {
  sha512_compress(state, std::span<const std::uint8_t, kSha512BlockBytes>(block.data(), kSha512BlockBytes));
  return state_bytes(state);
}

// "abc" padded to one block of `block_bytes`, length field at the end.
Bytes abc_block(std::size_t block_bytes) {
  Bytes block(block_bytes, 0);
  block[0] = 'a';
  block[1] = 'b';
  block[2] = 'c';
  block[3] = 0x80;
  block.back() = 24;  // bit length
  return block;
}

Bytes openssl_digest(const EVP_MD* md, const Bytes& message) {
  std::uint8_t digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  if (EVP_Digest(message.data(), message.size(), digest, &length, md, nullptr) != 1) {
    throw std::runtime_error("OpenSSL digest failed");
  }
  return Bytes(digest, digest + length);
}

TEST(Sha2Reference, FipsAbcExamples) {
  EXPECT_EQ(reference_compress(sha256_initial_state(), abc_block(64)),
            test::from_hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
  EXPECT_EQ(reference_compress(sha512_initial_state(), abc_block(128)),
            test::from_hex("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                           "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"));
  const Bytes sha384 = reference_compress(sha384_initial_state(), abc_block(128));
  EXPECT_EQ(Bytes(sha384.begin(), sha384.begin() + 48),
            test::from_hex("cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
                           "8086072ba1e7cc2358baeca134c825a7"));
}

TEST(Sha2Reference, TwoBlockMessagesMatchOpenSsl) {
  // 100 random bytes: two blocks for SHA-256 (length field in the second), one + one for
  // SHA-512 with the 16-byte length field.
  std::mt19937_64 rng(180);
  const Bytes message = test::random_bytes(rng, 200);
  {
    Bytes padded = message;
    padded.push_back(0x80);
    while (padded.size() % 64 != 56) padded.push_back(0);
    for (int shift = 56; shift >= 0; shift -= 8) padded.push_back(static_cast<std::uint8_t>((message.size() * 8) >> shift));
    Sha256State state = sha256_initial_state();
    for (std::size_t offset = 0; offset < padded.size(); offset += 64)
      sha256_compress(state, std::span<const std::uint8_t, 64>(padded.data() + offset, 64));
    EXPECT_EQ(state_bytes(state), openssl_digest(EVP_sha256(), message));
  }
  for (const bool is384 : {false, true}) {
    Bytes padded = message;
    padded.push_back(0x80);
    while (padded.size() % 128 != 112) padded.push_back(0);
    for (int shift = 120; shift >= 0; shift -= 8)
      padded.push_back(shift >= 64 ? 0 : static_cast<std::uint8_t>((message.size() * 8) >> shift));
    Sha512State state = is384 ? sha384_initial_state() : sha512_initial_state();
    for (std::size_t offset = 0; offset < padded.size(); offset += 128)
      sha512_compress(state, std::span<const std::uint8_t, 128>(padded.data() + offset, 128));
    Bytes digest = state_bytes(state);
    digest.resize(is384 ? 48 : 64);
    EXPECT_EQ(digest, openssl_digest(is384 ? EVP_sha384() : EVP_sha512(), message));
  }
}

TEST(Sha2Circuit, FipsAbcExamples) {
  Bytes input = state_bytes(sha256_initial_state());
  Bytes block = abc_block(64);
  input.insert(input.end(), block.begin(), block.end());
  EXPECT_EQ(test::bits_to_bytes(evaluate(build_sha256_compress_circuit(), test::bytes_to_bits(input))),
            test::from_hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));

  input = state_bytes(sha512_initial_state());
  block = abc_block(128);
  input.insert(input.end(), block.begin(), block.end());
  EXPECT_EQ(test::bits_to_bytes(evaluate(build_sha512_compress_circuit(), test::bytes_to_bits(input))),
            test::from_hex("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                           "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"));
}

template <typename State>
State random_state(std::mt19937_64& rng) {
  State state{};
  for (auto& word : state) word = static_cast<typename State::value_type>(rng());
  return state;
}

// 64 lanes: all-ones and all-zero edge cases, then random chaining values and blocks.
template <typename State>
void expect_matches_reference(const Circuit& circuit, std::size_t block_bytes, std::uint64_t seed) {
  const Program program = compile(circuit);
  std::mt19937_64 rng(seed);
  std::vector<Bytes> inputs;
  std::vector<Bytes> expected;
  for (int lane = 0; lane < 64; ++lane) {
    State state = random_state<State>(rng);
    Bytes block = test::random_bytes(rng, block_bytes);
    if (lane == 0) {
      state.fill(static_cast<typename State::value_type>(~std::uint64_t{0}));
      block.assign(block_bytes, 0xFF);
    }
    if (lane == 1) {
      state.fill(0);
      block.assign(block_bytes, 0);
    }
    Bytes input = state_bytes(state);
    input.insert(input.end(), block.begin(), block.end());
    inputs.push_back(input);
    expected.push_back(reference_compress(state, block));
  }
  const auto words = test::pack_lanes(inputs);
  const auto from_circuit = evaluate_packed(circuit, words);
  const auto from_program = evaluate_program_packed(program, words);
  for (int lane = 0; lane < 64; ++lane) {
    ASSERT_EQ(test::unpack_lane(from_circuit, lane), expected[lane]) << "lane " << lane;
    ASSERT_EQ(test::unpack_lane(from_program, lane), expected[lane]) << "lane " << lane;
  }
}

TEST(Sha2Circuit, Sha256RandomStatesAndBlocksMatchReference) {
  expect_matches_reference<Sha256State>(build_sha256_compress_circuit(), 64, 256);
}

TEST(Sha2Circuit, Sha512RandomStatesAndBlocksMatchReference) {
  expect_matches_reference<Sha512State>(build_sha512_compress_circuit(), 128, 512);
}

TEST(Sha2Circuit, AndDepthPerCompression) {
  // Each round ends in one prefix adder (6 AND layers for 32-bit words, 7 for 64) behind an AND
  // layer (Ch or Maj) and the 3:2 layers that take the late operands in.
  const CircuitStats sha256 = compute_stats(build_sha256_compress_circuit());
  const CircuitStats sha512 = compute_stats(build_sha512_compress_circuit());
  std::cout << "[ stats    ] sha256-compress: and " << sha256.and_gates << ", and-depth " << sha256.and_depth << "\n";
  std::cout << "[ stats    ] sha512-compress: and " << sha512.and_gates << ", and-depth " << sha512.and_depth << "\n";
  // Measured: 451 (7 per round + 3) and 643 (8 per round + 3).
  EXPECT_LE(sha256.and_depth, 7U * 64U + 3U);
  EXPECT_LE(sha512.and_depth, 8U * 80U + 3U);
  EXPECT_LE(sha256.and_gates, 50200U);
  EXPECT_LE(sha512.and_gates, 144200U);
  EXPECT_GE(sha256.and_depth, 6U * 64U);
  EXPECT_GE(sha512.and_depth, 7U * 80U);
}

// The 64-bit word operations of adder.hpp that SHA-512 uses, against integer arithmetic.
TEST(Sha2Circuit, SixtyFourBitAddersMatchIntegerArithmetic) {
  CircuitBuilder builder;
  detail::WordGates gates(builder);
  const auto group = [&] {
    detail::Word64 word{};
    const auto wires = builder.add_input_group(64);
    std::copy(wires.begin(), wires.end(), word.begin());
    return word;
  };
  const detail::Word64 x = group(), y = group(), z = group();
  const detail::Word64 added = gates.add(x, y);
  const detail::Word64 summed = gates.sum({x, y, z, gates.constant64(0x6C44198C4A475817ULL), detail::rotl(x, 9)});
  const auto bits = [](const detail::Word64& word) { return std::vector<std::uint32_t>(word.begin(), word.end()); };
  const Circuit add_circuit = builder.finish({bits(added)});
  const Circuit sum_circuit = builder.finish({bits(summed)});

  std::mt19937_64 rng(64);
  std::vector<std::array<std::uint64_t, 3>> cases(64);
  std::vector<Bytes> inputs;
  for (std::size_t lane = 0; lane < cases.size(); ++lane) {
    for (auto& value : cases[lane]) value = rng();
    if (lane == 0) cases[lane] = {~std::uint64_t{0}, 1, ~std::uint64_t{0}};  // carry through every bit
    if (lane == 1) cases[lane] = {0x0123456789ABCDEFULL, ~0x0123456789ABCDEFULL, 0x8000000000000000ULL};
    Bytes input;
    for (std::uint64_t value : cases[lane])
      for (int byte = 0; byte < 8; ++byte) input.push_back(static_cast<std::uint8_t>(value >> (8 * byte)));
    inputs.push_back(input);
  }
  const auto words = test::pack_lanes(inputs);
  const auto add_out = evaluate_packed(add_circuit, words);
  const auto sum_out = evaluate_packed(sum_circuit, words);
  const auto value_of = [](const Bytes& bytes) {
    std::uint64_t value = 0;
    for (int byte = 7; byte >= 0; --byte) value = value << 8 | bytes[static_cast<std::size_t>(byte)];
    return value;
  };
  for (std::size_t lane = 0; lane < cases.size(); ++lane) {
    const auto [a, b, c] = cases[lane];
    EXPECT_EQ(value_of(test::unpack_lane(add_out, lane)), a + b) << lane;
    EXPECT_EQ(value_of(test::unpack_lane(sum_out, lane)), a + b + c + 0x6C44198C4A475817ULL + ((a << 9) | (a >> 55))) << lane;
  }
  // Generate layer + log2(64) prefix layers.
  EXPECT_EQ(compute_stats(add_circuit).and_depth, 7U);
}

TEST(Sha2Circuit, RejectsWrongWidths) {
  CircuitBuilder builder;
  const auto wires = builder.add_input_group(100);
  EXPECT_THROW(detail::sha256_words_from_bits(wires), FormatError);
  EXPECT_THROW(detail::sha512_block_from_bits(wires), FormatError);
}

}  // namespace
}  // namespace mpc::circuits
