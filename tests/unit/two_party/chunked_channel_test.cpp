#include "protocol/two_party/chunked_channel.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <numeric>

#include "common/error.hpp"

namespace mpc::two_party {
namespace {

// Chunks come back behind a header of kHeader bytes, as a transport's frames hold them.
class FramedLoopback final : public ChunkedChannel {
 public:
  static constexpr std::size_t kHeader = 5;
  explicit FramedLoopback(std::size_t chunk_bytes) : ChunkedChannel(chunk_bytes) {}
  void push_empty_frame() { frames_.emplace_back(kHeader, std::uint8_t{0xee}); }

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
    return chunk;
  }
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

}  // namespace
}  // namespace mpc::two_party
