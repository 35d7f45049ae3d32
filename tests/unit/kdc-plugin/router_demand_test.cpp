// tests/unit/kdc-plugin/router_demand_test.cpp - the crypto router's pool levels
// (kdc-plugin/router/nonce_demand.h): pool_low and pool_high while few seals come, the last
// second's seals under load, within the capacity, and back to the defaults once seals stop.

#include <gtest/gtest.h>

#include "nonce_demand.h"

namespace {

constexpr size_t kLow = 16, kHigh = 96, kCapacity = 1536;

// `count` nonces taken evenly over the window starting at `start`.
void take_over_window(nonce_demand& demand, uint64_t start, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) nonce_demand_note(&demand, start + i * NONCE_DEMAND_WINDOW_MS / count);
}

TEST(RouterNonceDemand, FewSealsKeepTheConfiguredLevels) {
  nonce_demand demand{};
  EXPECT_EQ(nonce_demand_target(&demand, 0, kHigh, kCapacity), kHigh);
  EXPECT_EQ(nonce_demand_floor(&demand, 0, kLow, kHigh, kCapacity), kLow);
  take_over_window(demand, 0, 50);
  take_over_window(demand, 1000, 50);
  EXPECT_EQ(nonce_demand_target(&demand, 1500, kHigh, kCapacity), kHigh);
  EXPECT_EQ(nonce_demand_floor(&demand, 1500, kLow, kHigh, kCapacity), kLow);
}

TEST(RouterNonceDemand, LoadRaisesThePoolToTheLastSecondsSeals) {
  nonce_demand demand{};
  take_over_window(demand, 0, 800);
  // The first window is still open: nothing is known of it yet.
  EXPECT_EQ(nonce_demand_target(&demand, 999, kHigh, kCapacity), kHigh);
  take_over_window(demand, 1000, 700);
  EXPECT_EQ(nonce_demand_target(&demand, 1500, kHigh, kCapacity), 800u);
  EXPECT_EQ(nonce_demand_floor(&demand, 1500, kLow, kHigh, kCapacity), 200u);
  take_over_window(demand, 2000, 10);
  EXPECT_EQ(nonce_demand_target(&demand, 2500, kHigh, kCapacity), 700u);
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
