// The leader's account of garblings prepared ahead (prepared_stock.hpp): what is prepared next,
// that a garbling is named once, and what is forgotten when.
#include <gtest/gtest.h>

#include <chrono>

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

}  // namespace
}  // namespace mpc::three_party_engine
