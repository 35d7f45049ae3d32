// Buffers of received layer frames, handed back once their message is used: a data link reads
// its next frame into one of them. A new buffer each time would be allocated and zero-filled
// (a large layer page by page) only for the link to overwrite it.
//
// A layer's frame is wiped before it is given back (it held share components of the layer's
// ANDs); a chunk of a garbled batch's stream is kept as it is, as it would have been freed (its
// tables and labels are what its receiver reads). At most kMaxBuffers of at most
// kMaxBufferBytes each are kept: a frame goes back as soon as its layer or chunk is used, so a
// few spares serve every lane, and an idle server holds little.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace mpc::three_party_engine {

class FrameBuffers {
 public:
  static constexpr std::size_t kMaxBuffers = 4;
  static constexpr std::size_t kMaxBufferBytes = std::size_t{8} << 20;

  FrameBuffers() { spare_.reserve(kMaxBuffers); }
  FrameBuffers(const FrameBuffers&) = delete;
  FrameBuffers& operator=(const FrameBuffers&) = delete;

  // The largest spare buffer, or an empty one when none is kept. Its size is what it last held.
  std::vector<std::uint8_t> take();
  // Wipes `buffer` and keeps it if there is room; frees it otherwise.
  void give(std::vector<std::uint8_t> buffer) noexcept;
  // A garbled stream's chunk, read to its end: kept unwiped if there is room, freed otherwise.
  void keep_chunk(std::vector<std::uint8_t> chunk) noexcept;

 private:
  std::mutex mutex_;
  std::vector<std::vector<std::uint8_t>> spare_;
};

}  // namespace mpc::three_party_engine
