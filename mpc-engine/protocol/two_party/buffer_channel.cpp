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
  const auto in_place = view(out.size());
  std::copy(in_place.begin(), in_place.end(), out.begin());
}

std::span<const std::uint8_t> ReplayChannel::view(std::size_t size) {
  if (size > remaining())
    throw PeerError(Component::Protocol, "kept two-party stream too short: " + std::to_string(size) +
                                             " bytes asked, " + std::to_string(remaining()) + " left");
  const auto out = bytes_.subspan(offset_, size);
  offset_ += size;
  return out;
}

}  // namespace mpc::two_party
