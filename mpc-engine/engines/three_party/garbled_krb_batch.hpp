// A Kerberos batch of three servers evaluated as one garbled circuit (wire::KrbEvaluation::
// Garbled, under security = "passive"; the active form, garbled twice, is garbled_krb_dual.hpp).
// HMAC-SHA1 chains hundreds of AND layers per compression, so evaluated layer by layer
// (Araki et al.) a login's jobs take thousands of rounds; garbled, they take three messages. All three servers keep their replicated shares and the correlated-randomness
// keys; no OT is needed because the three of them hold every share twice (the honest-majority
// garbling of Mohassel, Rosulek and Zhang, CCS 2015, in its semi-honest form).
//
// Roles, fixed by party: party 0 garbles, party 1 evaluates, party 2 supplies labels. Every
// message goes from party i to party i+1, as layer messages do.
//
// Inputs. With Araki's shares (x_i, a_i), a_i = x_{i-1} ^ v and x_0 ^ x_1 ^ x_2 = 0, the
// secret is v = x_0 ^ a_1: party 0 holds x_0 and party 2 computes a_1 = a_2 ^ x_2. Parties 0
// and 2 share a PRF key (k_2, purpose "garbling"), from which both draw the batch's delta and
// the zero labels Z_b of a_1's wires under the batch's id; party 0 draws fresh zero labels
// Z_x for x_0 and Z_p for the public record. Party 2 sends a_1's active labels, padded with a
// stream of the key it shares with party 1 (k_1), to party 0, which forwards them with the
// active labels of x_0 and of the public record, then the garbled tables (half-gates,
// protocol/gc2/half_gates.hpp). Party 1 removes the pad and evaluates with the key rows'
// labels L_x ^ L_b (free XOR: their zero label is Z_x ^ Z_b).
//
// Tweaks. Delta is drawn per batch, and the garbling's number (the high half of every gate's
// hash tweak, protocol/gc2/half_gates.hpp) is the batch's too: the epoch's low 31 bits, then
// the sequence. Within an epoch no two batches share a tweak (followers refuse a sequence that
// does not grow), and party 1 refuses a stream numbered for another batch; across epochs, which
// draw 64 random bits each, two batches share tweaks only if those 31 bits agree, and then
// under independent deltas.
//
// Views. Party 1 sees one active label per wire and the tables: the garbled-circuit view,
// without decoding bits. Party 0 sees a_1's labels under a pad it cannot compute. Party 2
// sees delta and Z_b but no table and no other label. Each is simulated without the key, as
// for one corrupted server of three under rss3.
//
// Outputs. Party 0 ends with the decoding bits d, party 1 with its labels' colour bits e, and
// d ^ e is the result. Each party masks its part c_i (c_2 = 0) with the batch's zero-sharing
// alpha_i, sends r_i = c_i ^ alpha_i to party i+1 and keeps x_i = r_i ^ r_{i-1}, a_i = r_i:
// replicated shares of the result (the resharing of an AND layer), which the server masks
// and returns like any other batch, so a client opens them as it opens every result.
#pragma once

#include "common/log.hpp"
#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/two_party/channel.hpp"
#include "engines/three_party/batch_worker.hpp"
#include "engines/three_party/prepared_garblings.hpp"
#include "engines/three_party/prf_keys.hpp"
#include "settings/server_settings.hpp"

namespace mpc::three_party_engine {

// The party that garbles, evaluates and supplies labels.
inline constexpr int kGarblingParty = 0;
inline constexpr int kEvaluatingParty = 1;
inline constexpr int kLabellingParty = 2;

// The garbling number of a batch's one garbling (Tweaks above).
std::uint64_t batch_garbling_number(const wire::BatchHeader& header);

// Evaluates a Kerberos batch (task.program set, no secret records, nothing kept) as the header
// says: garbled once (wire::KrbEvaluation::Garbled, the roles above) or twice
// (GarbledTwice, garbled_krb_dual.hpp). `to_next` carries what this party sends to party i+1,
// `from_previous` what party i-1 sends. Returns the masked output shares, laid out as
// evaluate_batch's, or the failure (a peer's silence past the channel's timeout is a failure,
// not a hang; a failed check of active security is failure VerificationFailed, and so is a
// batch garbled once at a party whose `security` is Active). `party`: this server's 0-based index.
// PrepareTwice and PreparedTwice batches (garbled_krb_prepared.hpp) keep and take garblings in
// `prepared`, and fail without one; a server that does not hold the garbling a batch names fails
// it with Regrouping.
BatchResult evaluate_garbled_batch(BatchTask& task, int party, settings::Security security,
                                   const PartyPrfKeys& prf_keys, two_party::Channel& to_next,
                                   two_party::Channel& from_previous, const Logger& log,
                                   PreparedGarblings* prepared = nullptr);

}  // namespace mpc::three_party_engine
