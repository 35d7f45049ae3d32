// What one server receives while the three evaluate AES-128: the AND-layer messages
// r_2 = x_2&y_2 ^ a_2&b_2 ^ alpha_2 from its predecessor (Araki et al., CCS 2016,
// eprint 2016/768). With fresh correlated randomness per run they must be uniform and
// independent of the key. Each run evaluates the same 64 public blocks under one fixed
// key, so the cleartext wire values are identical in every run: any leak of them into a
// message shows up as a biased bit position. A control test runs the same statistics on
// what all three servers send together (whose XOR is the cleartext AND output) and
// checks they reject it. What party 0 receives is what party 2 sends (the harness ring
// delivers it unchanged), so it is taken from party 2's transcript.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/program.hpp"
#include "three_party_aes.hpp"
#include "statistics.hpp"

namespace mpc::security_test {
namespace {

constexpr std::size_t kInstances = 64;  // one word: every message bit belongs to an instance
constexpr std::size_t kRuns = 150;      // per key

std::vector<std::uint8_t> fixed_bytes(std::uint32_t seed, std::size_t bytes) {
  std::mt19937 generator(seed);
  std::vector<std::uint8_t> out(bytes);
  for (auto& byte : out) byte = static_cast<std::uint8_t>(generator());
  return out;
}

struct MessageView {
  explicit MessageView(std::size_t bits) : per_bit(bits), per_and(bits / kInstances), cleartext(bits) {}
  BitCounter per_bit;    // position = (AND gate, instance): one sample per run
  BitCounter per_and;    // position = AND gate: kInstances samples per run
  BitCounter cleartext;  // control: XOR of all three parties' messages
  ByteHistogram bytes;
};

class LayerMessageTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    program_ = new circuits::Program(circuits::compile(
        circuits::build_aes_circuit(circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt,
                                    circuits::SboxVariant::And32)));
    // The secrets and public inputs are fixed; everything random comes from the OS per run.
    round_keys_a_ = new std::vector<std::uint8_t>(circuits::aes_expand_key(std::vector<std::uint8_t>(16, 0)));
    round_keys_b_ = new std::vector<std::uint8_t>(circuits::aes_expand_key(fixed_bytes(7, 16)));
    blocks_ = new std::vector<std::uint8_t>(fixed_bytes(11, kInstances * 16));
    try {
      view_a_ = new MessageView(collect(*round_keys_a_));
      view_b_ = new MessageView(collect(*round_keys_b_));
    } catch (const std::exception& error) {
      setup_error_ = new std::string(error.what());
    }
  }
  void SetUp() override {
    if (setup_error_ != nullptr) GTEST_FAIL() << "collecting the layer messages failed: " << *setup_error_;
  }
  static void TearDownTestSuite() {
    delete setup_error_;
    setup_error_ = nullptr;
    delete view_a_;
    view_a_ = nullptr;
    delete view_b_;
    view_b_ = nullptr;
    delete blocks_;
    blocks_ = nullptr;
    delete round_keys_a_;
    round_keys_a_ = nullptr;
    delete round_keys_b_;
    round_keys_b_ = nullptr;
    delete program_;
    program_ = nullptr;
  }

  static MessageView collect(const std::vector<std::uint8_t>& round_keys) {
    const std::size_t bits = program_->and_gates * kInstances;
    MessageView view(bits);
    std::vector<std::uint64_t> tallies(program_->and_gates);
    std::vector<std::uint8_t> combined;
    for (std::size_t run = 0; run < kRuns; ++run) {
      const ThreePartyRun result = run_aes_three_parties(*program_, round_keys, *blocks_);
      const auto& received = result.received_by_0();
      if (received.size() * 8 != bits)
        throw std::runtime_error("party 0 received " + std::to_string(received.size()) + " bytes, expected " +
                                 std::to_string(bits / 8));
      view.per_bit.add(received);
      // Each AND's bits for the 64 instances are 8 consecutive bytes; count them per gate.
      for (std::size_t gate = 0; gate < tallies.size(); ++gate) {
        std::uint64_t word = 0;
        for (std::size_t i = 0; i < 8; ++i) word |= static_cast<std::uint64_t>(received[gate * 8 + i]) << (8 * i);
        tallies[gate] = static_cast<std::uint64_t>(__builtin_popcountll(word));
      }
      view.per_and.add_tallies(tallies, kInstances);
      view.bytes.add(received);
      combined.assign(received.size(), 0);
      for (const auto& sent : result.sent)
        for (std::size_t i = 0; i < combined.size(); ++i) combined[i] ^= sent[i];
      view.cleartext.add(combined);
      if (run == 0) {
        // The recorded runs really computed AES under the key.
        const auto opened = open_outputs(result, kInstances);
        for (std::size_t n = 0; n < kInstances; ++n) {
          const auto expected = circuits::aes_encrypt_block(
              round_keys, std::span<const std::uint8_t, 16>(blocks_->data() + 16 * n, 16));
          if (!std::equal(expected.begin(), expected.end(), opened.begin() + static_cast<std::ptrdiff_t>(16 * n)))
            throw std::runtime_error("three-party AES disagrees with the reference at instance " +
                                     std::to_string(n));
        }
        // Every party sends as much as party 0 receives: one bit per AND per instance.
        if (result.sent[0].size() != received.size() || result.sent[1].size() != received.size())
          throw std::runtime_error("parties sent different amounts");
      }
    }
    return view;
  }

  static circuits::Program* program_;
  static std::vector<std::uint8_t>* round_keys_a_;
  static std::vector<std::uint8_t>* round_keys_b_;
  static std::vector<std::uint8_t>* blocks_;
  static MessageView* view_a_;
  static MessageView* view_b_;
  static std::string* setup_error_;
};

circuits::Program* LayerMessageTest::program_ = nullptr;
std::vector<std::uint8_t>* LayerMessageTest::round_keys_a_ = nullptr;
std::vector<std::uint8_t>* LayerMessageTest::round_keys_b_ = nullptr;
std::vector<std::uint8_t>* LayerMessageTest::blocks_ = nullptr;
MessageView* LayerMessageTest::view_a_ = nullptr;
MessageView* LayerMessageTest::view_b_ = nullptr;
std::string* LayerMessageTest::setup_error_ = nullptr;

TEST_F(LayerMessageTest, ProgramHasTheExpectedShape) {
  EXPECT_EQ(program_->and_gates, 5120u);  // 160 S-boxes x 32 ANDs
  EXPECT_EQ(program_->and_depth, 60u);    // 10 rounds x AND-depth 6
  EXPECT_EQ(program_->num_inputs, 11u * 128 + 128);
}

TEST_F(LayerMessageTest, MessagesLookUniform) {
  for (const MessageView* view : {view_a_, view_b_}) {
    for (const Verdict& verdict : {monobit(view->per_bit), per_position_chi_square(view->per_bit),
                                   worst_position(view->per_bit), per_position_chi_square(view->per_and),
                                   worst_position(view->per_and), uniform_bytes(view->bytes)})
      EXPECT_GT(verdict.p, kRejectP) << verdict.detail;
  }
}

TEST_F(LayerMessageTest, MessagesDoNotDependOnTheKey) {
  for (const auto& [first, second] : {std::pair{&view_a_->per_bit, &view_b_->per_bit},
                                      std::pair{&view_a_->per_and, &view_b_->per_and}}) {
    const Verdict verdict = two_sample_positions(*first, *second);
    EXPECT_GT(verdict.p, kRejectP) << verdict.detail;
  }
  const Verdict bytes = same_byte_distribution(view_a_->bytes, view_b_->bytes);
  EXPECT_GT(bytes.p, kRejectP) << bytes.detail;
}

// Control: the XOR of all three messages of an AND is its cleartext output, the same in
// every run; the statistics above must reject it, and must tell the two keys apart.
TEST_F(LayerMessageTest, CleartextWiresAreDetected) {
  EXPECT_LT(per_position_chi_square(view_a_->cleartext).p, kRejectP);
  EXPECT_LT(two_sample_positions(view_a_->cleartext, view_b_->cleartext).p, kRejectP);
}

}  // namespace
}  // namespace mpc::security_test
