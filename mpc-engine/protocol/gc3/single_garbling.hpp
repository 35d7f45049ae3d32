// A batch of three servers evaluated as one garbled circuit, against a passive server
// (security = "passive"; against an active one the batch is garbled twice, dual_garbling.hpp).
// HMAC-SHA1 chains hundreds of AND layers per compression, so evaluated layer by layer
// (Araki et al.) a login's jobs take thousands of rounds; garbled, they take three messages. All
// three servers keep their replicated shares and the correlated-randomness keys; no OT is needed
// because the three of them hold every share twice (the honest-majority garbling of Mohassel,
// Rosulek and Zhang, CCS 2015, in its semi-honest form).
//
// Roles, fixed by party: party 0 garbles, party 1 evaluates, party 2 supplies labels. Every
// message goes from party i to party i+1, as layer messages do.
//
// Inputs. With Araki's shares (x_i, a_i), a_i = x_{i-1} ^ v and x_0 ^ x_1 ^ x_2 = 0, the
// secret is v = x_0 ^ a_1: party 0 holds x_0 and party 2 computes a_1 = a_2 ^ x_2. Parties 0
// and 2 share a key (GarblingKeys), from which both draw the batch's delta and the zero labels
// Z_b of a_1's wires under the batch's id; party 0 draws fresh zero labels Z_x for x_0 and Z_p
// for the public record. Party 2 sends a_1's active labels, padded with a stream of the key it
// shares with party 1, to party 0, which forwards them with the active labels of x_0 and of the
// public record, then the garbled tables (half-gates, protocol/gc2/half_gates.hpp). Party 1
// removes the pad and evaluates with the key rows' labels L_x ^ L_b (free XOR: their zero label
// is Z_x ^ Z_b).
//
// Tweaks. Delta is drawn per batch, and the garbling's number is the batch's (garbling_number,
// batch.hpp); party 1 refuses a stream numbered for another batch.
//
// Views. Party 1 sees one active label per wire and the tables: the garbled-circuit view,
// without decoding bits. Party 0 sees a_1's labels under a pad it cannot compute. Party 2
// sees delta and Z_b but no table and no other label. Each is simulated without the key, as
// for one corrupted server of three under rss3.
//
// Outputs. Party 0 ends with the decoding bits d, party 1 with its labels' colour bits e, and
// d ^ e is the result. Each party masks its part c_i (c_2 = 0) with the batch's zero-sharing
// alpha_i, sends r_i = c_i ^ alpha_i to party i+1 and keeps x_i = r_i ^ r_{i-1}, a_i = r_i:
// replicated shares of the result (the resharing of an AND layer).
#pragma once

#include "protocol/gc3/batch.hpp"
#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/rss3/shares.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::gc3 {

inline constexpr int kGarblingParty = 0;
inline constexpr int kEvaluatingParty = 1;
inline constexpr int kLabellingParty = 2;

// Runs `batch` as party `party`'s role above; `randomness` is the batch's correlated randomness
// (its alpha). Writes this party's replicated share of the outputs, unmasked, instance n's record
// of ceil(num_outputs / 8) bytes at n * record. Throws PeerError when a peer is silent past the
// channel's timeout, Error for anything else.
void evaluate_single_garbling(const Batch& batch, int party, const GarblingKeys& keys,
                              rss3::CorrelatedRandomness& randomness, two_party::Channel& to_next,
                              two_party::Channel& from_previous, rss3::ByteShare& out);

}  // namespace mpc::gc3
