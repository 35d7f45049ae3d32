// tests/unit/protocol/lut2/dealer_messages_test.cpp: the lookup-table dealer's messages round-trip and
// every malformed frame is refused; the two servers' announcement carries the dealer's batch id.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "wire/dealer_messages.hpp"
#include "wire/two_server_messages.hpp"

namespace {

using namespace mpc::wire;
using mpc::lut2::Entry;

void expect_refused(const std::vector<std::uint8_t>& frame, const char* why) {
  SCOPED_TRACE(why);
  EXPECT_THROW((void)decode_dealer(frame), mpc::FormatError);
}

std::vector<Entry> sample_entries(std::size_t count) {
  std::vector<Entry> entries(count);
  for (std::size_t k = 0; k < count; ++k) {
    for (int w = 0; w < 4; ++w) entries[k].one_hot[w] = 0x0102030405060708ull * (k + 1) + static_cast<unsigned>(w);
    entries[k].mask = static_cast<std::uint8_t>(k * 37 + 5);
  }
  return entries;
}

TEST(DealerMessages, RoundTrip) {
  EXPECT_TRUE(std::holds_alternative<DealerHello>(decode_dealer(encode_dealer(DealerHello{}))));

  DealerBatchRequest request{0xfedcba9876543210ull, 8192};
  const auto request_back = std::get<DealerBatchRequest>(decode_dealer(encode_dealer(request)));
  EXPECT_EQ(request_back.request, request.request);
  EXPECT_EQ(request_back.count, request.count);

  DealerBatchSeed seed;
  seed.request = 17;
  seed.batch = 0x1122334455667788ull;
  seed.count = kMaxDealerBatchEntries;
  for (std::size_t i = 0; i < seed.seed.size(); ++i) seed.seed[i] = static_cast<std::uint8_t>(i * 7 + 1);
  const auto seed_back = std::get<DealerBatchSeed>(decode_dealer(encode_dealer(seed)));
  EXPECT_EQ(seed_back.request, seed.request);
  EXPECT_EQ(seed_back.batch, seed.batch);
  EXPECT_EQ(seed_back.count, seed.count);
  EXPECT_EQ(seed_back.seed, seed.seed);

  DealerBatchEntries entries;
  entries.batch = 99;
  entries.entries = sample_entries(3);
  const auto frame = encode_dealer(entries);
  EXPECT_EQ(frame.size(), 2u + 8 + 4 + 3 * kDealerEntryBytes);
  auto entries_back = std::get<DealerBatchEntries>(decode_dealer(frame));
  EXPECT_EQ(entries_back.batch, 99u);
  ASSERT_EQ(entries_back.entries.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(entries_back.entries[k].one_hot, entries.entries[k].one_hot) << k;
    EXPECT_EQ(entries_back.entries[k].mask, entries.entries[k].mask) << k;
  }

  DealerBatchRefused refused{5, "server 2 has not connected to the dealer"};
  const auto refused_back = std::get<DealerBatchRefused>(decode_dealer(encode_dealer(refused)));
  EXPECT_EQ(refused_back.request, 5u);
  EXPECT_EQ(refused_back.reason, refused.reason);
  // An over-long reason is cut, not refused: the answer still goes out.
  refused.reason.assign(5000, 'x');
  EXPECT_EQ(std::get<DealerBatchRefused>(decode_dealer(encode_dealer(refused))).reason.size(), kMaxDealerReasonBytes);
}

TEST(DealerMessages, EntriesUseTheSeedStreamLayout) {
  DealerBatchEntries entries;
  entries.batch = 1;
  entries.entries.resize(1);
  entries.entries[0].one_hot = {0x0807060504030201ull, 0, 0, 0xff00000000000000ull};
  entries.entries[0].mask = 0xab;
  const auto frame = encode_dealer(entries);
  ASSERT_EQ(frame.size(), 14u + 33);
  const std::uint8_t* entry = frame.data() + 14;
  for (int b = 0; b < 8; ++b) EXPECT_EQ(entry[b], b + 1);
  EXPECT_EQ(entry[31], 0xff);
  EXPECT_EQ(entry[32], 0xab);
}

TEST(DealerMessages, MalformedFramesAreRefused) {
  expect_refused({}, "empty");
  auto hello = encode_dealer(DealerHello{});
  auto wrong_version = hello;
  wrong_version[0] = 2;
  expect_refused(wrong_version, "version");
  auto unknown_type = hello;
  unknown_type[1] = 6;
  expect_refused(unknown_type, "type 6");
  unknown_type[1] = 0;
  expect_refused(unknown_type, "type 0");
  hello.push_back(0);
  expect_refused(hello, "hello with a body");

  const auto request = encode_dealer(DealerBatchRequest{1, 100});
  auto truncated = request;
  truncated.pop_back();
  expect_refused(truncated, "truncated request");
  auto trailing = request;
  trailing.push_back(0);
  expect_refused(trailing, "request with trailing byte");
  auto zero = request;
  for (int i = 10; i < 14; ++i) zero[i] = 0;
  expect_refused(zero, "request for zero entries");
  auto too_many = request;
  const std::uint32_t over = kMaxDealerBatchEntries + 1;
  for (int i = 0; i < 4; ++i) too_many[10 + i] = static_cast<std::uint8_t>(over >> (8 * i));
  expect_refused(too_many, "request over the batch limit");

  DealerBatchSeed seed;
  seed.batch = 3;
  seed.count = 10;
  const auto seed_frame = encode_dealer(seed);
  auto zero_batch = seed_frame;
  for (int i = 10; i < 18; ++i) zero_batch[i] = 0;
  expect_refused(zero_batch, "seed with batch id 0");
  auto seed_truncated = seed_frame;
  seed_truncated.pop_back();
  expect_refused(seed_truncated, "seed truncated");
  auto seed_trailing = seed_frame;
  seed_trailing.push_back(1);
  expect_refused(seed_trailing, "seed with trailing byte");

  DealerBatchEntries entries;
  entries.batch = 4;
  entries.entries = sample_entries(2);
  const auto entries_frame = encode_dealer(entries);
  auto short_entries = entries_frame;
  short_entries.pop_back();
  expect_refused(short_entries, "entries one byte short");
  auto long_entries = entries_frame;
  long_entries.insert(long_entries.end(), 33, 0);
  expect_refused(long_entries, "one entry more than counted");
  auto overcounted = entries_frame;
  overcounted[10] = 0xff;
  overcounted[11] = 0xff;
  overcounted[12] = 0xff;
  overcounted[13] = 0xff;
  expect_refused(overcounted, "a count far beyond the frame");
  auto no_entries = entries_frame;
  no_entries.resize(14);
  for (int i = 10; i < 14; ++i) no_entries[i] = 0;
  expect_refused(no_entries, "zero entries");
  auto entries_zero_batch = entries_frame;
  for (int i = 2; i < 10; ++i) entries_zero_batch[i] = 0;
  expect_refused(entries_zero_batch, "entries with batch id 0");

  auto refused = encode_dealer(DealerBatchRefused{1, "no"});
  auto refused_trailing = refused;
  refused_trailing.push_back(0);
  expect_refused(refused_trailing, "refusal with trailing byte");
  auto refused_long = refused;
  refused_long[10] = 0xff;  // claims a 65535-byte reason
  refused_long[11] = 0xff;
  expect_refused(refused_long, "refusal reason longer than the frame");
}

TEST(DealerMessages, InvalidMessagesAreNotEncoded) {
  EXPECT_THROW((void)encode_dealer(DealerBatchRequest{1, 0}), mpc::FormatError);
  EXPECT_THROW((void)encode_dealer(DealerBatchRequest{1, kMaxDealerBatchEntries + 1}), mpc::FormatError);
  DealerBatchSeed seed;
  seed.count = 1;
  EXPECT_THROW((void)encode_dealer(seed), mpc::FormatError);  // batch id 0
  DealerBatchEntries empty;
  empty.batch = 1;
  EXPECT_THROW((void)encode_dealer(empty), mpc::FormatError);
  DealerBatchEntries too_many;
  too_many.batch = 1;
  too_many.entries.resize(kMaxDealerBatchEntries + 1);
  EXPECT_THROW((void)encode_dealer(too_many), mpc::FormatError);
  // The largest batch fits the frame limit both sides read with.
  DealerBatchEntries largest;
  largest.batch = 1;
  largest.entries.resize(kMaxDealerBatchEntries);
  EXPECT_EQ(encode_dealer(largest).size(), kMaxDealerFrameBytes);
}

TEST(DealerMessages, AnnouncementCarriesTheDealerBatch) {
  TwoServerAnnounce announce;
  announce.job = 5;
  announce.kind = TwoServerJobKind::LutPreprocessing;
  announce.pool_epoch = 9;
  announce.pool_start = 4096;
  announce.pool_entries = 1024;
  announce.dealer_batch = 0xa5a5a5a5deadbeefull;
  const auto frame = encode_two_server(announce);
  const auto back = std::get<TwoServerAnnounce>(decode_two_server(frame));
  EXPECT_EQ(back.dealer_batch, announce.dealer_batch);
  EXPECT_EQ(back.pool_entries, 1024u);
  // Strict: a frame without the batch id (the layout before it) or with a byte more is refused.
  auto without = frame;
  without.resize(without.size() - 8);
  EXPECT_THROW((void)decode_two_server(without), mpc::FormatError);
  auto longer = frame;
  longer.push_back(0);
  EXPECT_THROW((void)decode_two_server(longer), mpc::FormatError);
  EXPECT_EQ(std::get<TwoServerAnnounce>(decode_two_server(encode_two_server(TwoServerAnnounce{}))).dealer_batch, 0u);
}

}  // namespace
