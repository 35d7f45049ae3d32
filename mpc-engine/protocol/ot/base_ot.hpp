// Base oblivious transfers: the "simplest OT" of Chou and Orlandi (LATINCRYPT 2015,
// eprint 2015/267) in the prime-order group ristretto255 (libsodium), batched.
//
//   sender:   a random, A = aG                                   -> A
//   receiver: b_i random, B_i = b_iG (c_i = 0) or A + b_iG (c_i = 1) -> B_i
//   keys:     sender k0_i = H(A, B_i, aB_i), k1_i = H(A, B_i, a(B_i - A)); receiver H(A, B_i, b_iA)
//
// In ristretto255 every encoding is a point of the prime-order group, so the cofactor pitfalls
// of the original Curve25519 encoding do not arise; points that do not decode are refused.
// The later critiques of this protocol (Hauck-Loss 2017, Genc et al. 2017, Byali et al. 2017)
// concern its UC security against malicious parties; the two-server back ends are semi-honest,
// where the protocol is secure under CDH in the random-oracle model. The key hash binds the
// whole transcript of the OT (A, B_i) and its index, with a domain label (BLAKE2b).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "protocol/two_party/block.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::ot {

using two_party::Block;

// keys0[i], keys1[i]: the sender's two keys of OT i.
void base_ot_send(two_party::Channel& channel, std::span<Block> keys0, std::span<Block> keys1);
// choices: one byte per OT, 0 or 1. keys[i] = the sender's key number choices[i].
void base_ot_receive(two_party::Channel& channel, std::span<const std::uint8_t> choices, std::span<Block> keys);

}  // namespace mpc::ot
