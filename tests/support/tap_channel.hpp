// A tap on a two-party channel: passes everything through to the channel it wraps and keeps a
// copy of what went each way. What one party sent is the other's view of the protocol, which
// the tests check for length and for looking random. (two_party::RecordingChannel, by
// contrast, has no peer: it keeps a garbling for later.)
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/two_party/channel.hpp"

namespace mpc::test_support {

class TapChannel final : public two_party::Channel {
 public:
  explicit TapChannel(two_party::Channel& inner) : inner_(inner) {}
  void send(std::span<const std::uint8_t> bytes) override {
    sent.insert(sent.end(), bytes.begin(), bytes.end());
    inner_.send(bytes);
  }
  void flush() override { inner_.flush(); }
  void receive(std::span<std::uint8_t> out) override {
    inner_.receive(out);
    received.insert(received.end(), out.begin(), out.end());
  }
  std::uint64_t bytes_sent() const override { return inner_.bytes_sent(); }
  void allow_extra_wait(std::chrono::milliseconds extra) override { inner_.allow_extra_wait(extra); }

  std::vector<std::uint8_t> sent;
  std::vector<std::uint8_t> received;

 private:
  two_party::Channel& inner_;
};

}  // namespace mpc::test_support
