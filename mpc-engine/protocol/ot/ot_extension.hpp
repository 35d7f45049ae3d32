// Oblivious-transfer extension of Ishai, Kilian, Nissim and Petrank (CRYPTO 2003), semi-honest:
// 128 base OTs (base_ot.hpp, roles reversed) are stretched into any number of OTs with one
// message of 128 bits per OT from the receiver and the hash of two_party/fixed_key_hash.hpp
// (correlation robust, as IKNP requires) on both sides.
//
// The base OTs run on the first call; later calls on the same pair of objects continue from
// their PRG positions and an OT counter (the hash tweak), so a session amortises the setup.
// Both sides must make the same sequence of calls with the same counts, over one channel.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "protocol/two_party/block.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::ot {

using two_party::Block;

inline constexpr std::size_t kBaseOts = 128;

class OtExtensionSender {
 public:
  explicit OtExtensionSender(two_party::Channel& channel);
  ~OtExtensionSender();
  OtExtensionSender(const OtExtensionSender&) = delete;
  OtExtensionSender& operator=(const OtExtensionSender&) = delete;
  // Random OT: out0[i], out1[i] uniform; the receiver learns out_{c_i}.
  void random(std::span<Block> out0, std::span<Block> out1);
  // Correlated OT with the sender's chosen delta: out0[i] uniform, the receiver learns out0[i] ^ c_i * delta.
  void correlated(const Block& delta, std::span<Block> out0);
  // Chosen-message OT: the receiver learns m_{c_i}[i] and nothing of the other.
  void chosen(std::span<const Block> m0, std::span<const Block> m1);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

class OtExtensionReceiver {
 public:
  explicit OtExtensionReceiver(two_party::Channel& channel);
  ~OtExtensionReceiver();
  OtExtensionReceiver(const OtExtensionReceiver&) = delete;
  OtExtensionReceiver& operator=(const OtExtensionReceiver&) = delete;
  // choices: one byte per OT, 0 or 1 (anything else is an Error(Protocol), before anything is sent).
  void random(std::span<const std::uint8_t> choices, std::span<Block> out);
  void correlated(std::span<const std::uint8_t> choices, std::span<Block> out);
  void chosen(std::span<const std::uint8_t> choices, std::span<Block> out);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace mpc::ot
