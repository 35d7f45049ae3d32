// tests/unit/engines/two_party/job_streams_test.cpp: job streams carry each job's bytes in order over
// the frames the main thread relays, and a silent or aborting peer ends a receive with
// PeerError instead of a hang.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "common/error.hpp"
#include "engines/two_party/job_streams.hpp"
#include "wire/two_server_messages.hpp"

namespace {

using namespace mpc::two_party_engine;
using namespace std::chrono_literals;

// Two servers' stream tables with a relay thread standing in for their sockets: every frame
// one side queues is decoded and delivered to the other, as the two-party engine does.
struct StreamPair {
  JobStreams a{[] {}, 2000ms, 1000ms};
  JobStreams b{[] {}, 2000ms, 1000ms};
  std::atomic<bool> stop{false};
  std::thread relay{[this] {
    while (!stop) {
      bool moved = false;
      for (auto [from, to] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
        while (const auto* frame = from->peek_outgoing()) {
          moved = true;
          auto message = mpc::wire::decode_two_server(*frame);
          from->pop_outgoing();
          if (auto* data = std::get_if<mpc::wire::TwoServerData>(&message))
            to->deliver(data->job, std::move(data->bytes));
          else if (auto* abort = std::get_if<mpc::wire::TwoServerAbort>(&message))
            to->peer_aborted(abort->job, abort->reason);
        }
      }
      if (!moved) std::this_thread::sleep_for(1ms);
    }
  }};
  ~StreamPair() {
    stop = true;
    relay.join();
  }
};

TEST(JobStreams, BytesArriveInOrderAcrossFramesAndJobs) {
  StreamPair pair;
  std::mt19937_64 rng(5);
  std::vector<std::uint8_t> big(3 * kStreamFrameBytes + 12345);
  for (auto& byte : big) byte = static_cast<std::uint8_t>(rng());
  std::thread sender([&] {
    auto one = pair.a.open(1);
    auto two = pair.a.open(2);
    two->send(std::vector<std::uint8_t>{9, 8, 7});
    two->flush();
    one->send(big);
    one->flush();
    std::uint8_t reply = 0;
    one->receive({&reply, 1});
    EXPECT_EQ(reply, 0x5a);
    EXPECT_EQ(one->bytes_sent(), big.size());
  });
  auto one = pair.b.open(1);
  auto two = pair.b.open(2);
  std::vector<std::uint8_t> got(big.size());
  one->receive(got);
  EXPECT_EQ(got, big);
  std::vector<std::uint8_t> small(3);
  two->receive(small);
  EXPECT_EQ(small, (std::vector<std::uint8_t>{9, 8, 7}));
  const std::uint8_t reply = 0x5a;
  one->send({&reply, 1});
  one->flush();
  sender.join();
}

TEST(JobStreams, FramesBeforeOpenAreKept) {
  StreamPair pair;
  {
    auto early = pair.a.open(77);
    early->send(std::vector<std::uint8_t>{1, 2});
    early->flush();
  }
  std::this_thread::sleep_for(50ms);  // delivered before b opens job 77
  auto late = pair.b.open(77);
  std::vector<std::uint8_t> got(2);
  late->receive(got);
  EXPECT_EQ(got, (std::vector<std::uint8_t>{1, 2}));
}

TEST(JobStreams, SilentPeerTimesOut) {
  JobStreams streams([] {}, 100ms, 1000ms);
  auto stream = streams.open(3);
  std::uint8_t byte = 0;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(stream->receive({&byte, 1}), mpc::PeerError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(JobStreams, PeerAbortEndsTheReceiveWithItsReason) {
  StreamPair pair;
  auto stream = pair.b.open(5);
  pair.a.send_abort(5, "pool empty");
  std::uint8_t byte = 0;
  try {
    stream->receive({&byte, 1});
    ADD_FAILURE() << "receive returned after an abort";
  } catch (const mpc::PeerError& error) {
    EXPECT_NE(std::string(error.what()).find("pool empty"), std::string::npos) << error.what();
  }
}

TEST(JobStreams, UnopenedEarlyFramesExpire) {
  JobStreams streams([] {}, 100ms, 10ms);
  streams.deliver(8, {1, 2, 3});
  std::this_thread::sleep_for(20ms);
  streams.expire(std::chrono::steady_clock::now());
  auto stream = streams.open(8);  // a fresh stream: the stale bytes are gone
  std::uint8_t byte = 0;
  EXPECT_THROW(stream->receive({&byte, 1}), mpc::PeerError);
}

TEST(JobStreams, AJobOpensOnce) {
  JobStreams streams([] {}, 100ms, 10ms);
  auto stream = streams.open(1);
  EXPECT_THROW((void)streams.open(1), mpc::Error);
}

// A job that queued many frames does not hold back another job's frame: the jobs' frames
// leave in turn.
TEST(JobStreams, FramesOfDifferentJobsLeaveInTurn) {
  JobStreams streams{[] {}, 2000ms, 1000ms};
  auto big = streams.open(1);
  auto small = streams.open(2);
  std::vector<std::uint8_t> bytes(4 * kStreamFrameBytes);
  big->send(bytes);
  big->flush();
  const std::vector<std::uint8_t> note{1, 2, 3};
  small->send(note);
  small->flush();
  std::vector<std::uint64_t> order;
  while (const auto* frame = streams.peek_outgoing()) {
    auto message = mpc::wire::decode_two_server(*frame);
    order.push_back(std::get<mpc::wire::TwoServerData>(message).job);
    streams.pop_outgoing();
  }
  ASSERT_GE(order.size(), 5u);
  EXPECT_EQ(order[0], 1u);
  EXPECT_EQ(order[1], 2u);  // the small job's frame goes second, not last
  EXPECT_FALSE(streams.has_outgoing());
}

}  // namespace
