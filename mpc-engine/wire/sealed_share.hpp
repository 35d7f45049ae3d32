// A server's share of a key as the dealer sends it: sealed to that server's CurveZMQ public
// key (an X25519 key) with libsodium's sealed box (crypto_box_seal: an ephemeral X25519 key,
// then XSalsa20-Poly1305 under the shared secret; only the holder of the server's secret key
// opens it). Sealed before it reaches ZeroMQ, the share never sits in clear in the copies
// ZeroMQ and CURVE make of a frame and never wipe: what the dealing process (kadmind,
// kadmin.local, mpcctl) leaves in freed memory is ciphertext for each server alone.
//
// Sealed plaintext: BLAKE2b-256 of the key id (name | 0x00 | u32 BE version | u8 algorithm,
// under the personal string below) then the share. The server opens it only for the key id
// of the request carrying it, so a sealed share cannot be stored under another id.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/secret.hpp"
#include "wire/key_id.hpp"

namespace mpc::wire {

using SealKey = std::array<std::uint8_t, 32>;  // a server's X25519 (CurveZMQ) public key

// Bytes a sealed share adds to the share: the key id's digest (32) and the sealed box's
// ephemeral public key and MAC (48).
inline constexpr std::size_t kSealedShareOverhead = 32 + 48;

// A two-server cluster's XOR share comes with its checks (protocol/client_checks/
// share_checks.hpp), after the material, and is stored so: the server's key for checking its
// peer, then per segment of the material its blinding and its peer's tag.
//
// A segment is a part of the material that a job feeds whole and checks: all of an AES key's,
// the round keys of an aes256-gcm key (a server's share of the GHASH key powers may go
// unchecked: a shift of it shifts the GHASH it computes by a value the server knows, as good as
// a ticket with another tag, engines/two_party/authenticated_gcm.hpp), and for a Kerberos key
// each usage's block (Ke's round keys, Ki's and Kc's states) and the PRF's material: a job
// hashes only the segment it feeds, not the whole material.
struct ShareSegment {
  std::size_t offset = 0;
  std::size_t bytes = 0;
};
std::vector<ShareSegment> share_check_segments(KeyAlgorithm algorithm);
// The index of the segment holding [offset, offset + bytes). Throws Error(Wire) when none does.
std::size_t share_check_segment_of(KeyAlgorithm algorithm, std::size_t offset, std::size_t bytes);
// The checks' bytes stored after a share of a key of `algorithm`.
std::size_t share_check_bytes(KeyAlgorithm algorithm);
inline constexpr std::size_t kShareCheckKeyBytes = 8;      // the server's key
inline constexpr std::size_t kShareCheckSegmentBytes = 16;  // a segment's blinding and peer tag
// The checks of the release before (a matrix seed and a sketch, computed outside the circuit):
// a share stored with them still loads, as a share without checks.
inline constexpr std::size_t kEarlierShareCheckBytes = 48;

// The share sealed to `server` for `key`. Throws FormatError(Wire) for an invalid key id and
// Error(Wire) if libsodium fails; the plaintext it builds is wiped.
std::vector<std::uint8_t> seal_share(const KeyId& key, std::span<const std::uint8_t> share, const SealKey& server);

// The share of a sealed share for `key`, opened with this server's key pair. Throws
// FormatError(Wire) when it does not open (sealed to another key, altered, truncated) or was
// sealed for another key id.
SecretBytes open_sealed_share(const KeyId& key, std::span<const std::uint8_t> sealed, const SealKey& own_public,
                              const SecretBytes& own_secret);

}  // namespace mpc::wire
