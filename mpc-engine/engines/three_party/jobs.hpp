// A request as one server holds it while it waits for, and runs in, batches.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/secret.hpp"
#include "jobs/krb_jobs.hpp"
#include "node/job_key.hpp"
#include "wire/client_messages.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::three_party_engine {

using node::JobKey;

enum class JobKind : std::uint8_t {
  Compute,      // wire::ComputeRequest: one instance per block
  GcmPrefetch,  // 1 + blocks_per_nonce instances per nonce: N || 1, then the keystream blocks
  GcmOpen,      // instance 0 checks the tag (N || 1 against the secret block), 1..n the keystream
  Krb,          // wire::KrbRequest: one instance of its circuit (krb_jobs.hpp)
  KeyGeneration,  // wire::GenerateKeyRequest: one instance of the key material circuit, kept
};

struct Job {
  std::string routing_id;
  JobKind kind = JobKind::Compute;
  wire::KeyId key;
  std::uint32_t instances = 0;  // circuit instances in all
  wire::ComputeRequest request;  // Compute only
  std::uint32_t blocks_per_nonce = 0;  // GcmPrefetch
  std::uint32_t nonce_count = 0;       // GcmPrefetch
  bool local_masks = false;            // GcmPrefetch: masks from key_share's mask components
  wire::GcmNonce nonce{};              // GcmOpen
  SecretBytes tag_check;               // GcmOpen: x || a of GHASH_H(aad, text) ^ tag, 16 bytes each
  jobs::KrbCircuitKey krb_circuit;           // Krb: the circuit its batch must run
  std::vector<std::uint8_t> krb_data;  // Krb: the circuit's public record (krb_jobs.hpp)
  std::size_t krb_result_bytes = 0;    // Krb: bytes of the result
  // x || a of the circuit's key rows: the expanded round keys (only those, for a GCM key);
  // for a Krb job, its secret rows (jobs::krb_secret_rows); for a prefetch with local masks,
  // the key's mask components (jobs::replicated_mask_components); for a key generation, the
  // new key K's components (key_generation.hpp).
  SecretBytes key_share;
  // The digest of this server's copy of the request (node::ClientJob): a follower runs the
  // job only in a batch whose header names the same digest.
  wire::RequestDigest digest{};
  std::vector<std::uint8_t> masked_x;  // the masked output shares the client gets
  std::vector<std::uint8_t> masked_a;
  std::uint8_t verdict_x = 0;          // GcmOpen: masked share of the tag check, bit 0
  std::uint8_t verdict_a = 0;
  std::vector<std::uint8_t> nonces;    // GcmPrefetch: nonce_count * 12 bytes, in the job's order
  SecretBytes nonce_shares;            // GcmPrefetch: per nonce x || a of AES_K(N || 1), raw
  SecretBytes generated;               // KeyGeneration: x || a of the new key's material, raw
  std::uint32_t blocks_done = 0;       // instances evaluated
  std::uint32_t blocks_scheduled = 0;  // leader: instances already placed in batches
  bool in_batch = false;               // a batch naming it has started here
  std::chrono::steady_clock::time_point arrived;
};

}  // namespace mpc::three_party_engine
