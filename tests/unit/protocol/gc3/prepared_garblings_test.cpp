// Each server's store of the garblings made ahead (prepared_garblings.hpp): a garbling is taken
// out once, within the store's room and life, and a used garbling's table buffer serves the next.
#include "protocol/gc3/prepared_garblings.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <vector>

namespace mpc::gc3 {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

PreparedGarbling entry(std::size_t table_bytes) {
  PreparedGarbling garbling;
  garbling.program = {3, 265, 0};
  garbling.tables.resize(table_bytes);
  return garbling;
}

TEST(PreparedGarblings, TakenOnceWithinRoomAndLife) {
  PreparedGarblings store(1000, seconds(600));
  const auto now = Clock::now();
  EXPECT_TRUE(store.put(7, 1, entry(600), now));
  EXPECT_FALSE(store.put(7, 2, entry(600), now)) << "over the capacity";
  EXPECT_FALSE(store.put(7, 1, entry(10), now)) << "a second garbling under one batch";
  EXPECT_TRUE(store.put(7, 3, entry(400), now));
  EXPECT_EQ(store.bytes(), 1000u);
  ASSERT_TRUE(store.take(7, 1, now).has_value());
  EXPECT_FALSE(store.take(7, 1, now).has_value());
  EXPECT_FALSE(store.take(8, 3, now).has_value()) << "another epoch";
  EXPECT_FALSE(store.take(7, 3, now + seconds(600)).has_value()) << "expired";
  EXPECT_EQ(store.bytes(), 0u);
}

TEST(PreparedGarblings, ANewEpochDropsTheOldOnes) {
  PreparedGarblings store(1000, seconds(600));
  const auto now = Clock::now();
  store.keep_epoch(7);
  ASSERT_TRUE(store.put(7, 1, entry(100), now));
  store.keep_epoch(7);
  EXPECT_EQ(store.size(), 1u);
  store.keep_epoch(8);
  EXPECT_EQ(store.size(), 0u);
  EXPECT_EQ(store.bytes(), 0u);
}

// A used garbling's table buffer serves the next garbling it holds, the smallest that fits first,
// so the evaluator neither maps nor zeroes 10 MB per login; at most kSpareTableBuffers are kept,
// the largest.
TEST(PreparedGarblings, UsedTableBuffersServeTheNextGarblings) {
  PreparedGarblings store(1000, seconds(600));
  std::vector<std::uint8_t> small(600, 0xab), large(900, 0xcd);
  const std::uint8_t* small_data = small.data();
  const std::uint8_t* large_data = large.data();
  store.recycle(std::move(large));
  store.recycle(std::move(small));

  auto first = store.table_buffer(500);
  EXPECT_EQ(first.data(), small_data) << "not the smallest spare that fits";
  EXPECT_EQ(first.size(), 500u);
  auto second = store.table_buffer(500);
  EXPECT_EQ(second.data(), large_data);
  auto fresh = store.table_buffer(500);
  EXPECT_NE(fresh.data(), small_data);
  EXPECT_NE(fresh.data(), large_data);
  EXPECT_EQ(fresh.size(), 500u);

  store.recycle(std::move(first));
  auto too_small = store.table_buffer(700);
  EXPECT_NE(too_small.data(), small_data) << "a spare smaller than asked for";
  EXPECT_EQ(too_small.size(), 700u);
  EXPECT_EQ(store.table_buffer(600).data(), small_data) << "the recycled buffer's full size";

  // Spares of 100 to 500 bytes, each filled with its own byte; a new buffer is zeros.
  for (std::size_t i = 1; i <= PreparedGarblings::kSpareTableBuffers + 1; ++i)
    store.recycle(std::vector<std::uint8_t>(100 * i, static_cast<std::uint8_t>(i)));
  for (std::size_t i = PreparedGarblings::kSpareTableBuffers + 1; i > 1; --i)
    EXPECT_EQ(store.table_buffer(100 * i)[0], i);
  EXPECT_EQ(store.table_buffer(100)[0], 0) << "the smallest of five spares was kept";
}

}  // namespace
}  // namespace mpc::gc3
