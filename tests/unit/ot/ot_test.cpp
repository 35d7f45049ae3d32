// tests/unit/ot/ot_test.cpp: base OTs and IKNP extension give the receiver the chosen message
// and only that one, over consecutive calls of one session; each party's transcript is
// independent of what the other keeps secret; bad input and a silent peer are errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "common/error.hpp"
#include "protocol/ot/base_ot.hpp"
#include "protocol/ot/ot_extension.hpp"

namespace {

using namespace mpc;
using ot::Block;
using namespace std::chrono_literals;

std::vector<std::uint8_t> random_choices(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  for (auto& c : out) c = rng() & 1;
  return out;
}

// Records what one side sends (its transcript, as the other party sees it).
class RecordingChannel final : public two_party::Channel {
 public:
  explicit RecordingChannel(two_party::Channel& inner) : inner_(inner) {}
  void send(std::span<const std::uint8_t> bytes) override {
    sent.insert(sent.end(), bytes.begin(), bytes.end());
    inner_.send(bytes);
  }
  void flush() override { inner_.flush(); }
  void receive(std::span<std::uint8_t> out) override { inner_.receive(out); }
  std::uint64_t bytes_sent() const override { return inner_.bytes_sent(); }
  std::vector<std::uint8_t> sent;

 private:
  two_party::Channel& inner_;
};

TEST(BaseOt, ReceiverGetsTheChosenKeyOnly) {
  auto [a, b] = two_party::make_memory_channel_pair(2000ms);
  std::mt19937_64 rng(1);
  const auto choices = random_choices(rng, 200);
  std::vector<Block> k0(200), k1(200), k(200);
  std::thread sender([&, channel = a.get()] { ot::base_ot_send(*channel, k0, k1); });
  ot::base_ot_receive(*b, choices, k);
  sender.join();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    EXPECT_EQ(k[i], choices[i] ? k1[i] : k0[i]) << i;
    EXPECT_NE(k[i], choices[i] ? k0[i] : k1[i]) << i;
  }
}

TEST(BaseOt, InvalidPointsAndChoicesAreRefused) {
  auto [a, b] = two_party::make_memory_channel_pair(500ms);
  // A receiver given a point that does not decode.
  std::vector<std::uint8_t> garbage(32, 0xff);
  a->send(garbage);
  a->flush();
  std::vector<Block> keys(1);
  std::vector<std::uint8_t> choices{1};
  EXPECT_THROW(ot::base_ot_receive(*b, choices, keys), FormatError);
  std::vector<std::uint8_t> bad{2};
  EXPECT_THROW(ot::base_ot_receive(*b, bad, keys), Error);
}

struct Session {
  std::unique_ptr<two_party::Channel> a, b;
  std::unique_ptr<ot::OtExtensionSender> sender;
  std::unique_ptr<ot::OtExtensionReceiver> receiver;
  Session() {
    auto [x, y] = two_party::make_memory_channel_pair(5000ms);
    a = std::move(x);
    b = std::move(y);
    sender = std::make_unique<ot::OtExtensionSender>(*a);
    receiver = std::make_unique<ot::OtExtensionReceiver>(*b);
  }
};

TEST(OtExtension, RandomCorrelatedAndChosenOverOneSession) {
  Session session;
  std::mt19937_64 rng(2);
  for (std::size_t n : {1u, 127u, 128u, 129u, 10000u}) {
    SCOPED_TRACE(n);
    const auto choices = random_choices(rng, n);
    {
      std::vector<Block> out0(n), out1(n), out(n);
      std::thread s([&] { session.sender->random(out0, out1); });
      session.receiver->random(choices, out);
      s.join();
      for (std::size_t j = 0; j < n; ++j) {
        ASSERT_EQ(out[j], choices[j] ? out1[j] : out0[j]) << j;
        ASSERT_NE(out[j], choices[j] ? out0[j] : out1[j]) << j;
      }
    }
    {
      const Block delta{rng(), rng()};
      std::vector<Block> out0(n), out(n);
      std::thread s([&] { session.sender->correlated(delta, out0); });
      session.receiver->correlated(choices, out);
      s.join();
      for (std::size_t j = 0; j < n; ++j) ASSERT_EQ(out[j], choices[j] ? out0[j] ^ delta : out0[j]) << j;
    }
    {
      std::vector<Block> m0(n), m1(n), out(n);
      for (std::size_t j = 0; j < n; ++j) {
        m0[j] = {rng(), rng()};
        m1[j] = {rng(), rng()};
      }
      std::thread s([&] { session.sender->chosen(m0, m1); });
      session.receiver->chosen(choices, out);
      s.join();
      for (std::size_t j = 0; j < n; ++j) ASSERT_EQ(out[j], choices[j] ? m1[j] : m0[j]) << j;
    }
  }
}

// Fraction of one bits in a byte string.
double ones_fraction(const std::vector<std::uint8_t>& bytes) {
  std::size_t ones = 0;
  for (auto b : bytes) ones += static_cast<std::size_t>(__builtin_popcount(b));
  return static_cast<double>(ones) / (8.0 * static_cast<double>(bytes.size()));
}

// The sender sees only the receiver's transcript: with all-0 and with all-1 choices it is
// balanced and the two transcripts agree nowhere beyond chance, so the choices cannot be read
// from it. (Bit frequencies within 6 standard deviations of 1/2.)
TEST(OtExtension, ReceiverTranscriptHidesTheChoices) {
  const std::size_t n = 4096;
  std::vector<std::vector<std::uint8_t>> transcripts;
  for (std::uint8_t bit : {0, 1}) {
    auto [x, y] = two_party::make_memory_channel_pair(5000ms);
    RecordingChannel recorded(*y);
    ot::OtExtensionSender sender(*x);
    ot::OtExtensionReceiver receiver(recorded);
    const std::vector<std::uint8_t> choices(n, bit);
    std::vector<Block> out0(n), out1(n), out(n);
    std::thread s([&] { sender.random(out0, out1); });
    receiver.random(choices, out);
    s.join();
    transcripts.push_back(recorded.sent);
  }
  ASSERT_EQ(transcripts[0].size(), transcripts[1].size());
  const double bits = 8.0 * static_cast<double>(transcripts[0].size());
  const double tolerance = 6 * 0.5 / std::sqrt(bits);
  EXPECT_NEAR(ones_fraction(transcripts[0]), 0.5, tolerance);
  EXPECT_NEAR(ones_fraction(transcripts[1]), 0.5, tolerance);
  std::vector<std::uint8_t> difference(transcripts[0].size());
  for (std::size_t i = 0; i < difference.size(); ++i) difference[i] = transcripts[0][i] ^ transcripts[1][i];
  EXPECT_NEAR(ones_fraction(difference), 0.5, tolerance);
}

// The receiver sees the sender's transcript (the chosen-OT pads): what it can compute for the
// message it did not choose (pad XOR its own key) is uncorrelated with that message.
TEST(OtExtension, SenderTranscriptHidesTheOtherMessage) {
  const std::size_t n = 4096;
  std::mt19937_64 rng(3);
  const auto choices = random_choices(rng, n);
  std::vector<Block> m0(n), m1(n), out(n);
  for (std::size_t j = 0; j < n; ++j) {
    m0[j] = {rng(), rng()};
    m1[j] = {rng(), rng()};
  }
  auto [x, y] = two_party::make_memory_channel_pair(5000ms);
  RecordingChannel recorded(*x);
  ot::OtExtensionSender sender(recorded);
  ot::OtExtensionReceiver receiver(*y);
  std::thread s([&] { sender.chosen(m0, m1); });
  receiver.chosen(choices, out);
  s.join();
  // The pads are the last 2n blocks the sender sent.
  const std::size_t pad_offset = recorded.sent.size() - 2 * n * sizeof(Block);
  std::vector<std::uint8_t> guess_error;
  for (std::size_t j = 0; j < n; ++j) {
    Block pad_other;
    std::memcpy(&pad_other, recorded.sent.data() + pad_offset + (2 * j + (1 - choices[j])) * sizeof(Block), sizeof(Block));
    Block pad_own;
    std::memcpy(&pad_own, recorded.sent.data() + pad_offset + (2 * j + choices[j]) * sizeof(Block), sizeof(Block));
    const Block own_key = pad_own ^ out[j];  // H(t_j) as the receiver knows it
    const Block guess = pad_other ^ own_key;
    const Block other = choices[j] ? m0[j] : m1[j];
    const Block error = guess ^ other;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(&error);
    guess_error.insert(guess_error.end(), bytes, bytes + sizeof(Block));
  }
  const double bits = 8.0 * static_cast<double>(guess_error.size());
  EXPECT_NEAR(ones_fraction(guess_error), 0.5, 6 * 0.5 / std::sqrt(bits));
}

TEST(OtExtension, BadChoicesAreRefusedBeforeSending) {
  Session session;
  std::vector<std::uint8_t> choices{0, 1, 2};
  std::vector<Block> out(3);
  EXPECT_THROW(session.receiver->random(choices, out), Error);
  EXPECT_EQ(session.b->bytes_sent(), 0u);
  std::vector<Block> short_out(2);
  EXPECT_THROW(session.receiver->random(std::vector<std::uint8_t>{0, 1, 0}, short_out), Error);
}

TEST(OtExtension, SilentSenderIsAPeerError) {
  auto [x, y] = two_party::make_memory_channel_pair(200ms);
  ot::OtExtensionSender sender(*x);
  const auto start = std::chrono::steady_clock::now();
  std::vector<Block> out0(10), out1(10);
  EXPECT_THROW(sender.random(out0, out1), PeerError);  // waits for the receiver's base-OT point
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

}  // namespace
