#include "protocol/two_party/chunked_channel.hpp"

#include <algorithm>

namespace mpc::two_party {

void ChunkedChannel::send(std::span<const std::uint8_t> bytes) {
  sent_ += bytes.size();
  while (!bytes.empty()) {
    const std::size_t take = std::min(bytes.size(), chunk_bytes_ - pending_.size());
    pending_.insert(pending_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
    bytes = bytes.subspan(take);
    if (pending_.size() == chunk_bytes_) flush();
  }
}

void ChunkedChannel::flush() {
  if (pending_.empty()) return;
  std::vector<std::uint8_t> chunk;
  chunk.reserve(chunk_bytes_);
  chunk.swap(pending_);
  ship(std::move(chunk));
}

void ChunkedChannel::receive(std::span<std::uint8_t> out) {
  while (!out.empty()) {
    if (offset_ >= current_.bytes.size()) {
      current_ = next_chunk();
      offset_ = std::min(current_.from, current_.bytes.size());
      continue;
    }
    const std::size_t take = std::min(out.size(), current_.bytes.size() - offset_);
    std::copy_n(current_.bytes.begin() + static_cast<std::ptrdiff_t>(offset_), take, out.begin());
    offset_ += take;
    out = out.subspan(take);
  }
}

}  // namespace mpc::two_party
