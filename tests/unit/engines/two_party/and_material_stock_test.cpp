// tests/unit/engines/two_party/and_material_stock_test.cpp: the AND material a two-server cluster of
// security = "active" makes ahead. An epoch's batches share one OT-extension state, so a batch
// the follower starts while its previous one still ends on another thread (the standing pair's
// thread at a switch to serving) waits for it; the material of both is then correct: MACs
// under the peer's delta, z = x y.
#include "engines/two_party/and_material_stock.hpp"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "common/error.hpp"

namespace mpc::two_party_engine {
namespace {

using namespace std::chrono_literals;
using two_party::Block;

constexpr std::uint64_t kEpoch = 77;
constexpr std::uint64_t kBatch = 1024;

bool authenticated(const auth2::AuthBit& own, const auth2::AuthBit& peers, const Block& peer_delta) {
  return own.mac == (peers.key ^ (own.bit ? peer_delta : Block{}));
}

// Both servers' entries [start, start + count) of `epoch` are correlated as authenticated
// garbling needs.
void expect_correct_material(AndMaterialStock& first, AndMaterialStock& second, std::uint64_t count,
                             std::uint64_t epoch = kEpoch, std::uint64_t start = 0) {
  auto [one, two] = two_party::make_memory_channel_pair(3000ms);
  auto taken_second = std::async(std::launch::async, [&, channel = two.get()] {
    return second.take(*channel, epoch, start, count, 0ms);
  });
  auto a = first.take(*one, epoch, start, count, 0ms);
  auto b = taken_second.get();
  const Block delta_first = a.session.delta(), delta_second = b.session.delta();
  ASSERT_EQ(a.material.size(), count);
  ASSERT_EQ(b.material.size(), count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto& p = a.material[i];
    const auto& q = b.material[i];
    for (const auto& [own, peers] : {std::pair{p.triple.x, q.triple.x}, std::pair{p.triple.y, q.triple.y},
                                     std::pair{p.triple.z, q.triple.z}, std::pair{p.lambda, q.lambda}}) {
      ASSERT_TRUE(authenticated(own, peers, delta_second)) << "entry " << i;
      ASSERT_TRUE(authenticated(peers, own, delta_first)) << "entry " << i;
    }
    ASSERT_EQ((p.triple.x.bit ^ q.triple.x.bit) & (p.triple.y.bit ^ q.triple.y.bit), p.triple.z.bit ^ q.triple.z.bit)
        << "entry " << i;
  }
}

TEST(AndMaterialStock, ABatchStartedWhileTheOneBeforeStillRunsWaitsForIt) {
  AndMaterialStock leader(0), follower(1);
  leader.reset(kEpoch);
  follower.reset(kEpoch);
  auto [to_follower_1, to_leader_1] = two_party::make_memory_channel_pair(3000ms);
  auto [to_follower_2, to_leader_2] = two_party::make_memory_channel_pair(3000ms);
  // The leader runs its batches in turn, as it announces them.
  auto led = std::async(std::launch::async, [&] {
    leader.preprocess(*to_follower_1, kEpoch, 0, kBatch);
    leader.preprocess(*to_follower_2, kEpoch, kBatch, kBatch);
  });
  // The follower's second batch starts on another thread while its first runs.
  auto first = std::async(std::launch::async, [&] { follower.preprocess(*to_leader_1, kEpoch, 0, kBatch); });
  std::this_thread::sleep_for(20ms);
  auto second = std::async(std::launch::async, [&] { follower.preprocess(*to_leader_2, kEpoch, kBatch, kBatch); });
  EXPECT_NO_THROW(first.get());
  EXPECT_NO_THROW(second.get());
  EXPECT_NO_THROW(led.get());
  expect_correct_material(leader, follower, 2 * kBatch);
}

TEST(AndMaterialStock, ABatchWaitingForItsPredecessorStopsWhenTheEpochEnds) {
  AndMaterialStock follower(1);
  follower.reset(kEpoch);
  auto [to_follower, to_leader] = two_party::make_memory_channel_pair(3000ms);
  const auto started = std::chrono::steady_clock::now();
  auto waiting = std::async(std::launch::async, [&] { follower.preprocess(*to_leader, kEpoch, kBatch, kBatch); });
  std::this_thread::sleep_for(50ms);
  follower.reset(kEpoch + 1);
  try {
    waiting.get();
    FAIL() << "a batch of an epoch left ran";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("pool epoch this server has left"), std::string::npos) << error.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
}

TEST(AndMaterialStock, ABatchOfEntriesAlreadyMadeIsRefused) {
  AndMaterialStock leader(0), follower(1);
  leader.reset(kEpoch);
  follower.reset(kEpoch);
  auto [to_follower, to_leader] = two_party::make_memory_channel_pair(3000ms);
  auto led = std::async(std::launch::async, [&] { leader.preprocess(*to_follower, kEpoch, 0, kBatch); });
  follower.preprocess(*to_leader, kEpoch, 0, kBatch);
  led.get();
  auto [again, unused] = two_party::make_memory_channel_pair(3000ms);
  try {
    follower.preprocess(*again, kEpoch, 0, kBatch);
    FAIL() << "entries 0.. were made twice";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("again"), std::string::npos) << error.what();
  }
}

// Both servers make batches [0, kBatch) and [kBatch, 2 kBatch) of `epoch`.
void make_two_batches(AndMaterialStock& leader, AndMaterialStock& follower, std::uint64_t epoch) {
  for (std::uint64_t start : {std::uint64_t{0}, kBatch}) {
    auto [to_follower, to_leader] = two_party::make_memory_channel_pair(3000ms);
    auto led = std::async(std::launch::async, [&, channel = to_follower.get()] {
      leader.preprocess(*channel, epoch, start, kBatch);
    });
    follower.preprocess(*to_leader, epoch, start, kBatch);
    led.get();
  }
}

TEST(AndMaterialStock, EntriesMadeInTheEpochLeftAreStillTakenUntilTheEpochAfter) {
  AndMaterialStock leader(0), follower(1);
  leader.reset(kEpoch);
  follower.reset(kEpoch);
  make_two_batches(leader, follower, kEpoch);
  // A batch of the epoch failed; both start the next, and make some of it.
  leader.reset(kEpoch + 1);
  follower.reset(kEpoch + 1);
  EXPECT_TRUE(follower.holds_left_epoch(kEpoch));
  EXPECT_FALSE(follower.holds_left_epoch(kEpoch + 1));
  make_two_batches(leader, follower, kEpoch + 1);
  // Jobs of both epochs, each under its own epoch's deltas.
  expect_correct_material(leader, follower, kBatch / 2, kEpoch, kBatch);
  expect_correct_material(leader, follower, kBatch, kEpoch + 1, 0);
  {
    auto [one, two] = two_party::make_memory_channel_pair(3000ms);
    auto left = std::async(std::launch::async, [&, channel = two.get()] {
      return follower.take(*channel, kEpoch, 0, 1, 0ms).session.delta();
    });
    EXPECT_NE(left.get(), follower.take(*one, kEpoch + 1, kBatch, 1, 0ms).session.delta())
        << "the two epochs share a delta";
  }
  // No batch of the epoch left is made any more.
  auto [again, unused] = two_party::make_memory_channel_pair(3000ms);
  EXPECT_THROW(follower.preprocess(*again, kEpoch, 2 * kBatch, kBatch), Error);
  // The epoch after drops it.
  follower.reset(kEpoch + 2);
  auto [one, two] = two_party::make_memory_channel_pair(3000ms);
  EXPECT_THROW((void)follower.take(*two, kEpoch, kBatch / 2, 10, 0ms), two_party::PoolEmpty);
  expect_correct_material(leader, follower, 10, kEpoch + 1, kBatch + 1);  // still the epoch left
}

TEST(AndMaterialStock, AnEpochThatMadeNothingLeavesTheOneBeforeItKept) {
  AndMaterialStock leader(0), follower(1);
  leader.reset(kEpoch);
  follower.reset(kEpoch);
  make_two_batches(leader, follower, kEpoch);
  // The next epoch's first batch fails as well: the epoch after keeps the first one's entries.
  for (AndMaterialStock* stock : {&leader, &follower}) {
    stock->reset(kEpoch + 1);
    stock->reset(kEpoch + 2);
    EXPECT_TRUE(stock->holds_left_epoch(kEpoch));
    EXPECT_FALSE(stock->holds_left_epoch(kEpoch + 1));
  }
  expect_correct_material(leader, follower, kBatch, kEpoch, kBatch / 2);
}

TEST(AndMaterialStock, AJobWaitingForEntriesOfABatchThatFailedIsWokenByTheNewEpoch) {
  AndMaterialStock follower(1);
  follower.reset(kEpoch);
  auto [to_follower, to_leader] = two_party::make_memory_channel_pair(3000ms);
  const auto started = std::chrono::steady_clock::now();
  auto waiting = std::async(std::launch::async, [&] {
    return follower.take(*to_leader, kEpoch, 0, 10, 10000ms);
  });
  std::this_thread::sleep_for(50ms);
  follower.reset(kEpoch + 1);
  EXPECT_THROW((void)waiting.get(), two_party::PoolEmpty);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
}

}  // namespace
}  // namespace mpc::two_party_engine
