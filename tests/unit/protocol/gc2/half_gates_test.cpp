// tests/unit/protocol/gc2/half_gates_test.cpp: garbling and evaluation over an in-memory channel give
// the cleartext result for random layered programs and AES (OpenSSL as the reference), on
// every kernel and across kernels; each side's output bits alone are uniform; a wrong delta,
// tampered tables or a tampered garbling number give wrong results; two garblings of one
// garbler never share a tweak; a garbler that stops sending is a PeerError.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <thread>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "common/error.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "support/random_program.hpp"

namespace {

using namespace mpc::gc2;
using mpc::two_party::Channel;
using mpc::two_party::make_memory_channel_pair;
using mpc::rss3::testing::row_bits;

std::vector<Kernel> kernels() {
  std::vector<Kernel> out{Kernel::Portable};
  if (kernel_available(Kernel::Vaes)) out.push_back(Kernel::Vaes);
  return out;
}

// Wraps the evaluator's end of a channel; `on_receive` sees (and may change) each receive,
// numbered from 0 (receive 0 is the 24-byte header).
class InspectingChannel final : public Channel {
 public:
  using Hook = std::function<void(std::size_t index, std::span<std::uint8_t>)>;
  InspectingChannel(Channel& inner, Hook hook) : inner_(inner), hook_(std::move(hook)) {}
  void send(std::span<const std::uint8_t> bytes) override { inner_.send(bytes); }
  void flush() override { inner_.flush(); }
  void receive(std::span<std::uint8_t> out) override {
    inner_.receive(out);
    hook_(count_++, out);
  }
  std::uint64_t bytes_sent() const override { return inner_.bytes_sent(); }

 private:
  Channel& inner_;
  Hook hook_;
  std::size_t count_ = 0;
};

struct GarbledRun {
  std::vector<std::uint8_t> decoding;   // the garbler's bits
  std::vector<std::uint8_t> evaluated;  // the evaluator's bits
  std::uint64_t bytes = 0;
  std::vector<std::uint8_t> opened() const {
    std::vector<std::uint8_t> out(decoding.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = decoding[i] ^ evaluated[i];
    return out;
  }
};

struct Options {
  Kernel garbler_kernel = best_kernel();
  Kernel evaluator_kernel = best_kernel();
  bool wrong_delta = false;  // the evaluator's labels of its rows made with another delta
  InspectingChannel::Hook hook;
};

// Input rows [0, garbler_rows) are the garbler's (active labels via garbler_input_labels),
// the rest the evaluator's (active labels as correlated OT would give them). bits: row-major.
GarbledRun garble_and_evaluate(const mpc::circuits::Program& program, std::size_t instances,
                        const std::vector<std::uint8_t>& bits, std::size_t garbler_rows, const Options& options = {}) {
  auto [garbler_end, evaluator_end] = make_memory_channel_pair(std::chrono::milliseconds(3000));
  Garbler garbler(options.garbler_kernel);
  const Labels zero = zero_labels(bits.size());
  const std::size_t split = garbler_rows * instances;
  Labels active = garbler_input_labels(garbler, bits, zero);  // garbler's rows: sent as they are
  if (options.wrong_delta) {
    Garbler other;
    Labels wrong = garbler_input_labels(other, bits, zero);
    for (std::size_t i = split; i < bits.size(); ++i) active[i] = wrong[i];
  }
  GarbledRun run;
  std::thread garbler_thread([&, channel = garbler_end.get()] {
    run.decoding = garbler.garble(program, instances, zero, *channel);
    run.bytes = channel->bytes_sent();
  });
  if (options.hook) {
    InspectingChannel inspecting(*evaluator_end, options.hook);
    run.evaluated = evaluate(program, instances, active, inspecting, options.evaluator_kernel);
  } else {
    run.evaluated = evaluate(program, instances, active, *evaluator_end, options.evaluator_kernel);
  }
  garbler_thread.join();
  return run;
}

TEST(HalfGates, RandomProgramsMatchCleartextOnEveryKernelPair) {
  std::mt19937_64 rng(21);
  int trial = 0;
  for (Kernel g : kernels())
    for (Kernel e : kernels())
      for (std::size_t instances : {1u, 3u, 5u, 8u, 19u, 70u}) {
        const auto program = mpc::rss3::testing::random_program(rng, {});
        const auto input_words =
            mpc::rss3::testing::random_words(rng, program.num_inputs * ((instances + 63) / 64));
        const auto bits = row_bits(input_words, program.num_inputs, instances);
        const auto expected =
            row_bits(mpc::rss3::testing::evaluate_cleartext(program, input_words, instances), program.num_outputs,
                     instances);
        Options options;
        options.garbler_kernel = g;
        options.evaluator_kernel = e;
        const GarbledRun run = garble_and_evaluate(program, instances, bits, program.num_inputs / 2, options);
        ASSERT_EQ(run.opened(), expected) << kernel_name(g) << " -> " << kernel_name(e) << ", " << instances
                                          << " instances, trial " << trial;
        EXPECT_EQ(run.bytes, garbled_bytes(program, instances));
        ++trial;
      }
}

std::vector<std::uint8_t> to_bits(std::span<const std::uint8_t> bytes) {
  std::vector<std::uint8_t> bits(bytes.size() * 8);
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = (bytes[i / 8] >> (i % 8)) & 1;
  return bits;
}

std::array<std::uint8_t, 16> openssl_aes(std::span<const std::uint8_t> key, const std::array<std::uint8_t, 16>& in,
                                         bool decrypt) {
  const EVP_CIPHER* cipher = key.size() == 16 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  EXPECT_EQ(EVP_CipherInit_ex(ctx.get(), cipher, nullptr, key.data(), nullptr, decrypt ? 0 : 1), 1);
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  std::array<std::uint8_t, 16> out{};
  int written = 0;
  EXPECT_EQ(EVP_CipherUpdate(ctx.get(), out.data(), &written, in.data(), 16), 1);
  return out;
}

struct AesCase {
  mpc::circuits::Program program;
  std::vector<std::uint8_t> bits;  // rows: round-key bits (same in every instance), then block bits
  std::size_t key_rows = 0;
  std::vector<std::array<std::uint8_t, 16>> expected;
};

AesCase aes_case(mpc::circuits::AesKeySize size, mpc::circuits::AesDirection direction, std::size_t instances,
                 std::uint64_t seed) {
  using namespace mpc::circuits;
  std::mt19937_64 rng(seed);
  AesCase c;
  c.program = compile(build_aes_circuit(size, direction, SboxVariant::And32));
  std::vector<std::uint8_t> key(aes_key_bits(size) / 8);
  for (auto& b : key) b = static_cast<std::uint8_t>(rng());
  const auto key_bits = to_bits(aes_expand_key(key));
  c.key_rows = key_bits.size();
  c.bits.resize(c.program.num_inputs * instances);
  for (std::size_t r = 0; r < key_bits.size(); ++r)
    for (std::size_t e = 0; e < instances; ++e) c.bits[r * instances + e] = key_bits[r];
  for (std::size_t e = 0; e < instances; ++e) {
    std::array<std::uint8_t, 16> block{};
    for (auto& b : block) b = static_cast<std::uint8_t>(rng());
    const auto block_bits = to_bits(block);
    for (std::size_t r = 0; r < 128; ++r) c.bits[(c.key_rows + r) * instances + e] = block_bits[r];
    c.expected.push_back(openssl_aes(key, block, direction == AesDirection::Decrypt));
  }
  return c;
}

std::vector<std::array<std::uint8_t, 16>> blocks_of(const std::vector<std::uint8_t>& output, std::size_t instances) {
  std::vector<std::array<std::uint8_t, 16>> blocks(instances);
  for (std::size_t e = 0; e < instances; ++e)
    for (std::size_t j = 0; j < 128; ++j)
      blocks[e][j / 8] |= static_cast<std::uint8_t>(output[j * instances + e] << (j % 8));
  return blocks;
}

TEST(HalfGates, AesMatchesOpenSslWithInputsSplitBothWays) {
  using namespace mpc::circuits;
  struct Case {
    AesKeySize size;
    AesDirection direction;
    std::size_t instances;
  };
  std::uint64_t seed = 100;
  for (const Case& k : {Case{AesKeySize::Aes128, AesDirection::Encrypt, 1},
                        Case{AesKeySize::Aes128, AesDirection::Encrypt, 33},
                        Case{AesKeySize::Aes128, AesDirection::Decrypt, 6},
                        Case{AesKeySize::Aes256, AesDirection::Encrypt, 9},
                        Case{AesKeySize::Aes256, AesDirection::Decrypt, 2}}) {
    const AesCase c = aes_case(k.size, k.direction, k.instances, ++seed);
    // The garbler holds the key and the evaluator the blocks, then the other way round
    // (garbler_rows = every row: the evaluator holds nothing).
    for (std::size_t garbler_rows : {c.key_rows, static_cast<std::size_t>(c.program.num_inputs), std::size_t{0}}) {
      const GarbledRun run = garble_and_evaluate(c.program, k.instances, c.bits, garbler_rows);
      EXPECT_EQ(blocks_of(run.opened(), k.instances), c.expected)
          << "AES-" << aes_key_bits(k.size) << (k.direction == AesDirection::Decrypt ? " decrypt" : " encrypt")
          << ", garbler rows " << garbler_rows;
    }
  }
}

TEST(HalfGates, EachSidesOutputBitsAloneAreUniform) {
  using namespace mpc::circuits;
  const std::size_t instances = 64;
  // Every instance encrypts the same block under the same key: the output is the same in
  // every instance, so any dependence of one side's bits on it would show.
  AesCase c = aes_case(AesKeySize::Aes128, AesDirection::Encrypt, instances, 7);
  for (std::size_t r = c.key_rows; r < c.program.num_inputs; ++r)
    for (std::size_t e = 1; e < instances; ++e) c.bits[r * instances + e] = c.bits[r * instances];
  const GarbledRun run = garble_and_evaluate(c.program, instances, c.bits, c.key_rows);
  const auto output = run.opened();
  ASSERT_EQ(blocks_of(output, instances)[instances - 1], c.expected[0]);
  const double n = static_cast<double>(output.size());  // 8192 bits; Binomial(8192, 1/2) has sigma 45.3
  for (const auto* side : {&run.decoding, &run.evaluated}) {
    std::size_t ones = 0, equal_to_output = 0, differs_from_first = 0;
    for (std::size_t i = 0; i < side->size(); ++i) {
      ones += (*side)[i];
      equal_to_output += (*side)[i] == output[i];
    }
    for (std::size_t j = 0; j < 128; ++j)
      for (std::size_t e = 1; e < instances; ++e)
        differs_from_first += (*side)[j * instances + e] != (*side)[j * instances];
    EXPECT_NEAR(static_cast<double>(ones), n / 2, 6 * 45.3);
    EXPECT_NEAR(static_cast<double>(equal_to_output), n / 2, 6 * 45.3);
    // 128 * 63 = 8064 comparisons of independent uniform bits: about half differ.
    EXPECT_NEAR(static_cast<double>(differs_from_first), 4032.0, 6 * 44.9);
  }
}

TEST(HalfGates, WrongDeltaGivesWrongOutput) {
  using namespace mpc::circuits;
  const std::size_t instances = 4;
  const AesCase c = aes_case(AesKeySize::Aes128, AesDirection::Encrypt, instances, 8);
  Options options;
  options.wrong_delta = true;
  const GarbledRun run = garble_and_evaluate(c.program, instances, c.bits, c.key_rows, options);
  const auto got = blocks_of(run.opened(), instances);
  for (std::size_t e = 0; e < instances; ++e) EXPECT_NE(got[e], c.expected[e]) << e;
}

TEST(HalfGates, TamperedTablesGiveWrongOutput) {
  using namespace mpc::circuits;
  const std::size_t instances = 4;
  const AesCase c = aes_case(AesKeySize::Aes128, AesDirection::Encrypt, instances, 9);
  // One bit flipped in every table of the first chunk (the first layer): a gate uses T_G when
  // its a colour is 1 and T_E when its b colour is 1, so some flipped table is used.
  const GarbledRun run = garble_and_evaluate(c.program, instances, c.bits, c.key_rows,
                                      {.hook = [](std::size_t index, std::span<std::uint8_t> bytes) {
                                         if (index != 1) return;
                                         for (std::size_t i = 0; i < bytes.size(); i += 16) bytes[i + 5] ^= 0x20;
                                       }});
  const auto got = blocks_of(run.opened(), instances);
  for (std::size_t e = 0; e < instances; ++e) EXPECT_NE(got[e], c.expected[e]) << e;
}

TEST(HalfGates, TweaksAreBoundToTheGarblingNumber) {
  using namespace mpc::circuits;
  const std::size_t instances = 4;
  const AesCase c = aes_case(AesKeySize::Aes128, AesDirection::Encrypt, instances, 10);
  // Untouched stream: right result; the garbling number in the header changed: wrong result.
  const GarbledRun good = garble_and_evaluate(c.program, instances, c.bits, c.key_rows);
  ASSERT_EQ(blocks_of(good.opened(), instances), c.expected);
  const GarbledRun bad = garble_and_evaluate(c.program, instances, c.bits, c.key_rows,
                                      {.hook = [](std::size_t index, std::span<std::uint8_t> bytes) {
                                         if (index == 0) bytes[0] ^= 1;
                                       }});
  const auto got = blocks_of(bad.opened(), instances);
  for (std::size_t e = 0; e < instances; ++e) EXPECT_NE(got[e], c.expected[e]) << e;
}

TEST(HalfGates, TwoGarblingsOnOneChannelShareNoTweak) {
  using namespace mpc::circuits;
  const std::size_t instances = 3;
  const AesCase c = aes_case(AesKeySize::Aes128, AesDirection::Encrypt, instances, 11);
  auto [garbler_end, evaluator_end] = make_memory_channel_pair(std::chrono::milliseconds(3000));
  for (Kernel kernel : kernels()) {
    Garbler garbler(kernel);
    const std::uint64_t before = garbler.garblings();
    // The same program and the same input labels twice: only the tweaks tell the tables apart.
    const Labels zero = zero_labels(c.bits.size());
    const Labels active = garbler_input_labels(garbler, c.bits, zero);
    std::vector<std::uint64_t> numbers;
    std::vector<std::set<std::array<std::uint8_t, 16>>> tables(2);
    for (int round = 0; round < 2; ++round) {
      std::vector<std::uint8_t> decoding;
      std::thread garbler_thread(
          [&, channel = garbler_end.get()] { decoding = garbler.garble(c.program, instances, zero, *channel); });
      InspectingChannel inspecting(*evaluator_end, [&](std::size_t index, std::span<std::uint8_t> bytes) {
        if (index == 0) {
          std::uint64_t number = 0;
          for (int i = 0; i < 8; ++i) number |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
          numbers.push_back(number);
          return;
        }
        for (std::size_t i = 0; i + 16 <= bytes.size(); i += 16) {
          std::array<std::uint8_t, 16> block;
          std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(i), 16, block.begin());
          tables[round].insert(block);
        }
      });
      const auto evaluated = evaluate(c.program, instances, active, inspecting, kernel);
      garbler_thread.join();
      GarbledRun run{decoding, evaluated};
      ASSERT_EQ(blocks_of(run.opened(), instances), c.expected) << "garbling " << round;
    }
    ASSERT_EQ(numbers.size(), 2u);
    EXPECT_EQ(numbers[0], before);
    EXPECT_EQ(numbers[1], before + 1);
    EXPECT_EQ(garbler.garblings(), before + 2);
    // 2 * 5120 * 3 table blocks per garbling, all distinct from the other garbling's.
    EXPECT_GT(tables[0].size(), 30000u);
    std::size_t shared = 0;
    for (const auto& block : tables[1]) shared += tables[0].count(block);
    EXPECT_EQ(shared, 0u) << kernel_name(kernel);
  }
}

// A garbler numbered from a given first number (a batch's) under a delta it is given: the
// header carries that number, an evaluator expecting it gets the result, and one expecting
// another number (another batch's) refuses the stream before reading a table.
TEST(HalfGates, NumberedGarblingsAreCheckedByTheEvaluator) {
  using namespace mpc::circuits;
  const std::size_t instances = 2;
  const AesCase c = aes_case(AesKeySize::Aes128, AesDirection::Encrypt, instances, 13);
  const std::uint64_t first = (0x1234ull << 32) | 77;
  Block delta = zero_labels(1)[0];
  delta.lo |= 1;
  for (const std::uint64_t expected : {first, first + 1}) {
    Garbler garbler(delta, first);
    EXPECT_EQ(garbler.garblings(), first);
    auto [garbler_end, evaluator_end] = make_memory_channel_pair(std::chrono::milliseconds(500));
    const Labels zero = zero_labels(c.bits.size());
    const Labels active = garbler_input_labels(garbler, c.bits, zero);
    std::vector<std::uint8_t> decoding;
    std::thread garbler_thread(
        [&, channel = garbler_end.get()] { decoding = garbler.garble(c.program, instances, zero, *channel); });
    std::uint64_t number = 0;
    InspectingChannel inspecting(*evaluator_end, [&](std::size_t index, std::span<std::uint8_t> bytes) {
      if (index == 0)
        for (int i = 0; i < 8; ++i) number |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
    });
    if (expected == first) {
      const auto evaluated = evaluate(c.program, instances, active, inspecting, expected);
      garbler_thread.join();
      GarbledRun run{decoding, evaluated};
      EXPECT_EQ(blocks_of(run.opened(), instances), c.expected);
    } else {
      try {
        (void)evaluate(c.program, instances, active, inspecting, expected);
        ADD_FAILURE() << "a stream of another garbling number was evaluated";
      } catch (const mpc::PeerError& error) {
        EXPECT_NE(std::string(error.what()).find("expected"), std::string::npos) << error.what();
      }
      garbler_thread.join();
    }
    EXPECT_EQ(number, first);
    EXPECT_EQ(garbler.garblings(), first + 1);
  }
  EXPECT_THROW((Garbler{delta, 1ull << 63}), mpc::Error);
}

TEST(HalfGates, OpeningToTheEvaluatorGivesTheOutput) {
  using namespace mpc::circuits;
  const std::size_t instances = 5;
  const AesCase c = aes_case(AesKeySize::Aes128, AesDirection::Encrypt, instances, 12);
  auto [garbler_end, evaluator_end] = make_memory_channel_pair(std::chrono::milliseconds(3000));
  Garbler garbler;
  const Labels zero = zero_labels(c.bits.size());
  const Labels active = garbler_input_labels(garbler, c.bits, zero);
  std::thread garbler_thread([&, channel = garbler_end.get()] {
    const auto decoding = garbler.garble(c.program, instances, zero, *channel);
    // Opens outputs 3..13 of every instance (an odd count: padding bits in the last byte).
    open_to_evaluator_send(std::span(decoding).subspan(3 * instances, 11 * instances), *channel);
  });
  const auto evaluated = evaluate(c.program, instances, active, *evaluator_end);
  const auto opened =
      open_to_evaluator_receive(std::span(evaluated).subspan(3 * instances, 11 * instances), *evaluator_end);
  garbler_thread.join();
  for (std::size_t j = 3; j < 14; ++j)
    for (std::size_t e = 0; e < instances; ++e)
      EXPECT_EQ(opened[(j - 3) * instances + e], (c.expected[e][j / 8] >> (j % 8)) & 1) << j << " " << e;
}

TEST(HalfGates, AGarblerThatStopsSendingIsAPeerError) {
  using namespace mpc::circuits;
  const auto program = compile(build_aes_circuit(AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::And32));
  const Labels labels = zero_labels(program.num_inputs);
  // Nothing at all.
  {
    auto [g, e] = make_memory_channel_pair(std::chrono::milliseconds(200));
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW((void)evaluate(program, 1, labels, *e), mpc::PeerError);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  }
  // The header and part of the tables, then silence with the channel still open.
  {
    auto [g, e] = make_memory_channel_pair(std::chrono::milliseconds(200));
    std::vector<std::uint8_t> partial(24 + 4096, 0);
    g->send(partial);
    g->flush();
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW((void)evaluate(program, 1, labels, *e), mpc::PeerError);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  }
  // A garbling number in OT extension's tweak space.
  {
    auto [g, e] = make_memory_channel_pair(std::chrono::milliseconds(200));
    std::vector<std::uint8_t> header(24, 0);
    header[7] = 0x80;
    g->send(header);
    g->flush();
    EXPECT_THROW((void)evaluate(program, 1, labels, *e), mpc::PeerError);
  }
}

TEST(HalfGates, BadArgumentsAreRefused) {
  using namespace mpc::circuits;
  const auto program = compile(build_aes_circuit(AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::And32));
  auto [g, e] = make_memory_channel_pair();
  const Labels labels = zero_labels(program.num_inputs);
  Block even = labels[0];
  even.lo &= ~1ull;
  EXPECT_THROW(Garbler{even}, mpc::Error);
  Garbler garbler;
  EXPECT_EQ(garbler.delta().lo & 1, 1u);
  EXPECT_THROW((void)garbler.garble(program, 2, labels, *g), mpc::Error);
  EXPECT_THROW((void)garbler.garble(program, 0, {}, *g), mpc::Error);
  EXPECT_THROW((void)evaluate(program, 2, labels, *e), mpc::Error);
  EXPECT_THROW((void)garbler_input_labels(garbler, std::vector<std::uint8_t>(labels.size(), 2), labels), mpc::Error);
  EXPECT_THROW((void)garbler_input_labels(garbler, std::vector<std::uint8_t>(3, 0), labels), mpc::Error);
  EXPECT_EQ(garbler.garblings(), 0u);  // refused before a number was taken
}

}  // namespace
