// Oblivious-transfer extension of Ishai, Kilian, Nissim and Petrank, "Extending Oblivious
// Transfers Efficiently" (CRYPTO 2003), semi-honest, with kappa = 128:
//
//   base OTs (base_ot.hpp), roles reversed: the OT-extension sender picks s in {0,1}^128 and
//     learns k_{s_i}^i; the receiver learns both k_0^i, k_1^i.
//   receiver: t^i = G(k_0^i), u^i = t^i ^ G(k_1^i) ^ c (columns of n bits)        -> u
//   sender:   q^i = G(k_{s_i}^i) ^ s_i u^i, so row q_j = t_j ^ c_j s
//   outputs:  sender H(q_j, j), H(q_j ^ s, j); receiver H(t_j, j) = the one for c_j.
//
// G is AES-128-CTR keyed by the base-OT key, one stream per column, continued across calls.
// The columns become rows with a 128 x 128 bit transpose (bit_transpose.hpp). H is the
// fixed-key AES hash of two_party/fixed_key_hash.hpp, H(x, i) = pi(sigma(x) ^ i) ^ sigma(x) of
// Guo, Katz, Wang and Yu (S&P 2020, eprint 2019/074), tweaked by the session's OT counter j.
// IKNP needs H correlation robust for the correlation s (H(t_j ^ s, j) pseudorandom for
// unknown random s); GKWY prove this construction tweakable circular correlation robust in
// the ideal-permutation model, which implies it, and the tweak makes every OT of a session
// hash under a distinct index (their multi-instance bound). The counter lives in a tweak space
// with the top bit set, apart from the garbled circuits' tweaks.
//
// Correlated OT adds one block per OT from the sender (H(q_j) ^ H(q_j ^ s) ^ delta); chosen OT
// two (m0 ^ H(q_j), m1 ^ H(q_j ^ s)). Traffic: the receiver sends 16 bytes per OT (in messages
// of at most 8192 OTs, so the sender works while the receiver prepares the next) plus 8 bytes
// per call; base OTs 64 bytes from the IKNP sender (their receiver) per OT and 32 bytes
// back, once.
//
// Sessions: the base OTs run on the first call of an object (any of the three); later calls
// continue from the PRG positions and the counter, so one pair of objects amortises the setup,
// over one channel or, with use_channel, over each job's stream in turn. Both sides must make the same sequence of calls, each with the same
// count: sender random(n) with receiver random(n), correlated(n) with correlated(n), chosen(n)
// with chosen(n). The receiver announces each call's kind and count, and a sender making a
// different call throws Error(Protocol) naming both; the receiver then gets PeerError from its
// channel if it waits for the sender. A silent peer is a PeerError (the channel's timeout).
// The objects are not thread-safe; one call at a time per object.
//
// Consistency check (Keller, Orsini, Scholl, CRYPTO 2015): every call extends 256 OTs more
// than asked, with random choices, and sacrifices them once all u is sent. The sender draws
// challenges chi_j (AES-128-CTR under a fresh seed it sends), the receiver answers
// x = sum chi_j c_j and t = sum chi_j t_j in GF(2^128), and the sender checks
// sum chi_j q_j = t + x s, throwing PeerError otherwise. A receiver whose columns disagree on
// its choice bits passes only by guessing the bits of s its disagreement touches: k bits with
// probability 2^-k. One round trip and 256 OTs per call. Costs: 16 bytes from the sender,
// 32 from the receiver.
//
// Authenticated bits: the raw IKNP correlation, unhashed, under the sender's one offset s
// for the whole session (Nielsen, Nordholt, Orlandi, Burra, "A New Approach to Practical
// Active-Secure Two-Party Computation", CRYPTO 2012, with the KOS15 check in place of theirs):
// the sender keeps key q_j, the receiver mac t_j = q_j ^ c_j s, so the receiver's bit c_j is
// authenticated under the sender's global delta s. A receiver that fails the check learns k
// bits of s only with probability 2^-k; one that passes cannot forge a MAC without the rest.
// The sender may fix s's two lowest bits (the point-and-permute and the AND reveal of the
// protocols above need them known).
//
// Security: the receiver is held to consistent choices; the sender is not checked (a sender
// can offer a right message for one choice and garbage for the other, which the protocols
// above this one must catch; authenticated bits have no such messages), and the base OTs are
// Masny and Rindal's, secure against a malicious party in the random-oracle model (base_ot.hpp).
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
  // delta_low_bits: bits 0 and 1 of s, where the protocol needs them fixed (bits above 1 are an Error).
  OtExtensionSender(two_party::Channel& channel, std::uint8_t delta_low_bits);
  ~OtExtensionSender();
  OtExtensionSender(const OtExtensionSender&) = delete;
  OtExtensionSender& operator=(const OtExtensionSender&) = delete;
  // Random OT: out0[i], out1[i] uniform; the receiver learns out_{c_i}.
  void random(std::span<Block> out0, std::span<Block> out1);
  // Correlated OT with the sender's chosen delta: out0[i] uniform, the receiver learns out0[i] ^ c_i * delta.
  void correlated(const Block& delta, std::span<Block> out0);
  // Chosen-message OT: the receiver learns m_{c_i}[i] and nothing of the other.
  void chosen(std::span<const Block> m0, std::span<const Block> m1);
  // Authenticated bits: keys[i] uniform, the receiver learns keys[i] ^ c_i * delta().
  void authenticated(std::span<Block> keys);
  // Runs the base OTs now where no call has yet (with the receiver's setup()).
  void setup();
  // Later calls go over `channel` (the peer's next job stream), continuing the same session.
  void use_channel(two_party::Channel& channel);
  // The session's global offset s (runs the base OTs if no call has yet). Secret.
  const Block& delta();

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
  // macs[i] = the sender's keys[i] ^ c_i * delta.
  void authenticated(std::span<const std::uint8_t> choices, std::span<Block> macs);
  // Runs the base OTs now where no call has yet (with the sender's setup()).
  void setup();
  // Later calls go over `channel` (the peer's next job stream), continuing the same session.
  void use_channel(two_party::Channel& channel);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace mpc::ot
