// Base oblivious transfers: the endemic OT of Masny and Rindal ("Endemic Oblivious Transfer",
// ACM CCS 2019, eprint 2019/706: OT from a key agreement whose messages are uniform group
// elements, with a random oracle onto the group), batched, in libsodium's prime-order group
// ristretto255, with the Diffie-Hellman key agreement:
//
//   receiver, choice c_i: b_i random, B_i = b_iG; R_i a uniform point;
//             r_{c_i,i} = B_i - H_i(R_i), r_{1-c_i,i} = R_i            -> r_0i, r_1i
//   sender:   a random, A = aG                                         -> A
//   keys:     sender kj_i = K(A, r_0i, r_1i, i, a m_ji) with m_0i = r_0i + H_i(r_1i),
//             m_1i = r_1i + H_i(r_0i); receiver k_i = K(A, r_0i, r_1i, i, b_iA) (= k_{c_i}, since
//             m_{c_i,i} = B_i)
//
// Both messages go at once: one round. H_i maps the OT index and a point onto the group
// (BLAKE2b-512 keyed with a domain label, then crypto_core_ristretto255_from_hash, which maps 64
// uniform bytes to a uniform element); K is BLAKE2b keyed with another label, 16 bytes out, over
// the whole transcript of the OT, so keys of different OTs, batches or sessions are independent.
//
// Security: Masny and Rindal prove this construction secure against a malicious sender or
// receiver in the random-oracle model (endemic security: a corrupt party may choose its own
// outputs, which they show is what OT extension needs), from the key agreement's security. The
// receiver's two points are uniform whatever its choice, and a receiver that knows the
// discrete logarithm of one m_ji cannot know the other's, since each is offset by an oracle
// output of the other point. (Chou and Orlandi's "simplest OT", one product cheaper, is not
// used: its claimed malicious security did not survive later analyses, Genc, Iovino and Rial,
// eprint 2017/370; Hauck and Loss, eprint 2017/1011.) ristretto255 encodings decode only to elements of the
// prime-order group; a point that does not decode, or a product that is the identity, is
// refused with FormatError. The receiver places its points with a mask, not a branch on c_i;
// secret scalars and shared points are wiped.
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
