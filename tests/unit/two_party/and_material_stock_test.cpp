// tests/unit/two_party/and_material_stock_test.cpp: the AND material a two-server cluster of
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

// Both servers' entries [0, count) of kEpoch are correlated as authenticated garbling needs.
void expect_correct_material(AndMaterialStock& first, AndMaterialStock& second, std::uint64_t count) {
  auto [one, two] = two_party::make_memory_channel_pair(3000ms);
  auto taken_second = std::async(std::launch::async, [&, channel = two.get()] {
    return second.take(*channel, kEpoch, 0, count, 0ms);
  });
  auto a = first.take(*one, kEpoch, 0, count, 0ms);
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

}  // namespace
}  // namespace mpc::two_party_engine
