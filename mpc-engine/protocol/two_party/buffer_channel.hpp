// One direction of a two-party stream kept in memory instead of sent: a garbler writes a
// garbling ahead of time into a RecordingChannel, and the evaluator later reads the kept
// bytes back through a ReplayChannel, as if they came from the peer. Neither ever talks to
// the other side: RecordingChannel cannot receive, ReplayChannel cannot send.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/two_party/channel.hpp"

namespace mpc::two_party {

class RecordingChannel final : public Channel {
 public:
  void send(std::span<const std::uint8_t> bytes) override;
  void flush() override {}
  // Throws Error(Protocol): a recording has no peer to answer.
  void receive(std::span<std::uint8_t> out) override;
  std::uint64_t bytes_sent() const override { return bytes_.size(); }

  // Everything sent so far; the channel is empty afterwards.
  std::vector<std::uint8_t> take();

 private:
  std::vector<std::uint8_t> bytes_;
};

class ReplayChannel final : public Channel {
 public:
  // The bytes must outlive the channel.
  explicit ReplayChannel(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  // Throws Error(Protocol): a replay has no peer to send to.
  void send(std::span<const std::uint8_t> bytes) override;
  void flush() override {}
  // Throws PeerError when fewer bytes are left than asked for (a kept stream cut short).
  void receive(std::span<std::uint8_t> out) override;
  // Throws PeerError as receive() does.
  std::span<const std::uint8_t> view(std::size_t size) override;
  std::uint64_t bytes_sent() const override { return 0; }

  std::size_t remaining() const { return bytes_.size() - offset_; }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t offset_ = 0;
};

}  // namespace mpc::two_party
