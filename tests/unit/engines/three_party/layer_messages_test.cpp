#include "engines/three_party/layer_messages.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "engines/three_party/frame_buffers.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::three_party_engine {
namespace {

// A layer frame as a lane sends it: the header, then the payload.
std::vector<std::uint8_t> layer_frame(const BatchTag& tag, std::uint32_t layer, const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> frame(wire::kLayerHeaderBytes);
  wire::write_layer_header({tag.epoch, tag.sequence, layer}, frame);
  frame.insert(frame.end(), payload.begin(), payload.end());
  return frame;
}

node::PeerEnvelope layer_message(int from, std::uint32_t layer, std::vector<std::uint8_t> payload) {
  return node::PeerEnvelope{from, layer_frame({7, 3}, layer, payload)};
}

TEST(LayerFrame, CarriesTheBatchTagAndDecodes) {
  const auto frame = layer_frame({0x1122334455667788ull, 9}, 4, {1, 2, 3});
  ASSERT_EQ(batch_tag_of(frame), (BatchTag{0x1122334455667788ull, 9}));
  const auto message = wire::decode_peer_message(frame);
  const auto& layer = std::get<wire::DecodedLayer>(message);
  EXPECT_EQ(layer.header.layer, 4u);
  EXPECT_EQ(std::vector<std::uint8_t>(layer.payload.begin(), layer.payload.end()), (std::vector<std::uint8_t>{1, 2, 3}));
}

TEST(TakeLayerMessage, TakesThisLayerKeepsLaterOnesDropsPastAndForeign) {
  std::deque<node::PeerEnvelope> pending;
  pending.push_back(layer_message(1, 0, {9, 9}));        // a layer already past
  pending.push_back(layer_message(2, 1, {8, 8}));        // not from the previous party
  pending.push_back(layer_message(1, 2, {5, 6}));        // one layer ahead
  pending.push_back(layer_message(1, 1, {3, 4}));        // this layer
  pending.push_back(node::PeerEnvelope{1, {1, 2, 3}});         // malformed
  std::array<std::uint8_t, 2> incoming{};
  ASSERT_TRUE(take_layer_message(pending, 1, 1, incoming));
  EXPECT_EQ(incoming, (std::array<std::uint8_t, 2>{3, 4}));
  ASSERT_EQ(pending.size(), 2u);  // the layer-2 message and the malformed one, not yet looked at
  ASSERT_TRUE(take_layer_message(pending, 1, 2, incoming));
  EXPECT_EQ(incoming, (std::array<std::uint8_t, 2>{5, 6}));
  EXPECT_FALSE(take_layer_message(pending, 1, 3, incoming));
  EXPECT_TRUE(pending.empty());
}

TEST(TakeLayerMessage, AbortAndWrongSizeRaisePeerError) {
  std::deque<node::PeerEnvelope> pending;
  node::PeerEnvelope abort;
  abort.from_party = 2;
  abort.data = wire::encode_abort({7, 3, static_cast<std::uint16_t>(wire::Status::PeerFailure), "gone"});
  pending.push_back(std::move(abort));
  std::array<std::uint8_t, 2> incoming{};
  EXPECT_THROW(take_layer_message(pending, 1, 0, incoming), PeerError);
  EXPECT_TRUE(pending.empty());
  pending.push_back(layer_message(1, 0, {1, 2, 3}));
  EXPECT_THROW(take_layer_message(pending, 1, 0, incoming), PeerError);
}

TEST(TakeLayerEnvelope, LendsThePayloadWhereItArrived) {
  std::deque<node::PeerEnvelope> pending;
  pending.push_back(layer_message(1, 0, {1, 2, 3}));
  pending.push_back(layer_message(1, 1, {4, 5, 6}));
  node::PeerEnvelope taken;
  std::span<const std::uint8_t> payload;
  EXPECT_FALSE(take_layer_envelope(pending, 1, 2, 3, taken, payload));
  ASSERT_EQ(pending.size(), 0u);  // both layers are past by then
  pending.push_back(layer_message(1, 1, {4, 5, 6}));
  const std::uint8_t* arrived = pending.back().data.data();
  ASSERT_TRUE(take_layer_envelope(pending, 1, 1, 3, taken, payload));
  EXPECT_TRUE(pending.empty());
  EXPECT_EQ(taken.data.data(), arrived);  // not copied
  EXPECT_EQ(payload.data(), arrived + wire::kLayerHeaderBytes);
  EXPECT_EQ(std::vector<std::uint8_t>(payload.begin(), payload.end()), (std::vector<std::uint8_t>{4, 5, 6}));
  pending.push_back(layer_message(1, 2, {7, 8}));
  EXPECT_THROW(take_layer_envelope(pending, 1, 2, 3, taken, payload), PeerError);
}

TEST(FrameBuffers, GivesBackWipedBuffersLargestFirstAndKeepsFew) {
  FrameBuffers buffers;
  EXPECT_TRUE(buffers.take().empty());
  buffers.give(std::vector<std::uint8_t>(100, 0x5a));
  buffers.give(std::vector<std::uint8_t>(300, 0x5a));
  buffers.give(std::vector<std::uint8_t>(200, 0x5a));
  buffers.give({});  // nothing to keep
  const auto first = buffers.take();
  EXPECT_EQ(first, std::vector<std::uint8_t>(300, 0));  // the largest, wiped
  EXPECT_EQ(buffers.take().size(), 200u);
  EXPECT_EQ(buffers.take().size(), 100u);
  EXPECT_TRUE(buffers.take().empty());

  buffers.give(std::vector<std::uint8_t>(FrameBuffers::kMaxBufferBytes + 1));  // too large to keep
  EXPECT_TRUE(buffers.take().empty());
  for (std::size_t i = 0; i < FrameBuffers::kMaxBuffers + 3; ++i) buffers.give(std::vector<std::uint8_t>(16));
  std::size_t kept = 0;
  while (!buffers.take().empty()) ++kept;
  EXPECT_EQ(kept, FrameBuffers::kMaxBuffers);
}

TEST(FrameBuffers, KeepsAStreamsChunkAsItIsBesideWipedFrames) {
  FrameBuffers buffers;
  std::vector<std::uint8_t> chunk(400, 0x5a);
  const std::uint8_t* memory = chunk.data();
  buffers.keep_chunk(std::move(chunk));
  buffers.give(std::vector<std::uint8_t>(100, 0x5a));
  buffers.keep_chunk({});  // nothing to keep
  const auto first = buffers.take();
  EXPECT_EQ(first.data(), memory);  // the same allocation, not a new one
  EXPECT_EQ(first, std::vector<std::uint8_t>(400, 0x5a));
  EXPECT_EQ(buffers.take(), std::vector<std::uint8_t>(100, 0));
  EXPECT_TRUE(buffers.take().empty());

  buffers.keep_chunk(std::vector<std::uint8_t>(FrameBuffers::kMaxBufferBytes + 1));  // too large to keep
  EXPECT_TRUE(buffers.take().empty());
  for (std::size_t i = 0; i < FrameBuffers::kMaxBuffers + 3; ++i) buffers.keep_chunk(std::vector<std::uint8_t>(16));
  std::size_t kept = 0;
  while (!buffers.take().empty()) ++kept;
  EXPECT_EQ(kept, FrameBuffers::kMaxBuffers);
}

TEST(TakeStreamChunk, TakesChunksOfAnyLengthInOrder) {
  std::deque<node::PeerEnvelope> pending;
  pending.push_back(layer_message(1, 1, std::vector<std::uint8_t>(70000, 0xab)));  // ahead
  pending.push_back(layer_message(2, 0, {8}));                                     // not the previous party
  pending.push_back(layer_message(1, 0, {}));                                      // an empty chunk
  const std::uint8_t* arrived = pending.front().data.data();
  std::vector<std::uint8_t> chunk{1};
  std::size_t from = 0;
  ASSERT_TRUE(take_stream_chunk(pending, 1, 0, chunk, from));
  EXPECT_EQ(from, chunk.size());
  ASSERT_TRUE(take_stream_chunk(pending, 1, 1, chunk, from));
  EXPECT_EQ(chunk.data(), arrived);  // the frame as it arrived, not a copy
  EXPECT_EQ(from, wire::kLayerHeaderBytes);
  EXPECT_EQ(std::vector<std::uint8_t>(chunk.begin() + static_cast<std::ptrdiff_t>(from), chunk.end()),
            std::vector<std::uint8_t>(70000, 0xab));
  EXPECT_FALSE(take_stream_chunk(pending, 1, 2, chunk, from));
  node::PeerEnvelope abort;
  abort.from_party = 2;
  abort.data = wire::encode_abort({7, 3, static_cast<std::uint16_t>(wire::Status::PeerFailure), "gone"});
  pending.push_back(std::move(abort));
  EXPECT_THROW(take_stream_chunk(pending, 1, 2, chunk, from), PeerError);
}

TEST(EarlyMessages, KeepsABatchsStreamUpToItsByteBound) {
  EarlyMessages early;
  // A garbled batch's tables in 256 KiB frames: hundreds arrive before the batch starts.
  const std::size_t frames = 600;
  for (std::uint32_t i = 0; i < frames; ++i) early.keep(layer_message(1, i, std::vector<std::uint8_t>(256 << 10)));
  EXPECT_EQ(early.take({7, 3}).size(), frames);
  // Past the byte bound the oldest go first.
  const std::size_t fit = EarlyMessages::kMaxBytes / ((256 << 10) + wire::kLayerHeaderBytes);
  for (std::uint32_t i = 0; i < fit + 10; ++i) early.keep(layer_message(1, i, std::vector<std::uint8_t>(256 << 10)));
  const auto kept = early.take({7, 3});
  ASSERT_EQ(kept.size(), fit);
  EXPECT_EQ(std::get<wire::DecodedLayer>(wire::decode_peer_message(kept.front().data)).header.layer, 10u);
  EXPECT_TRUE(early.take({7, 3}).empty());
}

}  // namespace
}  // namespace mpc::three_party_engine
