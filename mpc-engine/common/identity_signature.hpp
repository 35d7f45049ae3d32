// Signatures under a server's long-term X25519 key (its CurveZMQ identity), so that what one
// server said can be shown to a third server, which an authenticated link alone cannot do: the
// AND check's findings and verdicts (protocol/rss3/and_check.hpp) are signed so that a failed
// check names a pair of servers, one of which deviated.
//
// The scheme is XEdDSA (Trevor Perrin, "The XEdDSA and VXEdDSA Signature Schemes", Signal,
// 2016): the X25519 secret k signs as the Edwards scalar a = +-k mod q chosen so that the
// Edwards public key A = aB has sign bit 0, which is the point the birational map gives for the
// Montgomery u of the X25519 public key. A signature is an ordinary Ed25519 signature under A,
// so libsodium's Ed25519 verification checks it; no key besides the ones the servers already
// hold and the cluster already lists is needed. Nonces are hashed from a, the message and 64
// fresh random bytes, as XEdDSA specifies.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace mpc {

using IdentitySignature = std::array<std::uint8_t, 64>;
using EdwardsPublicKey = std::array<std::uint8_t, 32>;

class IdentitySigner {
 public:
  // `x25519_secret`: the 32-byte secret of an X25519 key pair (clamped here as X25519 does).
  explicit IdentitySigner(std::span<const std::uint8_t> x25519_secret);
  IdentitySigner(const IdentitySigner&) = delete;
  IdentitySigner& operator=(const IdentitySigner&) = delete;
  ~IdentitySigner();

  IdentitySignature sign(std::span<const std::uint8_t> message) const;
  const EdwardsPublicKey& public_key() const { return public_key_; }

 private:
  std::array<std::uint8_t, 32> scalar_{};  // a, reduced mod q
  EdwardsPublicKey public_key_{};
};

// The servers' signing identities as one party holds them: its own signer and every party's
// X25519 public key, by 0-based party.
struct PartyIdentities {
  const IdentitySigner* own = nullptr;
  std::array<std::array<std::uint8_t, 32>, 3> public_keys{};
};

// The Edwards public key XEdDSA gives an X25519 public key (sign bit 0); nullopt when the
// key is not a valid point (u >= p, or u = -1).
std::optional<EdwardsPublicKey> edwards_public_key(std::span<const std::uint8_t, 32> x25519_public);

// True when `signature` is `message` signed by the holder of the X25519 secret whose public
// half is `x25519_public`.
[[nodiscard]] bool identity_signature_valid(std::span<const std::uint8_t, 32> x25519_public,
                                            std::span<const std::uint8_t> message, const IdentitySignature& signature);

}  // namespace mpc
