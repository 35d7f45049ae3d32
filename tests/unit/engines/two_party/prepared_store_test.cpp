// tests/unit/engines/two_party/prepared_store_test.cpp: the bookkeeping of garblings prepared ahead
// of time. The store takes each entry out once, keeps within its byte budget by dropping the
// least recently used shape first and refuses an entry larger than the budget; the planner
// keeps two garblings ready per recently used shape, most recent first, as far as the budget
// holds them, and backs off after a failure; the preparation header round-trips and refuses
// malformed input.
#include <gtest/gtest.h>

#include <chrono>
#include <map>

#include "common/error.hpp"
#include "engines/two_party/preparation_header.hpp"
#include "engines/two_party/prepared_circuits.hpp"
#include "engines/two_party/prepared_store.hpp"

namespace {

using namespace mpc::two_party_engine;
using namespace std::chrono_literals;

struct Entry {
  std::uint64_t id = 0;
  std::size_t bytes = 0;
};

PreparedShape shape_of(const std::string& name, std::uint32_t data_bytes = 40) {
  PreparedShape shape;
  shape.key = mpc::wire::KeyId{name, 1, mpc::wire::KeyAlgorithm::Aes256CtsHmacSha1};
  shape.label_set = 77;
  shape.circuit = {mpc::wire::CircuitId::KrbEncryptAes256, data_bytes, 0};
  shape.secret = {100, 280};
  shape.public_bytes = data_bytes;
  return shape;
}

TEST(PreparedStore, AnEntryIsTakenOnce) {
  PreparedStore<Entry> store(1000);
  const auto a = shape_of("a");
  ASSERT_TRUE(store.put(a, {1, 10}).stored);
  ASSERT_TRUE(store.put(a, {2, 10}).stored);
  EXPECT_EQ(store.count(a), 2u);
  EXPECT_FALSE(store.take(a, 3).has_value());
  EXPECT_FALSE(store.take(shape_of("b"), 1).has_value());
  ASSERT_TRUE(store.take(a, 2).has_value());
  EXPECT_FALSE(store.take(a, 2).has_value());
  const auto oldest = store.take_oldest(a);
  ASSERT_TRUE(oldest.has_value());
  EXPECT_EQ(oldest->id, 1u);
  EXPECT_FALSE(store.take_oldest(a).has_value());
  EXPECT_EQ(store.bytes(), 0u);
  EXPECT_EQ(store.shapes(), 0u);
}

TEST(PreparedStore, TheLeastRecentlyUsedShapeIsDroppedFirst) {
  PreparedStore<Entry> store(100);
  const auto a = shape_of("a"), b = shape_of("b"), c = shape_of("c");
  ASSERT_TRUE(store.put(a, {1, 30}).stored);
  ASSERT_TRUE(store.put(b, {2, 30}).stored);
  ASSERT_TRUE(store.put(b, {3, 30}).stored);
  store.touch(a);  // a job of a ran: b is now the least recently used
  const auto added = store.put(c, {4, 30});
  ASSERT_TRUE(added.stored);
  ASSERT_EQ(added.dropped.size(), 1u);
  EXPECT_EQ(added.dropped[0], b);
  EXPECT_EQ(store.count(b), 0u);
  EXPECT_EQ(store.count(a), 1u);
  EXPECT_EQ(store.count(c), 1u);
  EXPECT_EQ(store.bytes(), 60u);
}

TEST(PreparedStore, AnEntryLargerThanTheBudgetDropsNothing) {
  PreparedStore<Entry> store(100);
  const auto a = shape_of("a");
  ASSERT_TRUE(store.put(a, {1, 60}).stored);
  const auto added = store.put(shape_of("b"), {2, 101});
  EXPECT_FALSE(added.stored);
  EXPECT_TRUE(added.dropped.empty());
  EXPECT_EQ(store.count(a), 1u);
  // A budget of zero keeps nothing.
  store.set_budget(0);
  EXPECT_EQ(store.entries(), 0u);
  EXPECT_FALSE(store.put(a, {3, 1}).stored);
}

TEST(PreparedStore, AShapeAloneMakesRoomFromItsOldestEntries) {
  PreparedStore<Entry> store(100);
  const auto a = shape_of("a");
  for (std::uint64_t id = 1; id <= 4; ++id) ASSERT_TRUE(store.put(a, {id, 40}).stored);
  EXPECT_EQ(store.count(a), 2u);
  EXPECT_FALSE(store.take(a, 2).has_value());
  EXPECT_TRUE(store.take(a, 4).has_value());
}

TEST(PreparedStore, DropIfAndUpdate) {
  PreparedStore<Entry> store(100);
  const auto a = shape_of("a"), b = shape_of("b");
  ASSERT_TRUE(store.put(a, {1, 10}).stored);
  ASSERT_TRUE(store.put(b, {2, 10}).stored);
  EXPECT_TRUE(store.update(a, 1, [](Entry& entry) { entry.bytes = 10; }));
  EXPECT_FALSE(store.update(a, 2, [](Entry&) {}));
  EXPECT_EQ(store.drop_if([&](const PreparedShape& shape, const Entry&) { return shape == b; }), 1u);
  EXPECT_EQ(store.count(b), 0u);
  EXPECT_EQ(store.count(a), 1u);
}

TEST(PreparationPlanner, KeepsTwoReadyPerRecentShapeMostRecentFirst) {
  PreparationPlanner planner;
  const auto a = shape_of("a"), b = shape_of("b");
  const auto now = PreparationPlanner::Clock::now();
  std::map<PreparedShape, std::size_t> held;
  const auto count = [&](const PreparedShape& shape) { return held[shape]; };
  EXPECT_FALSE(planner.next(count, 1000, now).has_value());  // no job ran yet
  planner.used(a, 10);
  planner.used(b, 10);
  EXPECT_EQ(planner.next(count, 1000, now), b);
  held[b] = 1;
  EXPECT_EQ(planner.next(count, 1000, now), b);
  held[b] = PreparationPlanner::kReadyPerShape;
  EXPECT_EQ(planner.next(count, 1000, now), a);
  held[a] = PreparationPlanner::kReadyPerShape;
  EXPECT_FALSE(planner.next(count, 1000, now).has_value());
  // A use (of a garbling) lowers the count: refilled.
  held[a] = 1;
  planner.used(a, 10);
  EXPECT_EQ(planner.next(count, 1000, now), a);
}

TEST(PreparationPlanner, ShapesBeyondTheBudgetAreNotPrepared) {
  PreparationPlanner planner;
  const auto a = shape_of("a"), b = shape_of("b"), c = shape_of("c");
  const auto now = PreparationPlanner::Clock::now();
  std::map<PreparedShape, std::size_t> held;
  const auto count = [&](const PreparedShape& shape) { return held[shape]; };
  planner.used(a, 30);
  planner.used(b, 60);  // two of b: 120, more than the budget
  planner.used(c, 10);
  held[c] = 2;
  // c (most recent) takes 20 of 100; b's 120 do not fit in the 80 left; a's 60 do.
  EXPECT_EQ(planner.next(count, 100, now), a);
  held[a] = 2;
  EXPECT_FALSE(planner.next(count, 100, now).has_value());
}

TEST(PreparationPlanner, AFailureHoldsTheShapeUntilItsNextUseAndPausesAll) {
  PreparationPlanner planner;
  const auto a = shape_of("a"), b = shape_of("b");
  const auto now = PreparationPlanner::Clock::now();
  const auto none = [](const PreparedShape&) { return std::size_t{0}; };
  planner.used(a, 10);
  planner.used(b, 10);
  planner.failed(b, now);
  EXPECT_FALSE(planner.next(none, 1000, now + 100ms).has_value());  // paused
  EXPECT_EQ(planner.next(none, 1000, now + 300ms), a);              // b waits for a use
  planner.used(b, 10);
  EXPECT_EQ(planner.next(none, 1000, now + 300ms), b);
  // Failures in a row back off longer.
  planner.failed(b, now);
  planner.failed(b, now);
  EXPECT_FALSE(planner.next(none, 1000, now + 400ms).has_value());
  EXPECT_TRUE(planner.next(none, 1000, now + 1100ms).has_value());
  planner.forget_if([&](const PreparedShape& shape) { return shape == a; });
  EXPECT_EQ(planner.shapes(), 1u);
}

TEST(PreparedCircuits, ForgettingAKeyOrItsOlderVersionsDropsGarblingsAndPlans) {
  PreparedCircuits prepared(1000);
  const auto a = shape_of("a"), b = shape_of("b");
  auto renewed = a;
  renewed.label_set = 78;
  ASSERT_TRUE(prepared.tables.put(a, {1, 10, 5, {}}).stored);
  ASSERT_TRUE(prepared.tables.put(renewed, {2, 10, 5, {}}).stored);
  ASSERT_TRUE(prepared.tables.put(b, {3, 10, 5, {}}).stored);
  prepared.planner.used(a, 10);
  // New labels for a's key: the old set's garblings go, the new set's stay.
  prepared.forget_key(a.key, 78);
  EXPECT_EQ(prepared.tables.count(a), 0u);
  EXPECT_EQ(prepared.tables.count(renewed), 1u);
  EXPECT_EQ(prepared.planner.shapes(), 0u);
  // Deleted: everything of the key goes; b's stay.
  prepared.forget_key(a.key);
  EXPECT_EQ(prepared.tables.count(renewed), 0u);
  EXPECT_EQ(prepared.tables.count(b), 1u);
  // A new version of b's key (rotation) drops b's garblings, not those of the new version.
  auto rotated = b;
  rotated.key.version = 2;
  ASSERT_TRUE(prepared.tables.put(rotated, {4, 10, 5, {}}).stored);
  prepared.forget_older_versions(rotated.key);
  EXPECT_EQ(prepared.tables.count(b), 0u);
  EXPECT_EQ(prepared.tables.count(rotated), 1u);
  prepared.tables.drop_shape(rotated);
  ASSERT_TRUE(prepared.tables.put(b, {3, 10, 5, {}}).stored);
  // A new garbler instance (server 1 restarted) drops every garbling of the old one.
  EXPECT_EQ(prepared.garbler_seen(5), 0u);  // b's maker
  EXPECT_EQ(prepared.garbler_seen(5), 0u);
  EXPECT_EQ(prepared.garbler_seen(6), 1u);
  EXPECT_EQ(prepared.tables.entries(), 0u);
}

TEST(PreparationHeader, RoundTripsAndRefusesMalformedInput) {
  PreparationHeader header;
  header.garbler = 0x1122334455667788ull;
  header.id = 42;
  header.stream_bytes = 8'000'000;
  header.shape = shape_of("krb/user@EXAMPLE.COM", 265);
  header.dropped = {shape_of("x"), shape_of("y", 56)};
  const auto encoded = encode_preparation_header(header);
  const auto decoded = decode_preparation_header(encoded);
  EXPECT_EQ(decoded.garbler, header.garbler);
  EXPECT_EQ(decoded.id, header.id);
  EXPECT_EQ(decoded.stream_bytes, header.stream_bytes);
  EXPECT_EQ(decoded.shape, header.shape);
  EXPECT_EQ(decoded.dropped, header.dropped);

  auto truncated = encoded;
  truncated.pop_back();
  EXPECT_THROW((void)decode_preparation_header(truncated), mpc::FormatError);
  auto trailing = encoded;
  trailing.push_back(0);
  EXPECT_THROW((void)decode_preparation_header(trailing), mpc::FormatError);
  auto magic = encoded;
  magic[0] ^= 1;
  EXPECT_THROW((void)decode_preparation_header(magic), mpc::FormatError);
  auto not_kerberos = header;
  not_kerberos.shape.circuit.id = mpc::wire::CircuitId::Aes128EncryptAnd32;
  EXPECT_THROW((void)decode_preparation_header(encode_preparation_header(not_kerberos)), mpc::FormatError);
  auto aes_key = header;
  aes_key.shape.key.algorithm = mpc::wire::KeyAlgorithm::Aes256;
  EXPECT_THROW((void)decode_preparation_header(encode_preparation_header(aes_key)), mpc::FormatError);
  auto no_garbler = header;
  no_garbler.garbler = 0;
  EXPECT_THROW((void)decode_preparation_header(encode_preparation_header(no_garbler)), mpc::FormatError);
  auto too_many = header;
  too_many.dropped.assign(kMaxDroppedPerHeader + 1, shape_of("z"));
  EXPECT_THROW((void)encode_preparation_header(too_many), mpc::Error);
}

}  // namespace
