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
  // A chunk goes back as soon as its last byte is read, so that the last of a stream does too.
  const auto release_if_read = [this] {
    if (offset_ < current_.bytes.size()) return;
    if (!current_.bytes.empty()) release(std::move(current_.bytes));
    current_.bytes.clear();
    offset_ = 0;
  };
  while (!out.empty()) {
    if (current_.bytes.empty()) {
      current_ = next_chunk();
      offset_ = std::min(current_.from, current_.bytes.size());
      release_if_read();
      continue;
    }
    const std::size_t take = std::min(out.size(), current_.bytes.size() - offset_);
    std::copy_n(current_.bytes.begin() + static_cast<std::ptrdiff_t>(offset_), take, out.begin());
    offset_ += take;
    out = out.subspan(take);
    release_if_read();
  }
}

}  // namespace mpc::two_party
