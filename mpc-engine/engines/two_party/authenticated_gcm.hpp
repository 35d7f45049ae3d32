// The AES-256-GCM jobs of a two-server cluster under security = "active": the AES blocks of a
// prefetch and of an open run by authenticated garbling from the AND material stock, as
// checked_part.hpp runs a part, so that neither server can garble another function, feed
// another share of the round keys than the client dealt it, or shift what the client takes.
//
// Prefetch: AES_K over N || 1, N || 2, ... for each nonce N. The masks AES_K(N || 1) stay with
// the servers as XOR shares (auth2::padded_circuit's kept outputs) for the one tag that may use
// each, as in every two-server cluster; the keystream comes out under both servers' pads, in
// parts of at most kAuthenticatedPartBlocks blocks of AES, each part's pads from
// client_checks::part_pad(the client's seed, part).
//
// Open: one circuit over AES_K(N || 1), the keystream blocks, each server's share of
// GHASH_H(aad, text) (a 128-bit input of its own: GHASH of public data is linear in the hash key
// powers, so each server computes its share alone), and the given tag; its outputs, the
// keystream and then the verdict byte (1 when AES_K(N || 1) ^ GHASH equals the tag), come out
// under both pads of part 0.
//
// What is not checked, and why that is sound: a server's share of the GHASH powers, and so its
// GHASH share, is whatever it feeds. A share shifted by d changes the GHASH the circuit computes
// by a value the server knows (GHASH is linear in the powers), so the verdict is the honest
// verdict on the same ticket with its tag shifted by that value: what anyone who hands the KDC
// a ticket with a tag of their choosing gets anyway. It can make a true ticket fail, never make
// a ticket open whose tag it could not have forged without the servers. A tag (local, no
// circuit) shifted the same way is a ticket that fails when it is opened. The round keys are
// checked: a shift there changes the keystream and the masks by values nobody knows.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "circuits/circuit.hpp"
#include "common/secret.hpp"
#include "engines/two_party/and_material_stock.hpp"
#include "protocol/client_checks/output_pads.hpp"
#include "protocol/two_party/channel.hpp"
#include "wire/client_messages.hpp"

namespace mpc::two_party_engine {

class AuthenticatedGcm {
 public:
  AuthenticatedGcm(int party, AndMaterialStock& stock) : party_(party), stock_(stock) {}

  // Entries of AND material a prefetch of `count` nonces of `blocks_per_nonce` keystream blocks
  // takes, and an open of `text_blocks` blocks.
  std::uint64_t prefetch_entries(std::uint32_t count, std::uint32_t blocks_per_nonce) const;
  std::uint64_t open_entries(std::uint32_t text_blocks) const;

  // What both take: this server's share of the round keys (wire::kGcmRoundKeyBytes, the first
  // bytes of the key's material), the check dealt with it (wire::share_check_bytes), its pad
  // seed from the client, and the job's range of AND material.
  struct Inputs {
    std::span<const std::uint8_t> round_key_share;
    std::span<const std::uint8_t> share_check;
    wire::OutputPadSeed pad{};
    std::uint64_t epoch = 0;
    std::uint64_t start = 0;
    std::chrono::milliseconds wait{0};
  };

  struct Prefetched {
    SecretBytes mask_shares;  // 16 bytes per nonce: this server's XOR share of AES_K(N || 1)
    SecretBytes keystream;    // the keystream XOR both pads: the same on both servers
    wire::PaddedReports reports;
  };
  // Throws two_party::PoolEmpty when the entries do not come, VerificationError when a check fails.
  Prefetched prefetch(two_party::Channel& peer, const Inputs& inputs, std::span<const wire::GcmNonce> nonces,
                      std::uint32_t blocks_per_nonce);

  struct Opened {
    SecretBytes keystream;     // text_blocks * 16 bytes XOR both pads
    std::uint8_t verdict = 0;  // the verdict byte XOR both pads
    client_checks::PartReport report;
  };
  // `hash_share`: this server's share of GHASH_H(aad, text) (jobs/gcm_hash.hpp).
  Opened open(two_party::Channel& peer, const Inputs& inputs, const wire::GcmNonce& nonce, std::uint32_t text_blocks,
              std::span<const std::uint8_t, 16> hash_share, const wire::GcmTagBytes& tag);

 private:
  struct Shape;  // a part's circuit and where its inputs lie
  // A prefetch part of `nonces` nonces; an open of `text_blocks` blocks.
  std::shared_ptr<const Shape> prefetch_shape(std::uint32_t nonces, std::uint32_t blocks_per_nonce) const;
  std::shared_ptr<const Shape> open_shape(std::uint32_t text_blocks) const;

  int party_;
  AndMaterialStock& stock_;
  mutable std::mutex mutex_;
  mutable std::map<std::pair<std::uint32_t, std::uint32_t>, std::shared_ptr<const Shape>> prefetch_shapes_;
  mutable std::map<std::uint32_t, std::shared_ptr<const Shape>> open_shapes_;
};

// Nonces of a prefetch with `blocks_per_nonce` keystream blocks in one part.
std::uint32_t gcm_nonces_per_part(std::uint32_t blocks_per_nonce);

}  // namespace mpc::two_party_engine
