#include "engines/three_party/frame_buffers.hpp"

#include <algorithm>
#include <utility>

#include "common/secret.hpp"

namespace mpc::three_party_engine {

std::vector<std::uint8_t> FrameBuffers::take() {
  std::lock_guard lock(mutex_);
  if (spare_.empty()) return {};
  // The largest: the next frame's size is not known yet, and a link grows a buffer by filling.
  const auto largest = std::max_element(spare_.begin(), spare_.end(),
                                        [](const auto& a, const auto& b) { return a.size() < b.size(); });
  std::vector<std::uint8_t> buffer = std::move(*largest);
  spare_.erase(largest);
  return buffer;
}

void FrameBuffers::give(std::vector<std::uint8_t> buffer) noexcept {
  wipe(buffer.data(), buffer.size());
  keep_chunk(std::move(buffer));
}

void FrameBuffers::keep_chunk(std::vector<std::uint8_t> chunk) noexcept {
  if (chunk.empty() || chunk.capacity() > kMaxBufferBytes) return;
  std::lock_guard lock(mutex_);
  if (spare_.size() < kMaxBuffers) spare_.push_back(std::move(chunk));  // reserved: no allocation
}

}  // namespace mpc::three_party_engine
