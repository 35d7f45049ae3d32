#include "protocol/rss3/and_check_blame.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstring>

#include "common/secret.hpp"

namespace mpc::rss3::and_check {
namespace {

constexpr char kBlameDomain[] = "mpc-kdc rss3 AND check signed messages v1";

class Digest {
 public:
  Digest(const Context& context, const char* what) {
    crypto_generichash_init(&state_, nullptr, 0, 32);
    text(kBlameDomain).text(what).u64(context.nonce.epoch).u64(context.nonce.sequence);
    u64(static_cast<std::uint64_t>(context.prover)).u64(context.words);
  }
  Digest& bytes(std::span<const std::uint8_t> data) {
    crypto_generichash_update(&state_, data.data(), data.size());
    return *this;
  }
  Digest& text(const char* t) { return bytes({reinterpret_cast<const std::uint8_t*>(t), std::strlen(t) + 1}); }
  Digest& u64(std::uint64_t v) {
    std::uint8_t le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<std::uint8_t>(v >> (8 * i));
    return bytes(le);
  }
  Seed finish() {
    Seed out;
    crypto_generichash_final(&state_, out.data(), out.size());
    return out;
  }

 private:
  crypto_generichash_state state_;
};

void put(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

IdentitySignature signature_at(std::span<const std::uint8_t> bytes, std::size_t at) {
  IdentitySignature s;
  std::memcpy(s.data(), bytes.data() + at, s.size());
  return s;
}

// Whether the last kSignatureBytes of `bytes` (of `size` bytes in all) sign `statement` of the rest.
bool body_signed_by(const Context& context, std::span<const std::uint8_t> bytes, std::size_t size,
                    Seed (*statement)(const Context&, std::span<const std::uint8_t>),
                    std::span<const std::uint8_t, 32> signer) {
  if (bytes.size() != size) return false;
  const std::size_t body = size - kSignatureBytes;
  return identity_signature_valid(signer, statement(context, bytes.first(body)), signature_at(bytes, body));
}

bool all_zero(std::span<const std::uint8_t> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

}  // namespace

Seed findings_hash(const Context& context, std::span<const std::uint8_t> findings) {
  return Digest(context, "findings").bytes(findings).finish();
}

Seed findings_statement(const Context& context, const Seed& receipt, const Seed& share, const Seed& hash) {
  return Digest(context, "V+ findings statement").bytes(receipt).bytes(share).bytes(hash).finish();
}

Seed verdict_statement(const Context& context, std::span<const std::uint8_t> verdict_without_signature) {
  return Digest(context, "V- verdict statement").bytes(verdict_without_signature).finish();
}

Seed relay_statement(const Context& context, std::span<const std::uint8_t> relay_without_signature) {
  return Digest(context, "prover relay statement").bytes(relay_without_signature).finish();
}

std::vector<std::uint8_t> encode_verdict(const Context& context, const Verdict& verdict, const IdentitySigner& signer) {
  std::vector<std::uint8_t> out;
  out.reserve(kVerdictBytes);
  out.push_back(static_cast<std::uint8_t>(verdict.status));
  put(out, verdict.token);
  put(out, verdict.evidence.receipt);
  put(out, verdict.evidence.share);
  put(out, verdict.evidence.findings_hash);
  put(out, verdict.evidence.signature);
  put(out, signer.sign(verdict_statement(context, out)));
  return out;
}

std::optional<Verdict> decode_verdict(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kVerdictBytes || bytes[0] > static_cast<std::uint8_t>(VerdictStatus::FindingsRefused))
    return std::nullopt;
  Verdict v;
  v.status = static_cast<VerdictStatus>(bytes[0]);
  std::size_t at = 1;
  std::memcpy(v.token.data(), bytes.data() + at, v.token.size());
  at += v.token.size();
  for (Seed* seed : {&v.evidence.receipt, &v.evidence.share, &v.evidence.findings_hash}) {
    std::memcpy(seed->data(), bytes.data() + at, seed->size());
    at += seed->size();
  }
  v.evidence.signature = signature_at(bytes, at);
  return v;
}

bool verdict_signed_by(const Context& context, std::span<const std::uint8_t> verdict_bytes,
                       std::span<const std::uint8_t, 32> signer) {
  return body_signed_by(context, verdict_bytes, kVerdictBytes, verdict_statement, signer);
}

bool clean_pass(const Verdict& verdict) {
  if (verdict.status != VerdictStatus::Pass) return false;
  const Evidence& e = verdict.evidence;
  return all_zero(e.receipt) && all_zero(e.share) && all_zero(e.findings_hash) && all_zero(e.signature);
}

std::vector<std::uint8_t> encode_relay(const Context& context, const Relay& relay, const IdentitySigner* signer) {
  std::vector<std::uint8_t> out;
  out.reserve(kRelayBytes);
  put(out, relay.verdict);
  out.resize(kVerdictBytes, 0);
  out.push_back(relay.verdict_signature_failed ? 1 : 0);
  out.push_back(static_cast<std::uint8_t>(relay.answer));
  IdentitySignature signature{};
  if (signer != nullptr) signature = signer->sign(relay_statement(context, out));
  put(out, signature);
  return out;
}

std::optional<Relay> decode_relay(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kRelayBytes) return std::nullopt;
  const std::uint8_t mark = bytes[kVerdictBytes], answer = bytes[kVerdictBytes + 1];
  if (mark > 1 || answer > static_cast<std::uint8_t>(AuditAnswer::AccusesNeither)) return std::nullopt;
  Relay relay;
  relay.verdict.assign(bytes.begin(), bytes.begin() + kVerdictBytes);
  relay.verdict_signature_failed = mark == 1;
  relay.answer = static_cast<AuditAnswer>(answer);
  return relay;
}

bool relay_signed_by(const Context& context, std::span<const std::uint8_t> relay_bytes,
                     std::span<const std::uint8_t, 32> signer) {
  return body_signed_by(context, relay_bytes, kRelayBytes, relay_statement, signer);
}

std::vector<std::uint8_t> encode_forward(ForwardKind kind, std::span<const std::uint8_t> relay_bytes) {
  std::vector<std::uint8_t> out(kForwardBytes, 0);
  out[0] = static_cast<std::uint8_t>(kind);
  if (kind != ForwardKind::Nothing && relay_bytes.size() == kRelayBytes)
    std::copy(relay_bytes.begin(), relay_bytes.end(), out.begin() + 1);
  return out;
}

}  // namespace mpc::rss3::and_check
