// Who deviated, when a Kerberos batch garbled twice (dual_garbling.hpp, prepared_garbling.hpp)
// fails a check. Every check there compares what one server sent with what the protocol fixes;
// the messages that travel through a third server are signed under the servers' X25519
// identities (common/identity_signature.hpp) rather than MAC'd, so the server that relays one can
// check it too, and each failure is put down to a server that must have deviated. A conclusion
// is a claim (DeviationFound): this server's dispute with the server it names (node/disputes.hpp).
//
// The messages (party 0 and party 2 garble, party 1 evaluates; each goes to the next party):
// - the second garbler's digest, 2 -> 0 -> 1: the digest of its garbling, a commitment to the key
//   of the digest (BLAKE2b of the key under the batch's id) and its signature over both and over
//   what else of its own it sends through party 0 (its padded labels);
// - the evaluator's outcome, 1 -> 2 -> 0, signed: Evaluated with the output labels, Kept (a
//   garbling prepared ahead is kept) or GarblingsDiffer with the key of the digest, which only
//   parties 1 and 2 held and which digests no other batch;
// - after GarblingsDiffer, the first garbler's answer, 0 -> 1 -> 2, signed over the verdict, the
//   key and party 2's digest: EvaluatorLied or SecondGarblerLied.
//
// Conclusions, and why the server named deviated (the conclusion is drawn by an honest server;
// a deviating one may claim anything, which costs it a dispute of its own):
// - a relaying party finds the message it is to pass on not signed by its maker: it names the
//   maker, who signs what it sends when honest. The next party finds it not signed: it names the
//   relaying party, which, honest, checked the same signature and passed on nothing else;
// - party 1 finds party 2's key commitment not that of the key it shares with party 2: it names
//   party 2, who signed it;
// - an input label from party 0 or party 2 fails its commitment (checked once the digest shows
//   the commitments are both garblers'): party 1 names the sender, who signs (party 2) or sends
//   directly (party 0) the labels; whether the check fails depends only on what that sender
//   sent, never on a bit it does not know;
// - a garbler finds an output label signed by party 1 that is neither label of its wire: it
//   names party 1 (a garbled circuit's authenticity: an honest evaluator holds only the right one);
// - party 1 finds the digest of the garbling party 0 sent differs from party 2's: one of the
//   garblers deviated, and party 1 cannot tell which (it may not learn the garbling's seed, which
//   would open its inputs). It tells both garblers, with the key. Party 0 checks the key against
//   party 2's signed commitment (a key that is not committed names party 1, who checked the
//   commitment before refusing), digests the garbling it made under that key and answers:
//   EvaluatorLied when its digest is party 2's (then the stream it sent digests to that too, and
//   an honest evaluator would have found no difference: it names party 1), SecondGarblerLied
//   otherwise (party 2 signed a digest of another garbling than the one both draw from their
//   shared key: it names party 2). Party 1, holding party 0's stream honest or not, names party 0
//   when the answer is EvaluatorLied, and no one when it is SecondGarblerLied (the claim is then
//   party 0's, against party 2); party 2, whose own digest is honest, names party 0 when the answer
//   is SecondGarblerLied, and no one when it is EvaluatorLied (the claim is then party 0's,
//   against party 1).
//
// So whichever server deviates, every claim an honest server makes names it, and a dispute that
// contains it forms unless it stops answering in the middle (a timeout names nobody: a network
// fault must not set two honest servers against each other). The key of the digest is shown only
// once the batch is refused and digests nothing else: what it protected, a stream party 0 could
// not tailor to a digest it could not compute, is over.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "common/identity_signature.hpp"
#include "common/secret.hpp"
#include "protocol/gc3/batch.hpp"
#include "protocol/gc3/garbling_digest.hpp"
#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::gc3::blame {

using Digest = GarblingDigest::Value;
using Parts = std::initializer_list<std::span<const std::uint8_t>>;

inline constexpr std::size_t kSignatureBytes = 64;
inline constexpr std::size_t kKeyCommitmentBytes = 32;

// `party`'s signature of a message of batch `id`: the statement signed is BLAKE2b-256 of a
// domain, `purpose`, the id and the parts, each with its length.
IdentitySignature sign(const PartyIdentities& identities, std::string_view purpose, const BatchId& id, Parts parts);
[[nodiscard]] bool signed_by(const PartyIdentities& identities, int party, std::string_view purpose, const BatchId& id,
                             Parts parts, const IdentitySignature& signature);

// Throws this party's conclusion: DeviationFound naming `named` (bit p of claims) or no one (-1),
// `concluded` when every party ran the messages to their end.
[[noreturn]] void conclude(int party, int named, const std::string& what, const std::string& check, bool concluded);

// The key of the batch's garbling digest, drawn from the key parties 1 and 2 share, and the
// commitment to it.
SecretBytes digest_key(const rss3::PrfKey& evaluator_and_second_garbler, const BatchId& id);
std::array<std::uint8_t, kKeyCommitmentBytes> key_commitment(std::span<const std::uint8_t> key, const BatchId& id);

// The second garbler's digest as it travels 2 -> 0 -> 1.
struct SecondGarblerDigest {
  Digest digest{};
  std::array<std::uint8_t, kKeyCommitmentBytes> commitment{};
  IdentitySignature signature{};
};

// Party 2: sends its digest, signed together with `also_signed` (what else it sends through
// party 0 in this batch).
void send_second_garbler_digest(const PartyIdentities& identities, const BatchId& id, std::span<const std::uint8_t> key,
                                const Digest& digest, Parts also_signed, two_party::Channel& to_next);
// Party 0: receives it (waiting `wait` past the channel's timeout), checks party 2's signature
// over it and `also_signed` (as party 0 received or knows them) and passes it on; names party 2
// when the signature fails.
SecondGarblerDigest relay_second_garbler_digest(const PartyIdentities& identities, const BatchId& id,
                                                Parts also_signed, two_party::Channel& from_previous,
                                                two_party::Channel& to_next, std::chrono::milliseconds wait);
// Party 1: receives it relayed and checks the signature (names party 0) and the commitment to
// `key` (names party 2).
SecondGarblerDigest receive_second_garbler_digest(const PartyIdentities& identities, const BatchId& id,
                                                  std::span<const std::uint8_t> key, Parts also_signed,
                                                  two_party::Channel& from_previous, std::chrono::milliseconds wait);

enum class Outcome : std::uint8_t { Evaluated = 1, Kept = 2, GarblingsDiffer = 3 };

// What a party expects of the evaluator's outcome: the success it may send (Evaluated with
// `evaluated_bytes` of output labels, or Kept) and whether a digest was compared (only then may
// it send GarblingsDiffer).
struct OutcomeForm {
  Outcome success = Outcome::Evaluated;
  std::size_t evaluated_bytes = 0;
  bool digest_compared = true;
};

struct ReceivedOutcome {
  Outcome outcome = Outcome::Evaluated;
  SecretBytes payload;  // the output labels or the key of the digest; wiped
  IdentitySignature signature{};
};

// Party 1: sends its outcome, signed.
void send_outcome(const PartyIdentities& identities, const BatchId& id, Outcome outcome,
                  std::span<const std::uint8_t> payload, two_party::Channel& to_next);
// Party 2: receives it and checks party 1's signature and form (names party 1).
ReceivedOutcome receive_from_evaluator(const PartyIdentities& identities, const BatchId& id, const OutcomeForm& form,
                                       two_party::Channel& from_previous, std::chrono::milliseconds wait);
// Party 2: passes a checked outcome on to party 0.
void pass_on(const ReceivedOutcome& outcome, two_party::Channel& to_next);
// Party 0: receives it relayed by party 2 and checks it (names party 2).
ReceivedOutcome receive_relayed_outcome(const PartyIdentities& identities, const BatchId& id, const OutcomeForm& form,
                                        two_party::Channel& from_previous, std::chrono::milliseconds wait);

enum class Answer : std::uint8_t { EvaluatorLied = 1, SecondGarblerLied = 2 };

// Party 0, told GarblingsDiffer with `key`: checks the key against party 2's commitment, digests
// its own garbling under it (`own_digest`), answers party 1 and throws its conclusion.
[[noreturn]] void first_garbler_concludes(const PartyIdentities& identities, const BatchId& id,
                                          std::span<const std::uint8_t> key, const SecondGarblerDigest& second,
                                          const std::function<Digest(std::span<const std::uint8_t>)>& own_digest,
                                          two_party::Channel& to_next);
// Party 1, having sent GarblingsDiffer: receives party 0's answer, passes it on and throws its
// conclusion.
[[noreturn]] void evaluator_concludes(const PartyIdentities& identities, const BatchId& id,
                                      std::span<const std::uint8_t> key, const Digest& second_digest,
                                      two_party::Channel& from_previous, two_party::Channel& to_next,
                                      std::chrono::milliseconds wait);
// Party 2, having passed GarblingsDiffer on: receives party 0's answer through party 1 and throws
// its conclusion.
[[noreturn]] void second_garbler_concludes(const PartyIdentities& identities, const BatchId& id,
                                           std::span<const std::uint8_t> key, const Digest& own_digest,
                                           two_party::Channel& from_previous, std::chrono::milliseconds wait);

}  // namespace mpc::gc3::blame
