// tests/unit/protocol/gc2/stored_garbling_test.cpp: a garbling made ahead of time into memory and
// evaluated later from the kept stream gives the cleartext result, exactly as a live one; its
// stream is the live stream's size; garblings made ahead and online under one garbler never
// share a garbling number (the tweaks' high half); a kept stream cut short, padded or tampered
// is refused or evaluates wrong; a kept stream evaluates alike wherever it lies in memory; the
// memory channels refuse the direction they lack.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <span>
#include <thread>

#include "common/error.hpp"
#include "protocol/gc2/stored_garbling.hpp"
#include "protocol/two_party/buffer_channel.hpp"
#include "support/random_program.hpp"

namespace {

using namespace mpc::gc2;
using mpc::two_party::make_memory_channel_pair;
using mpc::rss3::testing::row_bits;
using mpc::two_party::RecordingChannel;
using mpc::two_party::ReplayChannel;

std::vector<std::uint8_t> xor_of(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  std::vector<std::uint8_t> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] ^ b[i];
  return out;
}

struct Case {
  mpc::circuits::Program program;
  std::vector<std::uint8_t> bits;      // every input row's values
  std::vector<std::uint8_t> expected;  // the cleartext outputs
};

Case random_case(std::mt19937_64& rng, std::size_t instances) {
  Case c;
  c.program = mpc::rss3::testing::random_program(rng, {});
  const auto words = mpc::rss3::testing::random_words(rng, c.program.num_inputs * ((instances + 63) / 64));
  c.bits = row_bits(words, c.program.num_inputs, instances);
  c.expected = row_bits(mpc::rss3::testing::evaluate_cleartext(c.program, words, instances), c.program.num_outputs,
                        instances);
  return c;
}

TEST(StoredGarbling, AGarblingMadeAheadEvaluatesToTheCleartextResult) {
  std::mt19937_64 rng(7);
  Garbler garbler;
  for (std::size_t instances : {1u, 2u, 33u}) {
    for (int trial = 0; trial < 4; ++trial) {
      const Case c = random_case(rng, instances);
      // Garbled before the inputs are known: only their zero labels.
      const Labels zero = zero_labels(c.bits.size());
      const GarblingAhead ahead = garble_ahead(garbler, c.program, instances, zero);
      EXPECT_EQ(ahead.stream.size(), garbled_bytes(c.program, instances));
      EXPECT_EQ(stored_garbling_number(ahead.stream), ahead.number);
      // The inputs arrive later: their active labels, then the kept stream.
      const Labels active = garbler_input_labels(garbler, c.bits, zero);
      const auto evaluated = evaluate_stored(c.program, instances, active, ahead.stream);
      EXPECT_EQ(xor_of(ahead.decoding, evaluated), c.expected) << instances << " instances, trial " << trial;
    }
  }
}

TEST(StoredGarbling, AKeptStreamEvaluatesAsTheLiveOneWould) {
  std::mt19937_64 rng(8);
  const Case c = random_case(rng, 5);
  Garbler garbler;
  const Labels zero = zero_labels(c.bits.size());
  const Labels active = garbler_input_labels(garbler, c.bits, zero);
  const GarblingAhead ahead = garble_ahead(garbler, c.program, 5, zero);
  // The same kept bytes through a live channel: the evaluator cannot tell them apart.
  auto [sender, receiver] = make_memory_channel_pair(std::chrono::milliseconds(2000));
  sender->send(ahead.stream);
  sender->flush();
  Labels live_outputs;
  const auto live = evaluate(c.program, 5, active, *receiver, live_outputs);
  EXPECT_EQ(live, evaluate_stored(c.program, 5, active, ahead.stream));
  EXPECT_EQ(xor_of(ahead.decoding, live), c.expected);
  // Wherever the kept bytes lie: the evaluator reads the tables in place where they are aligned
  // for its kernels and copies them otherwise.
  std::vector<std::uint8_t> room(ahead.stream.size() + 64);
  const std::size_t aligned = (64 - reinterpret_cast<std::uintptr_t>(room.data()) % 64) % 64;
  for (std::size_t offset = 0; offset < 16; ++offset) {
    const std::span<std::uint8_t> kept(room.data() + aligned + offset, ahead.stream.size());
    std::copy(ahead.stream.begin(), ahead.stream.end(), kept.begin());
    ReplayChannel replay(kept);
    Labels outputs;
    EXPECT_EQ(evaluate(c.program, 5, active, replay, outputs), live) << "stream at offset " << offset;
    EXPECT_EQ(replay.remaining(), 0u);
  }
}

TEST(StoredGarbling, GarblingsAheadAndOnlineNeverShareANumber) {
  std::mt19937_64 rng(9);
  const Case c = random_case(rng, 1);
  Garbler garbler;
  const Labels zero = zero_labels(c.bits.size());
  std::set<std::uint64_t> numbers;
  for (int round = 0; round < 5; ++round) {
    numbers.insert(garble_ahead(garbler, c.program, 1, zero).number);
    // An online garbling in between: its header carries the next number.
    RecordingChannel live;
    (void)garbler.garble(c.program, 1, zero, live);
    const auto stream = live.take();
    numbers.insert(stored_garbling_number(stream));
  }
  EXPECT_EQ(numbers.size(), 10u);
  EXPECT_EQ(garbler.garblings(), 10u);
}

TEST(StoredGarbling, AStreamOfTheWrongSizeIsRefused) {
  std::mt19937_64 rng(10);
  const Case c = random_case(rng, 1);
  Garbler garbler;
  const Labels zero = zero_labels(c.bits.size());
  const Labels active = garbler_input_labels(garbler, c.bits, zero);
  GarblingAhead ahead = garble_ahead(garbler, c.program, 1, zero);
  auto shorter = ahead.stream;
  shorter.pop_back();
  EXPECT_THROW((void)evaluate_stored(c.program, 1, active, shorter), mpc::PeerError);
  auto longer = ahead.stream;
  longer.push_back(0);
  EXPECT_THROW((void)evaluate_stored(c.program, 1, active, longer), mpc::PeerError);
  EXPECT_THROW((void)evaluate_stored(c.program, 1, active, std::vector<std::uint8_t>{}), mpc::PeerError);
  EXPECT_THROW((void)stored_garbling_number(std::vector<std::uint8_t>(7)), mpc::FormatError);
}

TEST(StoredGarbling, ATamperedStreamEvaluatesWrong) {
  std::mt19937_64 rng(11);
  Case c;
  do c = random_case(rng, 1);
  while (c.program.and_gates == 0);
  Garbler garbler;
  const Labels zero = zero_labels(c.bits.size());
  const Labels active = garbler_input_labels(garbler, c.bits, zero);
  GarblingAhead ahead = garble_ahead(garbler, c.program, 1, zero);
  ASSERT_EQ(xor_of(ahead.decoding, evaluate_stored(c.program, 1, active, ahead.stream)), c.expected);
  // Another garbling number changes every gate's tweak, so the outputs of ANDs come out as
  // random bits: over eight numbers, some output is wrong (all right: about 2^-8 at worst).
  int wrong = 0;
  for (int bit = 0; bit < 8; ++bit) {
    auto renumbered = ahead.stream;
    renumbered[0] ^= static_cast<std::uint8_t>(1 << bit);
    if (xor_of(ahead.decoding, evaluate_stored(c.program, 1, active, renumbered)) != c.expected) ++wrong;
  }
  EXPECT_GT(wrong, 0);
}

TEST(BufferChannels, EachRefusesTheDirectionItLacks) {
  RecordingChannel recording;
  const std::uint8_t bytes[3] = {1, 2, 3};
  recording.send(bytes);
  recording.send(bytes);
  EXPECT_EQ(recording.bytes_sent(), 6u);
  std::uint8_t out[1];
  EXPECT_THROW(recording.receive(out), mpc::Error);
  const auto kept = recording.take();
  ASSERT_EQ(kept.size(), 6u);
  EXPECT_EQ(recording.bytes_sent(), 0u);

  ReplayChannel replay(kept);
  std::uint8_t first[4];
  replay.receive(first);
  EXPECT_EQ(first[3], 1);
  EXPECT_EQ(replay.remaining(), 2u);
  EXPECT_THROW(replay.send(bytes), mpc::Error);
  std::uint8_t too_many[3];
  EXPECT_THROW(replay.receive(too_many), mpc::PeerError);
  EXPECT_THROW(replay.view(3), mpc::PeerError);
  const auto rest = replay.view(2);
  EXPECT_EQ(rest.data(), kept.data() + 4) << "a replay's view is its own bytes";
  EXPECT_EQ(replay.remaining(), 0u);
  auto [sender, receiver] = make_memory_channel_pair(std::chrono::milliseconds(100));
  sender->send(bytes);
  sender->flush();
  EXPECT_TRUE(receiver->view(3).empty()) << "a live channel only copies";
  std::uint8_t received[3];
  receiver->receive(received);
  EXPECT_EQ(received[2], 3) << "a view that gave nothing consumed nothing";
}

}  // namespace
