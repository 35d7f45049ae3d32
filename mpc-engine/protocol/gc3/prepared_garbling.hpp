// A Kerberos batch garbled twice (dual_garbling.hpp) in two halves: the garbling, which
// needs no input, made ahead of time while the servers are idle, and a small online part once
// a job arrives. A protected user's login runs three such jobs one after the other; garbled
// while the login waits, the garbling and the megabytes of tables on the way to the evaluator
// are most of its time (docs/benchmarks/kdc-users.md). Prepared, the login waits only for the
// input labels, the evaluation and the output labels.
//
// Why it may be made ahead. In this garbling no table depends on an input: both garblers draw
// delta, constant 0's label and every input wire's zero label from the key they share, under
// the id of the batch that garbles; inputs only pick which label of each input wire party 2 gets.
//
// The preparing batch (no jobs, one instance of its circuit,
// numbered like any batch, so its garbling's tweaks repeat no other's):
// - party 0 sends party 1 the commitments to the input labels of a_0, a_1, c_A and c_B, then
//   streams the tables; party 2 garbles the same into a digest with the same commitments and
//   sends it, signed, through party 0;
// - party 1 checks the signature and that the digest of what it received is party 2's, and keeps
//   the tables and commitments; the garblers keep their output wires' zero labels;
// - party 1 confirms in a signed outcome, Kept, through party 2, who kept its part before passing
//   it on. The leader (party 0) names the garbling in a batch only once that confirmation
//   arrived: then all three hold it. When the digests differ, party 1 refuses with the digest's
//   key instead and the three conclude who deviated as online (garbling_blame.hpp).
//
// The batch that uses it (one job, Batch::prepared naming the preparing batch of the same
// epoch): each server takes the garbling out of its store first
// (prepared_garblings.hpp), so no garbling is ever evaluated for a second input, whoever asks;
// a server that does not hold it refuses the batch with Regrouping, which a client sends again
// (the leader then garbles online). Then, as in the online form, party 2 sends the labels of
// a_1 and c_B padded, party 0 those of a_0, c_A, a_2 and the public record, and party 1 checks
// the labels of a_0, a_1, c_A and c_B against the commitments. The labels of a_2 and of the
// public record, which both garblers know, were covered online by party 2's digest; here party
// 2's signature covers them instead, beside its padded labels, so party 0 cannot alter them
// (and checks the signature against its own labels before passing it on).
// Everything after the evaluation (output labels, masks c_A and c_B drawn per running batch,
// replicated shares of the result) is the online form's.
//
// What a deviation can learn is what it could online: each check compares what one server sent
// with what the protocol fixes, never depending on a secret the deviating server does not know;
// the preparing batch holds no secret at all. The garbling's inputs are chosen after party 1
// holds its tables, but not by party 1: the key's shares are fixed, and the public record comes
// from the KDC, which sees no garbling.
#pragma once

#include "common/error.hpp"
#include "protocol/gc3/batch.hpp"
#include "protocol/gc3/dual_garbling.hpp"
#include "protocol/gc3/prepared_garblings.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::gc3 {

// The server holds no garbling the batch names: nothing was computed, and the job is worth
// sending again (the engine answers Regrouping).
class PreparedGarblingMissing : public RetryableError {
 public:
  using RetryableError::RetryableError;
};

// Runs `batch` (one that garbles ahead: one instance, no inputs) as party `party` and keeps this
// server's part in `store`, under the batch's id and program name. Throws VerificationError for a failed check,
// PeerError for a silent peer, Error when the store has no room.
void prepare_dual_garbling(const Batch& batch, int party, const GarblingKeys& keys, PreparedGarblings& store,
                           two_party::Channel& to_next, two_party::Channel& from_previous);

// Runs `batch` (one job, one instance) with the garbling the batch `batch.prepared` made, taken
// out of `store`; returns this party's parts of the result as evaluate_dual_garbling does. Throws PreparedGarblingMissing,
// VerificationError, PeerError or Error.
DualGarblingOutput evaluate_prepared_garbling(const Batch& batch, int party, const GarblingKeys& keys,
                                              PreparedGarblings& store, two_party::Channel& to_next,
                                              two_party::Channel& from_previous);

}  // namespace mpc::gc3
