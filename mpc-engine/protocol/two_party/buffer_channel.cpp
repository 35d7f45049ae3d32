#include "protocol/two_party/buffer_channel.hpp"

#include <algorithm>
#include <string>

#include "common/error.hpp"

namespace mpc::two_party {

void RecordingChannel::send(std::span<const std::uint8_t> bytes) { bytes_.insert(bytes_.end(), bytes.begin(), bytes.end()); }

void RecordingChannel::receive(std::span<std::uint8_t>) {
  throw Error(Component::Protocol, "a recorded two-party stream cannot receive");
}

std::vector<std::uint8_t> RecordingChannel::take() {
  std::vector<std::uint8_t> out;
  out.swap(bytes_);
  return out;
}

void ReplayChannel::send(std::span<const std::uint8_t>) {
  throw Error(Component::Protocol, "a replayed two-party stream cannot send");
}

void ReplayChannel::receive(std::span<std::uint8_t> out) {
  if (out.size() > remaining())
    throw PeerError(Component::Protocol, "kept two-party stream too short: " + std::to_string(out.size()) +
                                             " bytes asked, " + std::to_string(remaining()) + " left");
  std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(offset_), out.size(), out.begin());
  offset_ += out.size();
}

}  // namespace mpc::two_party
