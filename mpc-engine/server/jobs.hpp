// A request as one server holds it while it waits for, and runs in, batches.
#pragma once

#include <array>
#include <chrono>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/secret.hpp"
#include "server/krb_jobs.hpp"
#include "wire/client_messages.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::server {

// Requests are named by the authenticated client key and the client's request id,
// so one client can never refer to another client's job.
struct JobKey {
  wire::PublicKey client{};
  wire::RequestId request{};
  auto operator<=>(const JobKey&) const = default;
};

// What one party said of a request: its copy's digest (status Ok) or why it refused it.
struct PartyWord {
  wire::RequestDigest digest{};
  wire::Status status = wire::Status::Ok;
  std::string detail;
};

// What a server knows of one request's copies, by party, its own included once it has it.
using CopyWords = std::array<std::optional<PartyWord>, 3>;

enum class JobKind : std::uint8_t {
  Compute,      // wire::ComputeRequest: one instance per block
  GcmPrefetch,  // 1 + blocks_per_nonce instances per nonce: N || 1, then the keystream blocks
  GcmOpen,      // instance 0 checks the tag (N || 1 against the secret block), 1..n the keystream
  Krb,          // wire::KrbRequest: one instance of its circuit (krb_jobs.hpp)
};

struct Job {
  std::string routing_id;
  JobKind kind = JobKind::Compute;
  wire::KeyId key;
  std::uint32_t instances = 0;  // circuit instances in all
  wire::ComputeRequest request;  // Compute only
  std::uint32_t blocks_per_nonce = 0;  // GcmPrefetch
  std::uint32_t nonce_count = 0;       // GcmPrefetch
  wire::GcmNonce nonce{};              // GcmOpen
  SecretBytes tag_check;               // GcmOpen: x || a of GHASH_H(aad, text) ^ tag, 16 bytes each
  KrbCircuitKey krb_circuit;           // Krb: the circuit its batch must run
  std::vector<std::uint8_t> krb_data;  // Krb: the circuit's public record (krb_jobs.hpp)
  std::size_t krb_result_bytes = 0;    // Krb: bytes of the result
  // x || a of the circuit's key rows: the expanded round keys (only those, for a GCM key);
  // for a Krb job, its secret rows (krb_secret_rows).
  SecretBytes key_share;
  // What each party holds of the request (this server's own copy included); the leader
  // schedules the job only once all three agree (request_agreement.hpp).
  CopyWords words;
  bool agreed = false;  // leader: every party holds this copy; followers: unused
  std::vector<std::uint8_t> masked_x;  // the masked output shares the client gets
  std::vector<std::uint8_t> masked_a;
  std::uint8_t verdict_x = 0;          // GcmOpen: masked share of the tag check, bit 0
  std::uint8_t verdict_a = 0;
  std::vector<std::uint8_t> nonces;    // GcmPrefetch: nonce_count * 12 bytes, in the job's order
  SecretBytes nonce_shares;            // GcmPrefetch: per nonce x || a of AES_K(N || 1), raw
  std::uint32_t blocks_done = 0;       // instances evaluated
  std::uint32_t blocks_scheduled = 0;  // leader: instances already placed in batches
  std::chrono::steady_clock::time_point arrived;
};

}  // namespace mpc::server
