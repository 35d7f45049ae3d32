// tests/unit/wire/two_server_messages_test.cpp: the frames between the two servers of a
// two-server cluster round-trip, and every malformed frame is refused.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "wire/two_server_messages.hpp"

namespace {

using namespace mpc::wire;

TEST(TwoServerMessages, RoundTrip) {
  TwoServerAnnounce announce;
  announce.job = 0x0102030405060708ull;
  announce.kind = TwoServerJobKind::LutPreprocessing;
  announce.client[0] = 7;
  announce.client[31] = 9;
  announce.request[5] = 3;
  announce.pool_epoch = 77;
  announce.pool_start = 1234567;
  announce.pool_entries = 160;
  const auto decoded = std::get<TwoServerAnnounce>(decode_two_server(encode_two_server(announce)));
  EXPECT_EQ(decoded.job, announce.job);
  EXPECT_EQ(decoded.kind, announce.kind);
  EXPECT_EQ(decoded.client, announce.client);
  EXPECT_EQ(decoded.request, announce.request);
  EXPECT_EQ(decoded.pool_epoch, announce.pool_epoch);
  EXPECT_EQ(decoded.pool_start, announce.pool_start);
  EXPECT_EQ(decoded.pool_entries, announce.pool_entries);

  TwoServerData data{42, {1, 2, 3, 4, 5}};
  const auto data_back = std::get<TwoServerData>(decode_two_server(encode_two_server(data)));
  EXPECT_EQ(data_back.job, 42u);
  EXPECT_EQ(data_back.bytes, data.bytes);

  TwoServerAbort abort{99, "the peer timed out"};
  const auto abort_back = std::get<TwoServerAbort>(decode_two_server(encode_two_server(abort)));
  EXPECT_EQ(abort_back.job, 99u);
  EXPECT_EQ(abort_back.reason, abort.reason);

  const std::vector<std::uint8_t> started = encode_two_server(TwoServerStarted{});
  EXPECT_EQ(started, (std::vector<std::uint8_t>{1, 4, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_TRUE(std::holds_alternative<TwoServerStarted>(decode_two_server(started)));
  auto started_trailing = started;
  started_trailing.push_back(0);
  EXPECT_THROW((void)decode_two_server(started_trailing), mpc::FormatError);
}

TEST(TwoServerMessages, MalformedFramesAreRefused) {
  const auto announce = encode_two_server(TwoServerAnnounce{});
  auto expect_refused = [](std::vector<std::uint8_t> frame) {
    EXPECT_THROW((void)decode_two_server(frame), mpc::FormatError);
  };
  expect_refused({});
  auto wrong_version = announce;
  wrong_version[0] = 2;
  expect_refused(wrong_version);
  auto unknown_type = announce;
  unknown_type[1] = 9;
  expect_refused(unknown_type);
  auto unknown_kind = announce;
  unknown_kind[10] = 7;
  expect_refused(unknown_kind);
  auto trailing = announce;
  trailing.push_back(0);
  expect_refused(trailing);
  auto truncated = announce;
  truncated.pop_back();
  expect_refused(truncated);
  auto abort = encode_two_server(TwoServerAbort{1, "x"});
  abort.push_back(1);
  expect_refused(abort);
}

TEST(TwoServerMessages, OversizedDataIsRefusedWhenEncoding) {
  TwoServerData data;
  data.bytes.resize(kMaxTwoServerDataBytes + 1);
  EXPECT_THROW((void)encode_two_server(data), mpc::FormatError);
}

}  // namespace
