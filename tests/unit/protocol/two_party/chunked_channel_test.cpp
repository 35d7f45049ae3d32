#include "protocol/two_party/chunked_channel.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <numeric>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace mpc::two_party {
namespace {

// Chunks come back behind a header of kHeader bytes, as a transport's frames hold them.
class FramedLoopback final : public ChunkedChannel {
 public:
  static constexpr std::size_t kHeader = 5;
  explicit FramedLoopback(std::size_t chunk_bytes) : ChunkedChannel(chunk_bytes) {}
  void push_empty_frame() { frames_.emplace_back(kHeader, std::uint8_t{0xee}); }
  // Each frame handed back, and how many chunks had been asked for when it was.
  std::vector<std::pair<std::vector<std::uint8_t>, std::size_t>> released;

 private:
  void ship(std::vector<std::uint8_t> chunk) override {
    std::vector<std::uint8_t> frame(kHeader, 0xee);
    frame.insert(frame.end(), chunk.begin(), chunk.end());
    frames_.push_back(std::move(frame));
  }
  Chunk next_chunk() override {
    if (frames_.empty()) throw PeerError(Component::Protocol, "nothing sent");
    Chunk chunk{std::move(frames_.front()), kHeader};
    frames_.pop_front();
    ++asked_;
    return chunk;
  }
  void release(std::vector<std::uint8_t> bytes) override { released.emplace_back(std::move(bytes), asked_); }
  std::size_t asked_ = 0;
  std::deque<std::vector<std::uint8_t>> frames_;
};

TEST(ChunkedChannel, ReadsChunksFromBehindTheirFramesHeaders) {
  FramedLoopback channel(7);
  std::vector<std::uint8_t> sent(40);
  std::iota(sent.begin(), sent.end(), std::uint8_t{1});
  channel.send(std::span(sent).first(10));
  channel.flush();
  channel.push_empty_frame();  // a chunk of no bytes
  channel.send(std::span(sent).subspan(10));
  channel.flush();
  EXPECT_EQ(channel.bytes_sent(), sent.size());

  std::vector<std::uint8_t> received(sent.size());
  channel.receive(std::span(received).first(3));
  channel.receive(std::span(received).subspan(3, 20));  // across three chunks and the empty one
  channel.receive(std::span(received).subspan(23));
  EXPECT_EQ(received, sent);
  std::uint8_t more = 0;
  EXPECT_THROW(channel.receive({&more, 1}), PeerError);
}

TEST(ChunkedChannel, HandsBackEachChunkOnceReadToItsEnd) {
  FramedLoopback channel(4);
  const std::vector<std::uint8_t> sent{1, 2, 3, 4, 5, 6, 7, 8, 9};
  channel.send(sent);
  channel.flush();             // chunks {1..4}, {5..8}, {9}
  channel.push_empty_frame();  // and one of no bytes
  std::vector<std::uint8_t> received(6);
  channel.receive(received);  // the first chunk whole, the second in part
  ASSERT_EQ(channel.released.size(), 1u);
  EXPECT_EQ(channel.released[0].first, (std::vector<std::uint8_t>{0xee, 0xee, 0xee, 0xee, 0xee, 1, 2, 3, 4}));
  EXPECT_EQ(channel.released[0].second, 1u);  // before the second chunk was asked for
  received.resize(3);
  channel.receive(received);
  EXPECT_EQ(received, (std::vector<std::uint8_t>{7, 8, 9}));
  ASSERT_EQ(channel.released.size(), 3u);  // the last one too, without a read past it
  EXPECT_EQ(channel.released[1].second, 2u);
  EXPECT_EQ(channel.released[2].first, (std::vector<std::uint8_t>{0xee, 0xee, 0xee, 0xee, 0xee, 9}));
  EXPECT_EQ(channel.released[2].second, 3u);
  std::uint8_t more = 0;
  EXPECT_THROW(channel.receive({&more, 1}), PeerError);  // past the empty chunk: nothing sent
  EXPECT_EQ(channel.released.size(), 4u);                // the empty chunk's frame went back too
}

}  // namespace
}  // namespace mpc::two_party
