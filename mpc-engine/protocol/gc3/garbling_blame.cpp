#include "protocol/gc3/garbling_blame.hpp"

#include <sodium.h>

#include <cstring>

#include "protocol/gc3/batch_streams.hpp"

namespace mpc::gc3::blame {
namespace {

constexpr std::string_view kDomain = "mpc-kdc gc3 signed messages v1";
constexpr std::string_view kDigestPurpose = "dual garbling: digest";
constexpr std::string_view kDigestMessage = "second garbler's digest";
constexpr std::string_view kOutcomeMessage = "evaluator's outcome";
constexpr std::string_view kAnswerMessage = "first garbler's answer";
constexpr std::string_view kCommitmentPurpose = "dual garbling: digest key commitment";
constexpr std::string_view kDiffer = "the garbling party 1 sent differs from party 3's";

using PartList = std::vector<std::span<const std::uint8_t>>;

std::array<std::uint8_t, 32> statement(std::string_view purpose, const BatchId& id, const PartList& parts) {
  crypto_generichash_state state;
  crypto_generichash_init(&state, nullptr, 0, 32);
  auto add = [&state](std::span<const std::uint8_t> bytes) {
    std::uint8_t length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(bytes.size()) >> (8 * i));
    crypto_generichash_update(&state, length, sizeof length);
    crypto_generichash_update(&state, bytes.data(), bytes.size());
  };
  auto text = [](std::string_view t) { return std::span(reinterpret_cast<const std::uint8_t*>(t.data()), t.size()); };
  add(text(kDomain));
  add(text(purpose));
  add(batch_id_bytes(id));
  for (const auto part : parts) add(part);
  std::array<std::uint8_t, 32> out{};
  crypto_generichash_final(&state, out.data(), out.size());
  return out;
}

IdentitySignature sign_list(const PartyIdentities& identities, std::string_view purpose, const BatchId& id,
                            const PartList& parts) {
  if (identities.own == nullptr) throw Error(Component::Server, "a garbling batch's message is signed without a signer");
  return identities.own->sign(statement(purpose, id, parts));
}

bool signed_list(const PartyIdentities& identities, int party, std::string_view purpose, const BatchId& id,
                 const PartList& parts, const IdentitySignature& signature) {
  return identity_signature_valid(identities.public_keys[static_cast<std::size_t>(party)],
                                  statement(purpose, id, parts), signature);
}

std::string party_name(int party) { return "party " + std::to_string(party + 1); }

std::span<const std::uint8_t> byte_of(const std::uint8_t& b) { return {&b, 1}; }

// The answer's statement binds it to the refusal it answers.
bool answer_signed(const PartyIdentities& identities, const BatchId& id, std::uint8_t verdict,
                   std::span<const std::uint8_t> key, const Digest& second_digest, const IdentitySignature& signature) {
  return signed_by(identities, 0, kAnswerMessage, id, {byte_of(verdict), key, second_digest}, signature);
}

struct AnswerMessage {
  std::uint8_t verdict = 0;
  IdentitySignature signature{};
};

AnswerMessage receive_answer(two_party::Channel& from_previous, std::chrono::milliseconds wait) {
  AnswerMessage answer;
  from_previous.allow_extra_wait(wait);
  from_previous.receive(std::span(&answer.verdict, 1));
  from_previous.receive(answer.signature);
  return answer;
}

}  // namespace

IdentitySignature sign(const PartyIdentities& identities, std::string_view purpose, const BatchId& id, Parts parts) {
  return sign_list(identities, purpose, id, PartList(parts));
}

bool signed_by(const PartyIdentities& identities, int party, std::string_view purpose, const BatchId& id, Parts parts,
               const IdentitySignature& signature) {
  return signed_list(identities, party, purpose, id, PartList(parts), signature);
}

void conclude(int party, int named, const std::string& what, const std::string& check, bool concluded) {
  const std::uint8_t claims = named >= 0 ? static_cast<std::uint8_t>(1u << named) : 0;
  std::string message = party_name(party) + ": " + what;
  if (named >= 0) message += "; " + party_name(named) + " deviated";
  throw DeviationFound(Component::Protocol, message, check, named, claims, concluded);
}

SecretBytes digest_key(const rss3::PrfKey& evaluator_and_second_garbler, const BatchId& id) {
  return batch_stream(evaluator_and_second_garbler, kDigestPurpose, id, GarblingDigest::kKeyBytes);
}

std::array<std::uint8_t, kKeyCommitmentBytes> key_commitment(std::span<const std::uint8_t> key, const BatchId& id) {
  return statement(kCommitmentPurpose, id, {key});
}

void send_second_garbler_digest(const PartyIdentities& identities, const BatchId& id, std::span<const std::uint8_t> key,
                                const Digest& digest, Parts also_signed, two_party::Channel& to_next) {
  const auto commitment = key_commitment(key, id);
  PartList parts(also_signed);
  parts.push_back(digest);
  parts.push_back(commitment);
  const IdentitySignature signature = sign_list(identities, kDigestMessage, id, parts);
  to_next.send(digest);
  to_next.send(commitment);
  to_next.send(signature);
  to_next.flush();
}

namespace {

bool digest_signed(const PartyIdentities& identities, const BatchId& id, Parts also_signed,
                   const SecondGarblerDigest& message) {
  PartList parts(also_signed);
  parts.push_back(message.digest);
  parts.push_back(message.commitment);
  return signed_list(identities, 2, kDigestMessage, id, parts, message.signature);
}

SecondGarblerDigest receive_digest_message(two_party::Channel& from_previous, std::chrono::milliseconds wait) {
  SecondGarblerDigest message;
  from_previous.allow_extra_wait(wait);
  from_previous.receive(message.digest);
  from_previous.receive(message.commitment);
  from_previous.receive(message.signature);
  return message;
}

}  // namespace

SecondGarblerDigest relay_second_garbler_digest(const PartyIdentities& identities, const BatchId& id,
                                                Parts also_signed, two_party::Channel& from_previous,
                                                two_party::Channel& to_next, std::chrono::milliseconds wait) {
  const SecondGarblerDigest message = receive_digest_message(from_previous, wait);
  if (!digest_signed(identities, id, also_signed, message))
    conclude(0, 2, "party 3's digest, or what it sends through party 1, is not signed by party 3", "relay_signature",
             false);
  to_next.send(message.digest);
  to_next.send(message.commitment);
  to_next.send(message.signature);
  to_next.flush();
  return message;
}

SecondGarblerDigest receive_second_garbler_digest(const PartyIdentities& identities, const BatchId& id,
                                                  std::span<const std::uint8_t> key, Parts also_signed,
                                                  two_party::Channel& from_previous, std::chrono::milliseconds wait) {
  const SecondGarblerDigest message = receive_digest_message(from_previous, wait);
  if (!digest_signed(identities, id, also_signed, message))
    conclude(1, 0, "party 3's messages relayed by party 1 are not signed by party 3", "relay_signature", false);
  const auto expected = key_commitment(key, id);
  if (sodium_memcmp(expected.data(), message.commitment.data(), expected.size()) != 0)
    conclude(1, 2, "party 3 committed to another key of the garbling digest than the one it shares with party 2",
             "digest_key", false);
  return message;
}

void send_outcome(const PartyIdentities& identities, const BatchId& id, Outcome outcome,
                  std::span<const std::uint8_t> payload, two_party::Channel& to_next) {
  const auto status = static_cast<std::uint8_t>(outcome);
  const IdentitySignature signature = sign(identities, kOutcomeMessage, id, {byte_of(status), payload});
  to_next.send(byte_of(status));
  to_next.send(payload);
  to_next.send(signature);
  to_next.flush();
}

namespace {

// Reads an outcome from `from_previous`; `relayed_by` is named when it is malformed or unsigned
// (the evaluator itself when it comes straight from it).
ReceivedOutcome read_outcome(const PartyIdentities& identities, const BatchId& id, const OutcomeForm& form,
                             two_party::Channel& from_previous, std::chrono::milliseconds wait, int reader,
                             int relayed_by) {
  std::uint8_t status = 0;
  from_previous.allow_extra_wait(wait);
  from_previous.receive(std::span(&status, 1));
  ReceivedOutcome received;
  received.outcome = static_cast<Outcome>(status);
  std::size_t bytes = 0;
  if (received.outcome == form.success) {
    bytes = form.success == Outcome::Evaluated ? form.evaluated_bytes : 0;
  } else if (received.outcome == Outcome::GarblingsDiffer && form.digest_compared) {
    bytes = GarblingDigest::kKeyBytes;
  } else {
    conclude(reader, relayed_by, "party 2's outcome has no form this batch allows", "outcome_signature", false);
  }
  received.payload = SecretBytes(bytes);
  from_previous.receive(received.payload.span());
  from_previous.receive(received.signature);
  if (!signed_by(identities, 1, kOutcomeMessage, id, {byte_of(status), received.payload.span()}, received.signature))
    conclude(reader, relayed_by,
             relayed_by == 1 ? "party 2's outcome is not signed by party 2"
                             : "party 2's outcome relayed by party 3 is not signed by party 2",
             "outcome_signature", false);
  return received;
}

}  // namespace

ReceivedOutcome receive_from_evaluator(const PartyIdentities& identities, const BatchId& id, const OutcomeForm& form,
                                       two_party::Channel& from_previous, std::chrono::milliseconds wait) {
  return read_outcome(identities, id, form, from_previous, wait, 2, 1);
}

void pass_on(const ReceivedOutcome& outcome, two_party::Channel& to_next) {
  const auto status = static_cast<std::uint8_t>(outcome.outcome);
  to_next.send(byte_of(status));
  to_next.send(outcome.payload.span());
  to_next.send(outcome.signature);
  to_next.flush();
}

ReceivedOutcome receive_relayed_outcome(const PartyIdentities& identities, const BatchId& id, const OutcomeForm& form,
                                        two_party::Channel& from_previous, std::chrono::milliseconds wait) {
  return read_outcome(identities, id, form, from_previous, wait, 0, 2);
}

void first_garbler_concludes(const PartyIdentities& identities, const BatchId& id, std::span<const std::uint8_t> key,
                             const SecondGarblerDigest& second,
                             const std::function<Digest(std::span<const std::uint8_t>)>& own_digest,
                             two_party::Channel& to_next) {
  const auto committed = key_commitment(key, id);
  const bool key_committed = sodium_memcmp(committed.data(), second.commitment.data(), committed.size()) == 0;
  bool same = false;
  if (key_committed) {
    const Digest mine = own_digest(key);
    same = sodium_memcmp(mine.data(), second.digest.data(), mine.size()) == 0;
  }
  const Answer answer = !key_committed || same ? Answer::EvaluatorLied : Answer::SecondGarblerLied;
  const auto verdict = static_cast<std::uint8_t>(answer);
  to_next.send(byte_of(verdict));
  to_next.send(sign(identities, kAnswerMessage, id, {byte_of(verdict), key, second.digest}));
  to_next.flush();
  const std::string told = "party 2 reports that " + std::string(kDiffer);
  if (!key_committed) conclude(0, 1, told + ", with a key of the digest party 3 did not commit to", "digest_key", true);
  if (same) conclude(0, 1, told + ", yet party 3's digest is that of this party's garbling", "garbling_digest", true);
  conclude(0, 2, told + ", and party 3's digest is not that of this party's garbling", "garbling_digest", true);
}

void evaluator_concludes(const PartyIdentities& identities, const BatchId& id, std::span<const std::uint8_t> key,
                         const Digest& second_digest, two_party::Channel& from_previous, two_party::Channel& to_next,
                         std::chrono::milliseconds wait) {
  const AnswerMessage answer = receive_answer(from_previous, wait);
  const std::string differ = std::string(kDiffer) + " (tables, labels or commitments)";
  if (!answer_signed(identities, id, answer.verdict, key, second_digest, answer.signature))
    conclude(1, 0, differ + ", and party 1's answer is not signed by it", "garbling_digest", false);
  to_next.send(byte_of(answer.verdict));
  to_next.send(answer.signature);
  to_next.flush();
  if (answer.verdict == static_cast<std::uint8_t>(Answer::SecondGarblerLied))
    conclude(1, -1, differ + "; party 1 answers that party 3's digest is not that of its garbling", "garbling_digest",
             true);
  conclude(1, 0, differ + ", and party 1 answers that its stream was party 3's", "garbling_digest", true);
}

void second_garbler_concludes(const PartyIdentities& identities, const BatchId& id, std::span<const std::uint8_t> key,
                              const Digest& own_digest, two_party::Channel& from_previous,
                              std::chrono::milliseconds wait) {
  const AnswerMessage answer = receive_answer(from_previous, wait);
  const std::string told = "party 2 reports that " + std::string(kDiffer);
  if (!answer_signed(identities, id, answer.verdict, key, own_digest, answer.signature))
    conclude(2, 1, told + ", and party 1's answer relayed by party 2 is not signed by party 1", "garbling_digest",
             true);
  if (answer.verdict == static_cast<std::uint8_t>(Answer::SecondGarblerLied))
    conclude(2, 0, told + ", and party 1 answers that this party's digest is not that of its garbling",
             "garbling_digest", true);
  if (answer.verdict != static_cast<std::uint8_t>(Answer::EvaluatorLied))
    conclude(2, 0, told + ", and party 1 signed an answer that is neither", "garbling_digest", true);
  conclude(2, -1, told + "; party 1 answers that this party's digest is that of its garbling", "garbling_digest", true);
}

}  // namespace mpc::gc3::blame
