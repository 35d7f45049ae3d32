// tests/unit/engines/two_party/background_streams_test.cpp: the job streams' background priority
// (garblings prepared ahead of time): a background stream's frames leave only when no client
// job's frame waits; the first frame of a job the peer started is reported once; frames and
// aborts of a job this side has closed are dropped instead of opening a new inbox.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "engines/two_party/job_streams.hpp"
#include "wire/two_server_messages.hpp"

namespace {

using namespace mpc::two_party_engine;
using namespace std::chrono_literals;

std::vector<std::uint64_t> drain(JobStreams& streams) {
  std::vector<std::uint64_t> order;
  while (const auto* frame = streams.peek_outgoing()) {
    auto message = mpc::wire::decode_two_server(*frame);
    order.push_back(std::get<mpc::wire::TwoServerData>(message).job);
    streams.pop_outgoing();
  }
  return order;
}

TEST(BackgroundStreams, ClientFramesLeaveFirst) {
  JobStreams streams{[] {}, 2000ms, 1000ms};
  auto background = streams.open(7, StreamPriority::Background);
  const std::vector<std::uint8_t> bytes(3 * kStreamFrameBytes);
  background->send(bytes);  // three frames queued first, before the client job started
  background->flush();
  auto client = streams.open(9);
  client->send(bytes);
  client->flush();
  EXPECT_EQ(drain(streams), (std::vector<std::uint64_t>{9, 9, 9, 7, 7, 7}));
  EXPECT_FALSE(streams.has_outgoing());
}

TEST(BackgroundStreams, AClientFrameQueuedWhileBackgroundFramesWaitGoesNext) {
  JobStreams streams{[] {}, 2000ms, 1000ms};
  auto background = streams.open(7, StreamPriority::Background);
  background->send(std::vector<std::uint8_t>(3 * kStreamFrameBytes));
  background->flush();
  auto client = streams.open(9);
  std::vector<std::uint64_t> order;
  // One background frame leaves; then a client frame arrives and passes the other two.
  const auto* frame = streams.peek_outgoing();
  ASSERT_NE(frame, nullptr);
  order.push_back(std::get<mpc::wire::TwoServerData>(mpc::wire::decode_two_server(*frame)).job);
  client->send(std::vector<std::uint8_t>{1});
  client->flush();  // queued between the background frame's peek and its pop
  streams.pop_outgoing();
  for (auto job : drain(streams)) order.push_back(job);
  EXPECT_EQ(order, (std::vector<std::uint64_t>{7, 9, 7, 7}));
}

TEST(BackgroundStreams, TheFirstFrameOfAJobThePeerStartedIsReportedOnce) {
  JobStreams streams{[] {}, 2000ms, 1000ms};
  EXPECT_TRUE(streams.deliver(5, {1, 2}));
  EXPECT_FALSE(streams.deliver(5, {3}));
  auto stream = streams.open(5, StreamPriority::Background);
  std::uint8_t out[3];
  stream->receive(out);
  EXPECT_EQ(out[2], 3);
  // A job this side opened itself: its peer's frames are no news.
  auto own = streams.open(6);
  EXPECT_FALSE(streams.deliver(6, {1}));
}

TEST(BackgroundStreams, FramesOfAClosedJobAreDropped) {
  JobStreams streams{[] {}, 100ms, 10000ms};
  {
    auto stream = streams.open(5);
  }
  // Late frames and an abort after the job ended open nothing: opening the number again
  // finds no frame waiting, and a receive times out.
  EXPECT_FALSE(streams.deliver(5, {1, 2, 3}));
  streams.peer_aborted(5, "late");
  auto again = streams.open(5);
  std::uint8_t out[1];
  try {
    again->receive(out);
    ADD_FAILURE() << "a late frame of a closed job was delivered";
  } catch (const mpc::PeerError& error) {
    EXPECT_NE(std::string(error.what()).find("sent nothing"), std::string::npos) << error.what();
  }
}

}  // namespace
