// A Kerberos batch of three servers evaluated as a garbled circuit (wire::KrbEvaluation::Garbled,
// GarbledTwice, and the two halves of a garbling made ahead, PrepareTwice and PreparedTwice): the
// engine's side of the protocols of protocol/gc3. It checks the batch's shape against its
// circuit, hands the protocol the batch's id, program and inputs (its jobs' key shares and public
// records), turns the protocol's result into the batch's masked output shares, and what the
// protocol throws into the batch's failure.
#pragma once

#include "common/log.hpp"
#include "engines/three_party/batch_worker.hpp"
#include "engines/three_party/prf_keys.hpp"
#include "protocol/gc3/prepared_garblings.hpp"
#include "protocol/gc3/single_garbling.hpp"
#include "protocol/two_party/channel.hpp"
#include "settings/server_settings.hpp"

namespace mpc::three_party_engine {

// The party that garbles, evaluates and supplies labels in a batch garbled once.
using gc3::kEvaluatingParty;
using gc3::kGarblingParty;
using gc3::kLabellingParty;

// The garbling number of the batch's garbling (gc3::garbling_number).
std::uint64_t batch_garbling_number(const wire::BatchHeader& header);

// Evaluates a Kerberos batch (task.program set, no secret records, nothing kept) as the header
// says: garbled once (wire::KrbEvaluation::Garbled, protocol/gc3/single_garbling.hpp) or twice
// (GarbledTwice, protocol/gc3/dual_garbling.hpp). `to_next` carries what this party sends to
// party i+1, `from_previous` what party i-1 sends. Returns the masked output shares, laid out as
// evaluate_batch's, or the failure (a peer's silence past the channel's timeout is a failure,
// not a hang; a failed check of active security is failure VerificationFailed, and so is a
// batch garbled once at a party whose `security` is Active). `party`: this server's 0-based index.
// PrepareTwice and PreparedTwice batches (protocol/gc3/prepared_garbling.hpp) keep and take
// garblings in `prepared`, and fail without one; a server that does not hold the garbling a batch
// names fails it with Regrouping.
BatchResult evaluate_garbled_batch(BatchTask& task, int party, settings::Security security,
                                   const PartyPrfKeys& prf_keys, two_party::Channel& to_next,
                                   two_party::Channel& from_previous, const Logger& log,
                                   PreparedGarblings* prepared = nullptr);

}  // namespace mpc::three_party_engine
