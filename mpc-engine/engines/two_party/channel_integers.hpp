// Unsigned integers over a two-party job stream, little-endian, as the engine's messages
// carry them (prepared garblings, record-mask labels).
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/two_party/channel.hpp"

namespace mpc::two_party_engine {

template <typename T>
void send_le(two_party::Channel& peer, T value) {
  std::uint8_t bytes[sizeof(T)];
  for (std::size_t i = 0; i < sizeof(T); ++i) bytes[i] = static_cast<std::uint8_t>(value >> (8 * i));
  peer.send(bytes);
}

template <typename T>
T receive_le(two_party::Channel& peer) {
  std::uint8_t bytes[sizeof(T)];
  peer.receive(bytes);
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<T>(bytes[i]) << (8 * i));
  return value;
}

}  // namespace mpc::two_party_engine
