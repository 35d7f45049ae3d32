// The leader's account of garblings prepared ahead (prepared_stock.hpp) and each server's store
// of them (prepared_garblings.hpp): what is prepared next, that a garbling is named once, and
// what is forgotten when.
#include <gtest/gtest.h>

#include <chrono>

#include "engines/three_party/prepared_garblings.hpp"
#include "engines/three_party/prepared_stock.hpp"

namespace mpc::three_party_engine {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

const jobs::KrbCircuitKey kEncrypt{wire::CircuitId::KrbEncryptAes256, 265, 0};
const jobs::KrbCircuitKey kDecrypt{wire::CircuitId::KrbDecryptAes256, 55, 0};
constexpr std::uint64_t kEncryptBytes = 6'072'344;
constexpr std::uint64_t kDecryptBytes = 1'421'496;

// Prepares whatever the stock asks for next, n times; the circuits it asked for.
std::vector<jobs::KrbCircuitKey> prepare(PreparedStock& stock, int n, Clock::time_point now, std::uint32_t& sequence) {
  std::vector<jobs::KrbCircuitKey> made;
  for (int i = 0; i < n; ++i) {
    const auto next = stock.next(now);
    if (!next) break;
    stock.preparing(++sequence, *next);
    EXPECT_FALSE(stock.next(now).has_value()) << "a second preparation while one runs";
    stock.prepared(sequence, true, now);
    made.push_back(*next);
  }
  return made;
}

TEST(PreparedStock, PreparesWhatRanLatelyMostRecentFirstUpToTwoEach) {
  PreparedStock stock(std::size_t{256} << 20);
  const auto now = Clock::now();
  EXPECT_FALSE(stock.next(now).has_value()) << "nothing ran yet";
  stock.used(kDecrypt, kDecryptBytes, now);
  stock.used(kEncrypt, kEncryptBytes, now);
  std::uint32_t sequence = 0;
  const auto made = prepare(stock, 10, now, sequence);
  ASSERT_EQ(made.size(), 4u);
  EXPECT_EQ(made[0], kEncrypt);
  EXPECT_EQ(made[1], kEncrypt);
  EXPECT_EQ(made[2], kDecrypt);
  EXPECT_EQ(made[3], kDecrypt);
  EXPECT_EQ(stock.ready_bytes(), 2 * kEncryptBytes + 2 * kDecryptBytes);
}

TEST(PreparedStock, EachGarblingIsNamedOnceAndRefilledAfterUse) {
  PreparedStock stock(std::size_t{256} << 20);
  const auto now = Clock::now();
  stock.used(kEncrypt, kEncryptBytes, now);
  std::uint32_t sequence = 0;
  prepare(stock, 2, now, sequence);
  const auto first = stock.take(kEncrypt, now);
  const auto second = stock.take(kEncrypt, now);
  ASSERT_TRUE(first && second);
  EXPECT_NE(*first, *second);
  EXPECT_FALSE(stock.take(kEncrypt, now).has_value());
  EXPECT_FALSE(stock.take(kDecrypt, now).has_value());
  EXPECT_EQ(stock.next(now), kEncrypt);
}

TEST(PreparedStock, TheBudgetBoundsWhatIsHeld) {
  PreparedStock stock(kEncryptBytes + kDecryptBytes);
  const auto now = Clock::now();
  stock.used(kDecrypt, kDecryptBytes, now);
  stock.used(kEncrypt, kEncryptBytes, now);
  std::uint32_t sequence = 0;
  // One encryption fits, a second does not; a decryption still does beside it.
  const auto made = prepare(stock, 10, now, sequence);
  ASSERT_EQ(made.size(), 2u);
  EXPECT_EQ(made[0], kEncrypt);
  EXPECT_EQ(made[1], kDecrypt);
  EXPECT_EQ(PreparedStock(0).next(now), std::nullopt);
}

TEST(PreparedStock, AFailedPreparationPausesPreparing) {
  PreparedStock stock(std::size_t{256} << 20);
  const auto now = Clock::now();
  stock.used(kEncrypt, kEncryptBytes, now);
  stock.preparing(1, kEncrypt);
  stock.prepared(1, false, now);
  EXPECT_EQ(stock.ready(), 0u);
  EXPECT_FALSE(stock.next(now + seconds(1)).has_value());
  stock.used(kEncrypt, kEncryptBytes, now + seconds(5));
  EXPECT_EQ(stock.next(now + PreparedStock::kPauseAfterFailure), kEncrypt);
}

TEST(PreparedStock, OldGarblingsAndOldDemandAreForgotten) {
  PreparedStock stock(std::size_t{256} << 20);
  const auto now = Clock::now();
  stock.used(kEncrypt, kEncryptBytes, now);
  std::uint32_t sequence = 0;
  prepare(stock, 1, now, sequence);
  EXPECT_FALSE(stock.take(kEncrypt, now + PreparedStock::kLife).has_value());
  EXPECT_FALSE(stock.next(now + PreparedStock::kDemandWindow).has_value());
}

TEST(PreparedStock, ClearForgetsTheReadyAndTheOneInPreparation) {
  PreparedStock stock(std::size_t{256} << 20);
  const auto now = Clock::now();
  stock.used(kEncrypt, kEncryptBytes, now);
  std::uint32_t sequence = 0;
  prepare(stock, 1, now, sequence);
  stock.preparing(++sequence, kEncrypt);
  stock.clear();
  stock.prepared(sequence, true, now);  // ended after the clear: not counted
  EXPECT_EQ(stock.ready(), 0u);
  EXPECT_FALSE(stock.take(kEncrypt, now).has_value());
}

PreparedGarbling entry(std::size_t table_bytes) {
  PreparedGarbling garbling;
  garbling.circuit = kEncrypt;
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
}  // namespace mpc::three_party_engine
