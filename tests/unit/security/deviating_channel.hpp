// A server's outgoing stream with its bytes altered on their way out, for tests in which one
// server of a garbled batch deviates.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "protocol/two_party/channel.hpp"

namespace mpc::security_test {

// What a server sends, altered on its way out: a bit flipped in each byte at `flip_at` (offsets
// counted over the whole stream), or nothing sent from `stop_at` on.
class DeviatingChannel final : public two_party::Channel {
 public:
  DeviatingChannel(two_party::Channel& inner, std::vector<std::size_t> flip_at, std::optional<std::size_t> stop_at)
      : inner_(inner), flip_at_(std::move(flip_at)), stop_at_(stop_at) {}
  void send(std::span<const std::uint8_t> bytes) override {
    std::vector<std::uint8_t> copy(bytes.begin(), bytes.end());
    for (const std::size_t at : flip_at_)
      if (at >= offset_ && at < offset_ + copy.size()) copy[at - offset_] ^= 0x01;
    std::size_t keep = copy.size();
    if (stop_at_) keep = *stop_at_ <= offset_ ? 0 : std::min(keep, *stop_at_ - offset_);
    offset_ += copy.size();
    if (keep != 0) inner_.send(std::span<const std::uint8_t>(copy).first(keep));
  }
  void flush() override { inner_.flush(); }
  void receive(std::span<std::uint8_t> out) override { inner_.receive(out); }
  std::uint64_t bytes_sent() const override { return offset_; }
  void allow_extra_wait(std::chrono::milliseconds extra) override { inner_.allow_extra_wait(extra); }

 private:
  two_party::Channel& inner_;
  std::vector<std::size_t> flip_at_;
  std::optional<std::size_t> stop_at_;
  std::size_t offset_ = 0;
};

}  // namespace mpc::security_test
