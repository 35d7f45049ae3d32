// tests/unit/protocol/ot/ot_test.cpp: base OTs (Masny-Rindal) and IKNP extension give the receiver the chosen message
// and only that one, over consecutive calls of one session; each party's transcript is
// independent of what the other keeps secret (bit-balance and chi-square tests); bad points,
// bad choices, mismatched calls and a silent peer are errors; the transpose matches its
// bit-by-bit definition.
#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <tuple>

#include "common/error.hpp"
#include "protocol/ot/base_ot.hpp"
#include "protocol/ot/bit_transpose.hpp"
#include "protocol/ot/ot_extension.hpp"
#include "support/tap_channel.hpp"

namespace {

using namespace mpc;
using ot::Block;
using test_support::TapChannel;
using namespace std::chrono_literals;

std::vector<std::uint8_t> random_choices(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  for (auto& c : out) c = rng() & 1;
  return out;
}

TEST(BaseOt, ReceiverGetsTheChosenKeyOnly) {
  auto [a, b] = two_party::make_memory_channel_pair(2000ms);
  std::mt19937_64 rng(1);
  const std::size_t n = 512;
  const auto choices = random_choices(rng, n);
  std::vector<Block> k0(n), k1(n), k(n);
  std::thread sender([&, channel = a.get()] { ot::base_ot_send(*channel, k0, k1); });
  ot::base_ot_receive(*b, choices, k);
  sender.join();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    EXPECT_EQ(k[i], choices[i] ? k1[i] : k0[i]) << i;
    EXPECT_NE(k[i], choices[i] ? k0[i] : k1[i]) << i;
  }
  // Every key differs from every other: the index and the points are hashed in.
  std::vector<Block> all(k0);
  all.insert(all.end(), k1.begin(), k1.end());
  std::sort(all.begin(), all.end(), [](const Block& x, const Block& y) { return std::tie(x.hi, x.lo) < std::tie(y.hi, y.lo); });
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
}

TEST(BaseOt, ReceiverRefusesBadPointsAndChoices) {
  std::vector<Block> keys(1);
  const std::vector<std::uint8_t> choices{1};
  // A point that does not decode, and the identity (it would make every product the identity).
  for (const std::uint8_t fill : {std::uint8_t{0xff}, std::uint8_t{0x00}}) {
    auto [a, b] = two_party::make_memory_channel_pair(500ms);
    const std::vector<std::uint8_t> point(32, fill);
    a->send(point);
    a->flush();
    EXPECT_THROW(ot::base_ot_receive(*b, choices, keys), FormatError) << int{fill};
  }
  auto [a, b] = two_party::make_memory_channel_pair(500ms);
  const std::vector<std::uint8_t> bad{2};
  EXPECT_THROW(ot::base_ot_receive(*b, bad, keys), Error);
  EXPECT_EQ(b->bytes_sent(), 0u);
}

// A receiver that sends `points` (its r_0, r_1 for one OT): the sender must refuse them.
void expect_sender_refuses(const std::array<std::uint8_t, 64>& points) {
  auto [a, b] = two_party::make_memory_channel_pair(2000ms);
  std::vector<Block> k0(1), k1(1);
  std::thread receiver([&, channel = b.get()] {
    channel->send(points);
    channel->flush();
  });
  EXPECT_THROW(ot::base_ot_send(*a, k0, k1), FormatError);
  receiver.join();
}

TEST(BaseOt, SenderRefusesBadPoints) {
  // A random valid point beside a non-canonical encoding, in either place.
  ASSERT_GE(sodium_init(), 0);
  std::array<std::uint8_t, 32> valid{};
  crypto_core_ristretto255_random(valid.data());
  std::array<std::uint8_t, 64> points{};
  std::fill(points.begin(), points.begin() + 32, 0xff);
  std::copy(valid.begin(), valid.end(), points.begin() + 32);
  expect_sender_refuses(points);
  std::copy(valid.begin(), valid.end(), points.begin());
  std::fill(points.begin() + 32, points.end(), 0xff);
  expect_sender_refuses(points);
}

TEST(BaseOt, TheReceiversPointsAreFreshAndDoNotShowItsChoice) {
  // The same choice twice gives different points; either choice gives two valid points.
  std::array<std::vector<std::uint8_t>, 3> sent;
  const std::array<std::uint8_t, 3> choice{0, 0, 1};
  for (int run = 0; run < 3; ++run) {
    auto [a, b] = two_party::make_memory_channel_pair(2000ms);
    TapChannel tap(*b);
    std::vector<Block> k0(1), k1(1), k(1);
    std::thread sender([&, channel = a.get()] { ot::base_ot_send(*channel, k0, k1); });
    ot::base_ot_receive(tap, std::vector<std::uint8_t>{choice[run]}, k);
    sender.join();
    EXPECT_EQ(k[0], choice[run] ? k1[0] : k0[0]);
    sent[run] = tap.sent;
    ASSERT_EQ(sent[run].size(), 64u);
    EXPECT_EQ(crypto_core_ristretto255_is_valid_point(sent[run].data()), 1);
    EXPECT_EQ(crypto_core_ristretto255_is_valid_point(sent[run].data() + 32), 1);
  }
  EXPECT_NE(sent[0], sent[1]);
}

TEST(BitTranspose, MatchesTheBitDefinition) {
  std::mt19937_64 rng(7);
  for (std::size_t n : {1u, 100u, 127u, 128u, 129u, 1000u, 8197u}) {
    SCOPED_TRACE(n);
    const std::size_t stride = ((n + 127) / 128) * 16;
    std::vector<std::uint8_t> columns(128 * stride);
    for (auto& byte : columns) byte = static_cast<std::uint8_t>(rng());
    std::vector<Block> rows(n + 1, Block{0x5a5a, 0xa5a5});  // the extra row must stay untouched
    ot::transpose_columns(columns.data(), stride, n, rows.data());
    for (std::size_t j = 0; j < n; ++j) {
      Block expected{};
      for (std::size_t i = 0; i < 128; ++i) {
        const std::uint64_t bit = (columns[i * stride + j / 8] >> (j % 8)) & 1;
        (i < 64 ? expected.lo : expected.hi) |= bit << (i % 64);
      }
      ASSERT_EQ(rows[j], expected) << j;
    }
    EXPECT_EQ(rows[n], (Block{0x5a5a, 0xa5a5}));
  }
  std::vector<std::uint8_t> columns(128 * 16);
  std::vector<Block> rows(129);
  EXPECT_THROW(ot::transpose_columns(columns.data(), 16, 129, rows.data()), Error);
}

struct Session {
  std::unique_ptr<two_party::Channel> a, b;
  std::unique_ptr<ot::OtExtensionSender> sender;
  std::unique_ptr<ot::OtExtensionReceiver> receiver;
  explicit Session(std::chrono::milliseconds timeout = 5000ms) {
    auto [x, y] = two_party::make_memory_channel_pair(timeout);
    a = std::move(x);
    b = std::move(y);
    sender = std::make_unique<ot::OtExtensionSender>(*a);
    receiver = std::make_unique<ot::OtExtensionReceiver>(*b);
  }
};

// Sizes around the 128-OT tile and the 8192-OT batch of the receiver's messages, all on one
// session: the PRGs and the hash counter must stay in step across calls.
TEST(OtExtension, RandomCorrelatedAndChosenOverOneSession) {
  Session session;
  std::mt19937_64 rng(2);
  for (std::size_t n : {1u, 127u, 128u, 129u, 0u, 10000u, 8192u, 16385u, 1u}) {
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
      for (std::size_t j = 1; j < n; ++j) ASSERT_NE(out0[j], out0[j - 1]) << j;
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

// Two sessions give unrelated outputs (fresh base OTs), and one session never repeats.
TEST(OtExtension, SessionsAndCallsAreFresh) {
  const std::size_t n = 256;
  std::vector<std::uint8_t> choices(n, 0);
  std::vector<Block> first(n), second(n), third(n);
  for (auto* out : {&first, &second}) {
    Session session;
    std::vector<Block> out0(n), out1(n);
    std::thread s([&] { session.sender->random(out0, out1); });
    session.receiver->random(choices, *out);
    s.join();
    if (out == &first) {  // a second call on the same session
      std::thread s2([&] { session.sender->random(out0, out1); });
      session.receiver->random(choices, third);
      s2.join();
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    EXPECT_NE(first[j], second[j]) << j;
    EXPECT_NE(first[j], third[j]) << j;
  }
}

// Fraction of one bits in a byte string.
double ones_fraction(const std::vector<std::uint8_t>& bytes) {
  std::size_t ones = 0;
  for (auto b : bytes) ones += static_cast<std::size_t>(__builtin_popcount(b));
  return static_cast<double>(ones) / (8.0 * static_cast<double>(bytes.size()));
}

// A chi-square statistic with k degrees of freedom passes below k + 6 sqrt(2k) (about six
// standard deviations: a false alarm rate far below one in a million runs).
double chi_square_limit(double k) { return k + 6 * std::sqrt(2 * k); }

// The IKNP columns u^i (the last 128 * n / 8 bytes of the receiver's transcript for n a
// multiple of 128 and at most one batch): u[i][j] = bit j of column i.
struct Columns {
  std::vector<std::uint8_t> bytes;
  std::size_t n;
  int bit(std::size_t i, std::size_t j) const { return (bytes[i * (n / 8) + j / 8] >> (j % 8)) & 1; }
};

// The receiver's transcript (what the sender sees) for one random-OT call with these choices.
std::vector<std::uint8_t> receiver_transcript(const std::vector<std::uint8_t>& choices) {
  auto [x, y] = two_party::make_memory_channel_pair(5000ms);
  TapChannel recorded(*y);
  ot::OtExtensionSender sender(*x);
  ot::OtExtensionReceiver receiver(recorded);
  const std::size_t n = choices.size();
  std::vector<Block> out0(n), out1(n), out(n);
  std::thread s([&] { sender.random(out0, out1); });
  receiver.random(choices, out);
  s.join();
  return recorded.sent;
}

// The u columns of a call of n OTs (one batch): n + 256 rows (the consistency check's
// sacrificed rows last), followed by the check's answer x, t (32 bytes).
Columns columns_of(const std::vector<std::uint8_t>& transcript, std::size_t n) {
  const std::size_t rows = n + 256;
  const std::size_t size = 128 * rows / 8;
  const auto end = transcript.end() - 32;
  return {std::vector<std::uint8_t>(end - static_cast<std::ptrdiff_t>(size), end), rows};
}

// The sender sees only the receiver's transcript. With all-0 and with all-1 choices: every
// bit is balanced, each OT's 128 column bits are Binomial(128, 1/2) (chi-square over the OTs),
// the byte values are uniform and the two runs' byte histograms agree (chi-square), and the
// two transcripts agree nowhere beyond chance. With random choices, no column bit agrees with
// the choice bit of its OT more often than chance. So the choices cannot be read from it.
TEST(OtExtension, ReceiverTranscriptHidesTheChoices) {
  const std::size_t n = 4096;
  std::vector<std::vector<std::uint8_t>> transcripts;
  std::vector<std::array<double, 256>> histograms;
  for (std::uint8_t bit : {0, 1}) {
    SCOPED_TRACE(int{bit});
    transcripts.push_back(receiver_transcript(std::vector<std::uint8_t>(n, bit)));
    const Columns u = columns_of(transcripts.back(), n);
    const double bits = 8.0 * static_cast<double>(u.bytes.size());
    EXPECT_NEAR(ones_fraction(u.bytes), 0.5, 6 * 0.5 / std::sqrt(bits));
    double per_ot = 0;  // sum over OTs of (ones - 64)^2 / 32, variance of Binomial(128, 1/2) = 32
    for (std::size_t j = 0; j < n; ++j) {
      int ones = 0;
      for (std::size_t i = 0; i < 128; ++i) ones += u.bit(i, j);
      per_ot += (ones - 64.0) * (ones - 64.0) / 32.0;
    }
    EXPECT_LT(per_ot, chi_square_limit(n));
    std::array<double, 256> histogram{};
    for (auto byte : u.bytes) histogram[byte] += 1;
    const double expected = static_cast<double>(u.bytes.size()) / 256;
    double uniform = 0;
    for (double count : histogram) uniform += (count - expected) * (count - expected) / expected;
    EXPECT_LT(uniform, chi_square_limit(255));
    histograms.push_back(histogram);
  }
  double homogeneity = 0;
  for (std::size_t v = 0; v < 256; ++v) {
    const double a = histograms[0][v], b = histograms[1][v];
    if (a + b > 0) homogeneity += (a - b) * (a - b) / (a + b);
  }
  EXPECT_LT(homogeneity, chi_square_limit(255));
  ASSERT_EQ(transcripts[0].size(), transcripts[1].size());
  std::vector<std::uint8_t> difference(transcripts[0].size());
  for (std::size_t i = 0; i < difference.size(); ++i) difference[i] = transcripts[0][i] ^ transcripts[1][i];
  const double bits = 8.0 * static_cast<double>(difference.size());
  EXPECT_NEAR(ones_fraction(difference), 0.5, 6 * 0.5 / std::sqrt(bits));

  std::mt19937_64 rng(11);
  const auto choices = random_choices(rng, n);
  const Columns u = columns_of(receiver_transcript(choices), n);
  double agree = 0;
  for (std::size_t i = 0; i < 128; ++i)
    for (std::size_t j = 0; j < n; ++j) agree += u.bit(i, j) == choices[j];
  const double total = 128.0 * n;
  EXPECT_NEAR(agree / total, 0.5, 6 * 0.5 / std::sqrt(total));
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
  TapChannel recorded(*x);
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

// Correlated OT: the receiver's view (its outputs and the sender's corrections) gives no hold
// on delta. Its guess of the value it did not get, out ^ correction, misses by
// H(t_j) ^ H(t_j ^ s): unbiased, and different for every OT (so not a fixed offset).
TEST(OtExtension, CorrelatedTranscriptHidesDelta) {
  const std::size_t n = 4096;
  std::mt19937_64 rng(5);
  const auto choices = random_choices(rng, n);
  const Block delta{rng(), rng()};
  auto [x, y] = two_party::make_memory_channel_pair(5000ms);
  TapChannel recorded(*x);
  ot::OtExtensionSender sender(recorded);
  ot::OtExtensionReceiver receiver(*y);
  std::vector<Block> out0(n), out(n);
  std::thread s([&] { sender.correlated(delta, out0); });
  receiver.correlated(choices, out);
  s.join();
  const std::size_t offset = recorded.sent.size() - n * sizeof(Block);
  std::vector<std::uint8_t> errors, consecutive;
  Block previous{};
  for (std::size_t j = 0; j < n; ++j) {
    Block correction;
    std::memcpy(&correction, recorded.sent.data() + offset + j * sizeof(Block), sizeof(Block));
    const Block other = choices[j] ? out0[j] : out0[j] ^ delta;
    const Block error = out[j] ^ correction ^ other;
    const Block step = error ^ previous;
    previous = error;
    const auto* e = reinterpret_cast<const std::uint8_t*>(&error);
    errors.insert(errors.end(), e, e + sizeof(Block));
    const auto* d = reinterpret_cast<const std::uint8_t*>(&step);
    if (j > 0) consecutive.insert(consecutive.end(), d, d + sizeof(Block));
  }
  const double bits = 8.0 * static_cast<double>(errors.size());
  EXPECT_NEAR(ones_fraction(errors), 0.5, 6 * 0.5 / std::sqrt(bits));
  EXPECT_NEAR(ones_fraction(consecutive), 0.5, 6 * 0.5 / std::sqrt(bits));
}

TEST(OtExtension, AuthenticatedBitsCarryTheSessionsOneDeltaOverEachJobsChannel) {
  auto [a, b] = two_party::make_memory_channel_pair(5000ms);
  std::mt19937_64 rng(33);
  ot::OtExtensionSender sender(*a, 0b10);
  ot::OtExtensionReceiver receiver(*b);
  std::vector<Block> keys(3000), macs(3000), keys2(100), macs2(100);
  const auto choices = random_choices(rng, keys.size()), choices2 = random_choices(rng, keys2.size());
  std::thread s([&] { sender.authenticated(keys); });
  receiver.authenticated(choices, macs);
  s.join();
  // The next call over another pair of channels (a later job's stream) continues the session.
  auto [c, d] = two_party::make_memory_channel_pair(5000ms);
  sender.use_channel(*c);
  receiver.use_channel(*d);
  std::thread s2([&] { sender.authenticated(keys2); });
  receiver.authenticated(choices2, macs2);
  s2.join();
  EXPECT_GT(d->bytes_sent(), 16u * keys2.size());  // the second call's u went over the new pair
  const Block delta = sender.delta();
  EXPECT_EQ(delta.lo & 3, 2u);
  // One delta across calls: mac = key ^ c * delta, and never the key of the other choice.
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(macs[i], keys[i] ^ (choices[i] ? delta : Block{})) << i;
    ASSERT_NE(macs[i], keys[i] ^ (choices[i] ? Block{} : delta)) << i;
  }
  for (std::size_t i = 0; i < keys2.size(); ++i) ASSERT_EQ(macs2[i], keys2[i] ^ (choices2[i] ? delta : Block{})) << i;
  EXPECT_THROW(ot::OtExtensionSender(*a, 4), Error);
}

TEST(OtExtension, BadChoicesAreRefusedBeforeSending) {
  Session session;
  std::vector<std::uint8_t> choices{0, 1, 2};
  std::vector<Block> out(3);
  EXPECT_THROW(session.receiver->random(choices, out), Error);
  EXPECT_THROW(session.receiver->correlated(choices, out), Error);
  EXPECT_THROW(session.receiver->chosen(choices, out), Error);
  EXPECT_THROW(session.receiver->random(std::vector<std::uint8_t>{0, 1, 0xff}, out), Error);
  EXPECT_EQ(session.b->bytes_sent(), 0u);
  std::vector<Block> short_out(2);
  EXPECT_THROW(session.receiver->random(std::vector<std::uint8_t>{0, 1, 0}, short_out), Error);
  std::vector<Block> a(3), b(2);
  EXPECT_THROW(session.sender->random(a, b), Error);
  EXPECT_THROW(session.sender->chosen(a, b), Error);
  EXPECT_EQ(session.a->bytes_sent(), 0u);
}

// A sender making another call than the receiver fails with a message naming both, instead
// of reading a desynchronised stream.
TEST(OtExtension, MismatchedCallsAreDetected) {
  for (bool same_kind : {true, false}) {
    Session session(1000ms);
    std::vector<std::uint8_t> choices(200, 1);
    std::vector<Block> out(200), out0(100), out1(100);
    std::string message;
    std::thread s([&] {
      try {
        session.sender->random(out0, out1);
      } catch (const PeerError&) {
        message = "peer error";
      } catch (const Error& error) {
        message = error.what();
      }
    });
    // Either way the receiver waits in vain: for the consistency check's challenge, or for
    // the pads.
    if (same_kind)
      EXPECT_THROW(session.receiver->random(choices, out), PeerError);
    else
      EXPECT_THROW(session.receiver->chosen(choices, out), PeerError);
    s.join();
    EXPECT_NE(message.find(same_kind ? "200 random OTs" : "200 chosen OTs"), std::string::npos) << message;
    EXPECT_NE(message.find("100 random"), std::string::npos) << message;
  }
}

TEST(OtExtension, SilentPeersArePeerErrors) {
  {
    auto [x, y] = two_party::make_memory_channel_pair(200ms);
    ot::OtExtensionSender sender(*x);
    const auto start = std::chrono::steady_clock::now();
    std::vector<Block> out0(10), out1(10);
    EXPECT_THROW(sender.random(out0, out1), PeerError);  // waits for the receiver's base-OT A
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  }
  {
    auto [x, y] = two_party::make_memory_channel_pair(200ms);
    ot::OtExtensionReceiver receiver(*y);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::uint8_t> choices(10, 0);
    std::vector<Block> out(10);
    EXPECT_THROW(receiver.chosen(choices, out), PeerError);  // waits for the sender's base-OT points
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  }
  {
    // After one call together the sender goes silent: the receiver's chosen OTs get no pads.
    Session session(200ms);
    std::vector<std::uint8_t> choices(300, 1);
    std::vector<Block> out(300), out0(300), out1(300);
    std::thread s([&] { session.sender->random(out0, out1); });
    session.receiver->random(choices, out);
    s.join();
    EXPECT_EQ(out[0], out1[0]);
    EXPECT_THROW(session.receiver->chosen(choices, out), PeerError);
  }
  {
    // The peer stops (here on a mismatched call) and its channel closes.
    auto [x, y] = two_party::make_memory_channel_pair(5000ms);
    ot::OtExtensionReceiver receiver(*y);
    std::thread s([&, channel = std::move(x)]() mutable {
      ot::OtExtensionSender sender(*channel);
      std::vector<Block> out0(1), out1(1);
      try {
        sender.random(out0, out1);
      } catch (const Error&) {
      }
      channel.reset();
    });
    std::vector<std::uint8_t> choices(1, 0);
    std::vector<Block> out(1);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(receiver.correlated(choices, out), PeerError);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
    s.join();
  }
}

// A receiver whose columns disagree on a choice bit (u flipped at one OT in half the columns:
// OT j looks chosen one way in those, the other way in the rest) gets, for OT j, a mix of its
// two messages that gives away the bits of s in the flipped columns. The consistency check
// refuses it, at every row tried; it passes only if s is 0 on all flipped columns or on all
// the others (probability 2^-63). (A flip in one column i alone changes nothing where s_i = 0:
// that is the one bit of s per flipped column a cheater may guess, at even odds.)
class FlippingChannel final : public two_party::Channel {
 public:
  FlippingChannel(two_party::Channel& inner, std::vector<std::size_t> at) : inner_(inner), at_(std::move(at)) {}
  void send(std::span<const std::uint8_t> bytes) override {
    std::vector<std::uint8_t> copy(bytes.begin(), bytes.end());
    for (std::size_t at : at_)
      if (at >= sent_ && at < sent_ + copy.size()) copy[at - sent_] ^= 0x10;
    sent_ += copy.size();
    inner_.send(copy);
  }
  void flush() override { inner_.flush(); }
  void receive(std::span<std::uint8_t> out) override { inner_.receive(out); }
  std::uint64_t bytes_sent() const override { return inner_.bytes_sent(); }
  void allow_extra_wait(std::chrono::milliseconds extra) override { inner_.allow_extra_wait(extra); }

 private:
  two_party::Channel& inner_;
  std::vector<std::size_t> at_;
  std::size_t sent_ = 0;
};

TEST(OtExtension, AReceiverWithInconsistentColumnsFailsTheCheck) {
  const std::size_t n = 1000;
  std::mt19937_64 rng(21);
  const auto choices = random_choices(rng, n);
  // Where u starts in the receiver's transcript: after its base-OT messages and the call word.
  const std::size_t stride = (n + 256 + 127) / 128 * 16;  // a column: whole 128-OT tiles
  const std::size_t u_start = receiver_transcript(choices).size() - 32 - 128 * stride;
  for (const std::size_t row : {std::size_t{4}, std::size_t{500}, std::size_t{996}, std::size_t{1100}}) {
    SCOPED_TRACE("row " + std::to_string(row));
    auto [x, y] = two_party::make_memory_channel_pair(5000ms);
    std::vector<std::size_t> flips;
    for (std::size_t column = 0; column < 128; column += 2) flips.push_back(u_start + column * stride + row / 8);
    FlippingChannel cheating(*y, flips);
    ot::OtExtensionSender sender(*x);
    ot::OtExtensionReceiver receiver(cheating);
    std::vector<Block> out0(n), out1(n), out(n);
    std::exception_ptr sender_error;
    std::thread s([&] {
      try {
        sender.correlated(Block{1, 2}, out0);
      } catch (...) {
        sender_error = std::current_exception();
      }
      x.reset();  // the receiver then fails waiting for the correction
    });
    try {
      receiver.correlated(choices, out);
    } catch (const Error&) {
    }
    s.join();
    ASSERT_TRUE(sender_error) << "the sender accepted inconsistent columns";
    try {
      std::rethrow_exception(sender_error);
    } catch (const PeerError& error) {
      EXPECT_NE(std::string(error.what()).find("consistency check"), std::string::npos) << error.what();
    }
  }
}

}  // namespace

