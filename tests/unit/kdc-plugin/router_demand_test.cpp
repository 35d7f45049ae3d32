// tests/unit/kdc-plugin/router_demand_test.cpp - the crypto router's pool levels
// (kdc-plugin/router/nonces/demand.h): pool_low and pool_high while few seals come, the last
// second's seals under load (or the open second's rate so far, from a tenth of it on), within
// the capacity, and back to the defaults once seals stop.

#include <gtest/gtest.h>

#include "nonces/demand.h"

namespace {

constexpr size_t kLow = 16, kHigh = 96, kCapacity = 1536;

// `count` nonces taken evenly over the window starting at `start`. The window is then whole:
// ask about it at its last moment, or later.
void take_over_window(nonce_demand& demand, uint64_t start, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) nonce_demand_note(&demand, start + i * NONCE_DEMAND_WINDOW_MS / count);
}

TEST(RouterNonceDemand, FewSealsKeepTheConfiguredLevels) {
  nonce_demand demand{};
  EXPECT_EQ(nonce_demand_target(&demand, 0, kHigh, kCapacity), kHigh);
  EXPECT_EQ(nonce_demand_floor(&demand, 0, kLow, kHigh, kCapacity), kLow);
  take_over_window(demand, 0, 50);
  take_over_window(demand, 1000, 50);
  EXPECT_EQ(nonce_demand_target(&demand, 1999, kHigh, kCapacity), kHigh);
  EXPECT_EQ(nonce_demand_floor(&demand, 1999, kLow, kHigh, kCapacity), kLow);
}

TEST(RouterNonceDemand, LoadRaisesThePoolToTheLastSecondsSeals) {
  nonce_demand demand{};
  take_over_window(demand, 0, 800);
  take_over_window(demand, 1000, 700);
  EXPECT_EQ(nonce_demand_target(&demand, 1999, kHigh, kCapacity), 800u);
  EXPECT_EQ(nonce_demand_floor(&demand, 1999, kLow, kHigh, kCapacity), 200u);
  take_over_window(demand, 2000, 10);
  EXPECT_EQ(nonce_demand_target(&demand, 2500, kHigh, kCapacity), 700u);
}

TEST(RouterNonceDemand, AStormsFirstSecondRefillsAtItsOwnRate) {
  nonce_demand demand{};
  // 60 seals in the first 50 ms: too short a span to say anything of the rate.
  for (uint32_t i = 0; i < 60; ++i) nonce_demand_note(&demand, i * 50 / 60);
  EXPECT_EQ(nonce_demand_target(&demand, 50, kHigh, kCapacity), kHigh);
  EXPECT_EQ(nonce_demand_floor(&demand, 50, kLow, kHigh, kCapacity), kLow);
  // 200 seals in the first 250 ms of the window: 800 a second.
  for (uint32_t i = 60; i < 200; ++i) nonce_demand_note(&demand, 50 + (i - 60) * 200 / 140);
  EXPECT_EQ(nonce_demand_target(&demand, 250, kHigh, kCapacity), 800u);
  EXPECT_EQ(nonce_demand_floor(&demand, 250, kLow, kHigh, kCapacity), 200u);
  // The rate so far and the last whole window: the larger counts.
  take_over_window(demand, 1000, 100);
  EXPECT_EQ(nonce_demand_target(&demand, 1000, kHigh, kCapacity), 200u);
  nonce_demand demand_rising{};
  take_over_window(demand_rising, 0, 200);
  for (uint32_t i = 0; i < 300; ++i) nonce_demand_note(&demand_rising, 1000 + i);
  EXPECT_EQ(nonce_demand_target(&demand_rising, 1300, kHigh, kCapacity), 1000u);
  // At most the capacity, however fast the seals come.
  nonce_demand burst{};
  for (uint32_t i = 0; i < 1000; ++i) nonce_demand_note(&burst, i / 10);
  EXPECT_EQ(nonce_demand_target(&burst, 100, kHigh, kCapacity), kCapacity);
}

TEST(RouterNonceDemand, TheCapacityBoundsTheTarget) {
  nonce_demand demand{};
  take_over_window(demand, 0, 5000);
  nonce_demand_note(&demand, 1000);
  EXPECT_EQ(nonce_demand_target(&demand, 1000, kHigh, kCapacity), kCapacity);
  EXPECT_EQ(nonce_demand_floor(&demand, 1000, kLow, kHigh, kCapacity), kCapacity / 4);
}

TEST(RouterNonceDemand, WhenSealsStopThePoolsFallBackToTheDefaults) {
  nonce_demand demand{};
  take_over_window(demand, 0, 800);
  nonce_demand_note(&demand, 1000);
  EXPECT_EQ(nonce_demand_target(&demand, 1500, kHigh, kCapacity), 800u);
  // No seal for a whole window: the last count is stale, with or without a new seal.
  EXPECT_EQ(nonce_demand_target(&demand, 3000, kHigh, kCapacity), kHigh);
  EXPECT_EQ(nonce_demand_floor(&demand, 3000, kLow, kHigh, kCapacity), kLow);
  nonce_demand_note(&demand, 5000);
  EXPECT_EQ(nonce_demand_target(&demand, 5000, kHigh, kCapacity), kHigh);
}

}  // namespace
