// tests/unit/engines/two_party/mask_labels_test.cpp: the labels of a record mask R between the two
// garbled-circuit servers. Server 2 ends with Z ^ R * delta for each bit, from stocked
// correlated OTs spent once each; a server 2 that names a spent range again is refused; either
// server's restart costs a fresh stock, never a wrong label.
#include "engines/two_party/mask_labels.hpp"

#include <gtest/gtest.h>

#include <future>
#include <random>

#include "common/error.hpp"
#include "test_bytes.hpp"

namespace mpc::two_party_engine {
namespace {

using gc2::Block;
using test::Bytes;

std::vector<std::uint8_t> random_bits(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint8_t> bits(n);
  for (auto& bit : bits) bit = static_cast<std::uint8_t>(rng() & 1);
  return bits;
}

struct Transfer {
  gc2::Labels zero;
  std::vector<std::uint8_t> first_bits;
  std::vector<std::uint8_t> second_bits;
};

Transfer transfer_of(std::mt19937_64& rng, std::size_t n) {
  return {gc2::zero_labels(n), random_bits(rng, n), random_bits(rng, n)};
}

// Runs one transfer; returns server 2's labels (or rethrows either side's error).
gc2::Labels run(MaskLabelStock& first, MaskLabelStock& second, const gc2::Garbler& garbler, const Transfer& t) {
  auto [one, two] = two_party::make_memory_channel_pair(std::chrono::milliseconds(5000));
  auto sent = std::async(std::launch::async, [&, channel = one.get()] {
    first.send(*channel, garbler, t.zero.span(), t.first_bits);
    channel->flush();
  });
  gc2::Labels labels = second.receive(*two, t.second_bits);
  sent.get();
  return labels;
}

void expect_labels_of_r(const gc2::Labels& labels, const Transfer& t, const Block& delta) {
  ASSERT_EQ(labels.size(), t.zero.size());
  for (std::size_t j = 0; j < labels.size(); ++j) {
    Block expected = t.zero[j];
    if ((t.first_bits[j] ^ t.second_bits[j]) != 0) expected ^= delta;
    ASSERT_TRUE(labels[j] == expected) << "bit " << j;
  }
}

TEST(MaskLabels, ServerTwoGetsTheLabelOfEachBitOfR) {
  std::mt19937_64 rng(1);
  const gc2::Garbler garbler;
  MaskLabelStock first, second;
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{8 * 300}}) {
    const Transfer t = transfer_of(rng, n);
    expect_labels_of_r(run(first, second, garbler, t), t, garbler.delta());
  }
  // One stock served all three: the base OTs ran once.
  EXPECT_EQ(first.stocks_made(), 1u);
  EXPECT_EQ(second.stocks_made(), 1u);
  // A job larger than what is left makes a fresh stock of its own size.
  const Transfer big = transfer_of(rng, MaskLabelStock::kStockOts);
  expect_labels_of_r(run(first, second, garbler, big), big, garbler.delta());
  EXPECT_EQ(first.stocks_made(), 2u);
}

TEST(MaskLabels, EitherServerRestartingCostsAFreshStock) {
  std::mt19937_64 rng(2);
  const gc2::Garbler garbler;
  auto first = std::make_unique<MaskLabelStock>();
  auto second = std::make_unique<MaskLabelStock>();
  Transfer t = transfer_of(rng, 64);
  expect_labels_of_r(run(*first, *second, garbler, t), t, garbler.delta());
  first = std::make_unique<MaskLabelStock>();  // server 1 restarted (same delta for the check)
  t = transfer_of(rng, 64);
  expect_labels_of_r(run(*first, *second, garbler, t), t, garbler.delta());
  EXPECT_EQ(second->stocks_made(), 2u);
  second = std::make_unique<MaskLabelStock>();  // server 2 restarted
  t = transfer_of(rng, 64);
  expect_labels_of_r(run(*first, *second, garbler, t), t, garbler.delta());
  EXPECT_EQ(first->stocks_made(), 2u);
}

// Server 2 spending a correlated OT twice would learn both messages of an OT, so delta: a
// server 2 that names a range it named before is refused before server 1 sends a label.
TEST(MaskLabels, ARangeNamedTwiceIsRefused) {
  std::mt19937_64 rng(3);
  const gc2::Garbler garbler;
  MaskLabelStock first, second;
  const Transfer t = transfer_of(rng, 128);
  (void)run(first, second, garbler, t);
  // A server 2 that asks again for the range [0, 128) of the stock just used. Its stock id is
  // the one server 1 holds: the honest second's first message named it.
  auto [one, two] = two_party::make_memory_channel_pair(std::chrono::milliseconds(2000));
  std::uint64_t stock = 0;
  {
    // Learn the stock's id as server 2 would send it, by a fresh honest job's first message.
    MaskLabelStock probe_first;
    auto [a, b] = two_party::make_memory_channel_pair(std::chrono::milliseconds(2000));
    auto asked = std::async(std::launch::async, [&, channel = b.get()] {
      try {
        (void)second.receive(*channel, t.second_bits);
      } catch (const Error&) {
      }
    });
    std::uint8_t bytes[8];
    a->receive(bytes);
    for (int i = 0; i < 8; ++i) stock |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
    a.reset();
    asked.wait();
  }
  ASSERT_NE(stock, 0u);
  auto served = std::async(std::launch::async, [&, channel = one.get()] {
    first.send(*channel, garbler, t.zero.span(), t.first_bits);
  });
  std::uint8_t message[8 + 4 + 16] = {};
  for (int i = 0; i < 8; ++i) message[i] = static_cast<std::uint8_t>(stock >> (8 * i));
  two->send(message);
  two->flush();
  EXPECT_THROW(served.get(), PeerError);
}

}  // namespace
}  // namespace mpc::two_party_engine
