// tests/unit/gc2/half_gates_test.cpp: garbling and evaluation over an in-memory channel give
// the cleartext result for random layered programs and AES (OpenSSL as the reference), each
// side's output bits alone are uniform, tampering shows, and a silent garbler is an error.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <chrono>
#include <functional>
#include <random>
#include <thread>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "common/error.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "protocol/rss3/testing/random_program.hpp"

namespace {

using namespace mpc::gc2;
using mpc::two_party::make_memory_channel_pair;

struct GarbledRun {
  std::vector<std::uint8_t> decoding;
  std::vector<std::uint8_t> evaluated;
  std::uint64_t bytes = 0;
};

// Garbles in one thread, evaluates in this one; input bits row-major (row * instances + e).
GarbledRun garble_and_evaluate(const mpc::circuits::Program& program, std::size_t instances,
                        const std::vector<std::uint8_t>& bits, std::uint64_t tweak = 7,
                        std::function<void(mpc::two_party::Channel&)> tamper = nullptr) {
  auto [garbler_end, evaluator_end] = make_memory_channel_pair(std::chrono::milliseconds(2000));
  const Block delta = random_delta();
  const auto zero = random_labels(bits.size());
  const Block constant = random_labels(1)[0];
  const auto active = active_labels(zero, bits, delta);
  GarbledRun run;
  std::thread garbler([&, channel = garbler_end.get()] {
    run.decoding = garble(program, instances, delta, tweak, zero, constant, *channel);
    run.bytes = channel->bytes_sent();
  });
  if (tamper) tamper(*evaluator_end);
  run.evaluated = evaluate(program, instances, tweak, active, constant, *evaluator_end);
  garbler.join();
  return run;
}

TEST(HalfGates, RandomProgramsMatchCleartext) {
  std::mt19937_64 rng(21);
  for (int trial = 0; trial < 12; ++trial) {
    const auto program = mpc::rss3::testing::random_program(rng, {});
    const std::size_t instances = trial % 3 == 0 ? 1 : 70;
    const std::size_t words = (instances + 63) / 64;
    const auto input_words = mpc::rss3::testing::random_words(rng, program.num_inputs * words);
    std::vector<std::uint8_t> bits(program.num_inputs * instances);
    for (std::size_t r = 0; r < program.num_inputs; ++r)
      for (std::size_t e = 0; e < instances; ++e)
        bits[r * instances + e] = (input_words[r * words + e / 64] >> (e % 64)) & 1;
    const auto expected = mpc::rss3::testing::evaluate_cleartext(program, input_words, instances);
    const GarbledRun run = garble_and_evaluate(program, instances, bits);
    for (std::size_t j = 0; j < program.num_outputs; ++j)
      for (std::size_t e = 0; e < instances; ++e)
        ASSERT_EQ(run.decoding[j * instances + e] ^ run.evaluated[j * instances + e],
                  (expected[j * words + e / 64] >> (e % 64)) & 1)
            << "trial " << trial << " output " << j << " instance " << e;
    EXPECT_EQ(run.bytes, garbled_bytes(program, instances));
  }
}

std::vector<std::uint8_t> to_bits(std::span<const std::uint8_t> bytes) {
  std::vector<std::uint8_t> bits(bytes.size() * 8);
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = (bytes[i / 8] >> (i % 8)) & 1;
  return bits;
}

// AES over `instances` blocks: key rows shared by every instance, block rows per instance.
void check_aes(mpc::circuits::AesKeySize size, mpc::circuits::AesDirection direction, std::size_t instances) {
  using namespace mpc::circuits;
  std::mt19937_64 rng(static_cast<std::uint64_t>(instances) * 31 + static_cast<int>(size));
  const auto program = compile(build_aes_circuit(size, direction, SboxVariant::And32));
  std::vector<std::uint8_t> key(aes_key_bits(size) / 8);
  for (auto& b : key) b = static_cast<std::uint8_t>(rng());
  const auto round_keys = aes_expand_key(key);
  const auto key_bits = to_bits(round_keys);
  std::vector<std::array<std::uint8_t, 16>> blocks(instances);
  for (auto& block : blocks)
    for (auto& b : block) b = static_cast<std::uint8_t>(rng());
  std::vector<std::uint8_t> bits(program.num_inputs * instances);
  for (std::size_t r = 0; r < key_bits.size(); ++r)
    for (std::size_t e = 0; e < instances; ++e) bits[r * instances + e] = key_bits[r];
  for (std::size_t e = 0; e < instances; ++e) {
    const auto block_bits = to_bits(blocks[e]);
    for (std::size_t r = 0; r < 128; ++r) bits[(key_bits.size() + r) * instances + e] = block_bits[r];
  }
  const GarbledRun run = garble_and_evaluate(program, instances, bits);
  for (std::size_t e = 0; e < instances; ++e) {
    const auto expected = direction == AesDirection::Encrypt ? aes_encrypt_block(round_keys, blocks[e])
                                                             : aes_decrypt_block(round_keys, blocks[e]);
    std::array<std::uint8_t, 16> got{};
    for (std::size_t j = 0; j < 128; ++j)
      got[j / 8] |= static_cast<std::uint8_t>((run.decoding[j * instances + e] ^ run.evaluated[j * instances + e])
                                              << (j % 8));
    ASSERT_EQ(got, expected) << "instance " << e;
  }
}

TEST(HalfGates, AesMatchesTheReference) {
  using namespace mpc::circuits;
  check_aes(AesKeySize::Aes128, AesDirection::Encrypt, 1);
  check_aes(AesKeySize::Aes128, AesDirection::Encrypt, 33);
  check_aes(AesKeySize::Aes128, AesDirection::Decrypt, 5);
  check_aes(AesKeySize::Aes256, AesDirection::Encrypt, 9);
  check_aes(AesKeySize::Aes256, AesDirection::Decrypt, 2);
}

TEST(HalfGates, OutputSharesAloneAreUniform) {
  using namespace mpc::circuits;
  const auto program = compile(build_aes_circuit(AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::And32));
  const std::size_t instances = 64;
  // Every instance encrypts the same block under the same key: the output is constant, so
  // any bias of one side's bits towards the output would show.
  std::vector<std::uint8_t> bits(program.num_inputs * instances, 0);
  const GarbledRun run = garble_and_evaluate(program, instances, bits);
  std::size_t ones_g = 0, ones_e = 0;
  for (auto b : run.decoding) ones_g += b;
  for (auto b : run.evaluated) ones_e += b;
  const double n = static_cast<double>(run.decoding.size());  // 8192 bits
  // Binomial(8192, 1/2): 4096 +- 6 sigma (sigma ~ 45).
  EXPECT_NEAR(static_cast<double>(ones_g), n / 2, 6 * 45.3);
  EXPECT_NEAR(static_cast<double>(ones_e), n / 2, 6 * 45.3);
  // The output is the same in every instance, yet each side's bits differ between instances.
  std::size_t differing = 0;
  for (std::size_t j = 0; j < 128; ++j) differing += run.decoding[j * instances] != run.decoding[j * instances + 1];
  EXPECT_GT(differing, 30u);
}

// A channel wrapper that flips one bit of what the evaluator receives.
class FlippingChannel final : public mpc::two_party::Channel {
 public:
  explicit FlippingChannel(mpc::two_party::Channel& inner) : inner_(inner) {}
  void send(std::span<const std::uint8_t> bytes) override { inner_.send(bytes); }
  void flush() override { inner_.flush(); }
  void receive(std::span<std::uint8_t> out) override {
    inner_.receive(out);
    if (!flipped_ && !out.empty()) {
      out[out.size() / 2] ^= 0x10;
      flipped_ = true;
    }
  }
  std::uint64_t bytes_sent() const override { return inner_.bytes_sent(); }

 private:
  mpc::two_party::Channel& inner_;
  bool flipped_ = false;
};

TEST(HalfGates, TamperedTablesOrWrongTweaksGiveWrongResults) {
  using namespace mpc::circuits;
  const auto program = compile(build_aes_circuit(AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::And32));
  const std::size_t instances = 4;
  std::mt19937_64 rng(4);
  std::vector<std::uint8_t> bits(program.num_inputs * instances);
  for (auto& b : bits) b = rng() & 1;
  const GarbledRun good = garble_and_evaluate(program, instances, bits);
  auto result = [&](const GarbledRun& run) {
    std::vector<std::uint8_t> out(run.decoding.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = run.decoding[i] ^ run.evaluated[i];
    return out;
  };
  // One flipped table bit.
  {
    auto [g, e] = make_memory_channel_pair(std::chrono::milliseconds(2000));
    FlippingChannel flipping(*e);
    const Block delta = random_delta();
    const auto zero = random_labels(bits.size());
    const Block constant = random_labels(1)[0];
    const auto active = active_labels(zero, bits, delta);
    GarbledRun run;
    std::thread garbler([&, channel = g.get()] { run.decoding = garble(program, instances, delta, 7, zero, constant, *channel); });
    run.evaluated = evaluate(program, instances, 7, active, constant, flipping);
    garbler.join();
    EXPECT_NE(result(run), result(good));
  }
  // The evaluator hashing with another tweak than the garbler.
  {
    auto [g, e] = make_memory_channel_pair(std::chrono::milliseconds(2000));
    const Block delta = random_delta();
    const auto zero = random_labels(bits.size());
    const Block constant = random_labels(1)[0];
    const auto active = active_labels(zero, bits, delta);
    GarbledRun run;
    std::thread garbler([&, channel = g.get()] { run.decoding = garble(program, instances, delta, 7, zero, constant, *channel); });
    run.evaluated = evaluate(program, instances, 8, active, constant, *e);
    garbler.join();
    EXPECT_NE(result(run), result(good));
  }
}

TEST(HalfGates, SilentGarblerIsAPeerError) {
  using namespace mpc::circuits;
  const auto program = compile(build_aes_circuit(AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::And32));
  auto [g, e] = make_memory_channel_pair(std::chrono::milliseconds(200));
  const auto labels = random_labels(program.num_inputs);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW((void)evaluate(program, 1, 1, labels, labels[0], *e), mpc::PeerError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(HalfGates, BadArgumentsAreRefused) {
  using namespace mpc::circuits;
  const auto program = compile(build_aes_circuit(AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::And32));
  auto [g, e] = make_memory_channel_pair();
  const auto labels = random_labels(program.num_inputs);
  Block even_delta = random_delta();
  even_delta.lo &= ~1ull;
  EXPECT_THROW((void)garble(program, 1, even_delta, 1, labels, labels[0], *g), mpc::Error);
  EXPECT_THROW((void)garble(program, 2, random_delta(), 1, labels, labels[0], *g), mpc::Error);
  EXPECT_THROW((void)active_labels(labels, std::vector<std::uint8_t>(labels.size(), 2), random_delta()), mpc::Error);
}

}  // namespace
