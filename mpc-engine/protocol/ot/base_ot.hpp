// Base oblivious transfers: "The Simplest Protocol for Oblivious Transfer" of Chou and Orlandi
// (LATINCRYPT 2015, eprint 2015/267), batched, in libsodium's prime-order group ristretto255:
//
//   sender:   a random, A = aG                                        -> A
//   receiver: b_i random, B_i = b_iG (c_i = 0) or A + b_iG (c_i = 1)   -> B_1 .. B_n
//   keys:     sender k0_i = H(A, B_i, i, aB_i), k1_i = H(A, B_i, i, aB_i - aA);
//             receiver k_i = H(A, B_i, i, b_iA) (= k_{c_i})
//
// H is BLAKE2b (crypto_generichash) keyed with a domain label, 16-byte output. It binds the
// transcript: both parties' points A and B_i and the OT index go into every key, so keys of
// different OTs, batches or sessions are independent even where shared points coincide.
// ristretto255 encodings decode only to elements of the prime-order group, so the cofactor
// and small-subgroup pitfalls of the original Curve25519 encoding do not arise; a point that
// does not decode, the identity, or B_i = A is refused with FormatError. The receiver selects
// its point with a mask, not a branch on c_i; secret scalars and shared points are wiped.
//
// What is known: semi-honest security (the setting of the two-server back ends) rests on CDH
// in the random-oracle model: B_i is uniform whatever c_i, and the key the receiver did not
// choose needs a^2 G from aG. The later analyses concern the original claim of UC security
// against malicious and adaptive corruptions: Genc, Iovino and Rial (eprint 2017/370) found a
// flaw in the proof for a corrupted sender; Hauck and Loss (eprint 2017/1011) found two more,
// re-proved static malicious UC security only under Gap-DH, and noted that the proof fails
// for adaptive corruptions. None of this touches semi-honest use, but where a server may
// deviate this protocol must be replaced (IKNP above it checks its receiver: ot_extension.hpp).
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
