// PRF keys for the correlated randomness, agreed between each pair of servers
// without any message: both ends of a ring edge compute the same X25519 shared
// secret from their long-term CurveZMQ keys and hash it, with both public keys
// in party order, into a 128-bit AES key (BLAKE2b, keyed by a fixed label, so
// these keys are independent of any key CurveZMQ derives from the same pairs).
//
// Because the keys are fixed per pair, a restarted server recomputes exactly the
// keys its neighbours use; batch ids never repeat because every leader start picks
// a fresh random 64-bit epoch (correlated_randomness.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>

#include "common/identity_signature.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/and_check.hpp"
#include "protocol/rss3/correlated_randomness.hpp"
#include "transport/curve_keys.hpp"

namespace mpc::three_party_engine {

// The GCM tag job re-randomises its reply with output masks (rss3/output.hpp) that no
// batch makes: its ids are nonces, not batch ids, and a nonce's epoch || counter could
// equal some batch's epoch || sequence. So tag masks come from keys of their own, hashed
// from the edge keys under another label: both ends of an edge still agree on them.
struct PartyPrfKeys {
  rss3::PrfKey own{};       // k_i, shared with party i+1
  rss3::PrfKey previous{};  // k_{i-1}, shared with party i-1
  rss3::PrfKey tag_own{};       // from k_i, for GCM tag output masks
  rss3::PrfKey tag_previous{};  // from k_{i-1}
  // A garbled Kerberos batch (garbled_krb_batch.hpp) draws its labels and pads from keys of
  // their own, hashed from the edge keys under a third label.
  rss3::PrfKey garbling_own{};       // from k_i
  rss3::PrfKey garbling_previous{};  // from k_{i-1}
  // The AND check signs its findings and verdicts under the party's X25519 identity, so that a
  // failed check names a server (rss3/and_check_blame.hpp); every party's public key checks them.
  std::shared_ptr<const IdentitySigner> signer;
  std::array<transport::PublicKey, 3> public_keys{};
  rss3::and_check::CheckIdentities check_identities() const { return {signer.get(), public_keys}; }
  ~PartyPrfKeys();
};

// The GCM tag masks' keys for one request: tag_own and tag_previous hashed with the digest of
// the request (wire::request_digest). Both ends of an edge agree on them only if they hold the
// same copy of the request. Wiped when destroyed.
struct TagMaskKeys {
  TagMaskKeys(const PartyPrfKeys& keys, std::span<const std::uint8_t, 32> request_digest);
  ~TagMaskKeys();
  TagMaskKeys(const TagMaskKeys&) = delete;
  TagMaskKeys& operator=(const TagMaskKeys&) = delete;
  rss3::PrfKey own{};
  rss3::PrfKey previous{};
};

// This party's share, x || a (32 bytes each), of the aes256-gcm key K a GenerateKey request
// makes (wire::GenerateKeyRequest). K = c_0 ^ c_1 ^ c_2, where c_j is BLAKE2b-256 of the
// request's digest under a key hashed from edge key k_j with a label of its own: parties j and
// j+1 compute c_j, the third cannot, so no server knows K, and no requester can choose it (it
// knows no edge key). Party i holds x = c_i ^ c_(i-1), a = c_i (rss3/shares.hpp). The digest
// covers the request's fresh seed, so the long-term keys alone never recompute K.
SecretBytes generated_key_share(const PartyPrfKeys& keys, std::span<const std::uint8_t, 32> request_digest);

// party: 0-based. public_keys[j]: long-term public key of party j (public_keys[party] is ours).
PartyPrfKeys derive_prf_keys(int party, const transport::CurveKeyPair& own,
                             const std::array<transport::PublicKey, 3>& public_keys);

}  // namespace mpc::three_party_engine
