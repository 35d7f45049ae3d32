// The AND check's messages after the proof, and what each server concludes from them when a
// check fails: which peer it can show deviated (a dispute, node/disputes.hpp), so that a server
// that makes the check fail in every batch is taken out of service instead of stopping it.
//
// With prover P, its verifiers V+ (P+1, which received P's AND messages) and V- (P-1), and the
// ring P -> V+ -> V- -> P:
//   3. V+ -> V-: its findings, signed with a digest of what it based them on: its receipt of P's
//      last layer and the seed share it drew over it (common/identity_signature.hpp).
//   4. V- -> P: the verdict, signed: Pass with the pass token for V+, or Rejected with V+'s
//      signed evidence, or FindingsRefused when V+'s signature or seed share fails (V- then
//      holds V+ to have deviated: V+ signed what it sent).
//   5. P -> V+: the verdict as received, whether its signature failed at P, and P's answer to a
//      rejection; signed by P whenever it is not a clean pass.
//   6. V+ -> V-: P's signed relay when it was not a clean pass, so that V- learns P's answer.
//
// Why each conclusion names a server that deviated (every server checks what it receives, and a
// signature binds its signer to what it sent, so a relay cannot change what it passes on):
// - V- rejects, V+'s signature or share fails: V+ signed a receipt and share that are not the
//   ones V- received and drew; V- names V+.
// - V- rejects with valid evidence; P audits it on its own copy of both verifiers' halves (P
//   holds every component each verifier uses for its statement):
//   - the evidence's signature fails: V- checked it before sending; P names V-;
//   - the receipt is not of the layer P sent: V+ signed a false receipt; P names V+;
//   - the seed share is not the one V- sent P: V- drew the share V+ signed, so it sent P another;
//     P names V-;
//   - V+'s findings differ from those P computes for V+'s half: P names V+;
//   - the findings are right and V-'s half passes them: V- rejected a valid proof; P names V-;
//   - otherwise P's own messages were wrong: it answers that it accuses neither, and V- names P.
//   Whatever P answers, V- names P unless P accuses V+, and V+ names P if it does: a prover that
//   deviated is named by an honest verifier whatever it answers, and an honest prover's answer
//   names the verifier that deviated.
// - P finds V-'s verdict signature invalid: V- sent it; P names V- and marks the relay.
// - V+ gets a relay that is not a clean pass: V-'s signature valid on a wrong token or on a
//   refusal of V+'s honest findings names V-; a relay P should have marked (invalid signature,
//   unmarked) or marked falsely (valid signature) names P, as does P's accusation of V+; a
//   relay P should have signed and did not names P.
// - V- gets P's relay from V+: P's signature failing names V+ (it checks before forwarding); a
//   relay that changes V-'s verdict or marks its valid signature names P.
// A server that names a peer holds it in a dispute: with one deviating server, every dispute an
// honest server claims contains it, and a claim by the deviating server contains itself.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/identity_signature.hpp"
#include "protocol/rss3/and_check.hpp"

namespace mpc::rss3::and_check {

enum class VerdictStatus : std::uint8_t { Pass = 0, Rejected = 1, FindingsRefused = 2 };
enum class AuditAnswer : std::uint8_t { NotAsked = 0, AccusesPlus = 1, AccusesMinus = 2, AccusesNeither = 3 };

// What V+ signed with its findings, as V- received and drew it.
struct Evidence {
  Seed receipt{}, share{}, findings_hash{};
  IdentitySignature signature{};
};

// Each message's signature is made by encode_* and checked on its bytes (*_signed_by).
struct Verdict {
  VerdictStatus status = VerdictStatus::Pass;
  Token token{};        // the pass token (Pass only)
  Evidence evidence{};  // Rejected and FindingsRefused only
};

struct Relay {
  std::vector<std::uint8_t> verdict;  // as P received it (kVerdictBytes)
  bool verdict_signature_failed = false;
  AuditAnswer answer = AuditAnswer::NotAsked;
};

enum class ForwardKind : std::uint8_t { Nothing = 0, Relay = 1, RelayRefused = 2 };

inline constexpr std::size_t kSignatureBytes = 64;
inline constexpr std::size_t kEvidenceBytes = 3 * 32 + kSignatureBytes;
inline constexpr std::size_t kVerdictBytes = 1 + 16 + kEvidenceBytes + kSignatureBytes;
inline constexpr std::size_t kRelayBytes = kVerdictBytes + 2 + kSignatureBytes;
inline constexpr std::size_t kForwardBytes = 1 + kRelayBytes;

// Digests that get signed, each naming what it is and the prover's batch.
Seed findings_hash(const Context& context, std::span<const std::uint8_t> findings);
Seed findings_statement(const Context& context, const Seed& receipt, const Seed& share, const Seed& findings_hash);
Seed verdict_statement(const Context& context, std::span<const std::uint8_t> verdict_without_signature);
Seed relay_statement(const Context& context, std::span<const std::uint8_t> relay_without_signature);

std::vector<std::uint8_t> encode_verdict(const Context& context, const Verdict& verdict, const IdentitySigner& signer);
// nullopt: not a verdict (an unknown status); the signature is not checked here.
std::optional<Verdict> decode_verdict(std::span<const std::uint8_t> bytes);
bool verdict_signed_by(const Context& context, std::span<const std::uint8_t> verdict_bytes,
                       std::span<const std::uint8_t, 32> signer);
// True when a Pass verdict carries nothing but its token and signature.
bool clean_pass(const Verdict& verdict);

// `signer`: null for a clean pass, whose relay goes unsigned (its signature bytes zero).
std::vector<std::uint8_t> encode_relay(const Context& context, const Relay& relay, const IdentitySigner* signer);
std::optional<Relay> decode_relay(std::span<const std::uint8_t> bytes);
bool relay_signed_by(const Context& context, std::span<const std::uint8_t> relay_bytes,
                     std::span<const std::uint8_t, 32> signer);

std::vector<std::uint8_t> encode_forward(ForwardKind kind, std::span<const std::uint8_t> relay_bytes);

}  // namespace mpc::rss3::and_check
