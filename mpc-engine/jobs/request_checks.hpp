// The refusals of a job request that do not depend on the protocol, made by every engine
// before any server computes with it: the key's algorithm for the request, the request's size
// against the server's limits, a Kerberos job's plan, a key this server does not hold. Each
// rule is worded here once.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "wire/client_messages.hpp"

namespace mpc::jobs {

// The server's limits these rules read ([limits] of server.toml).
struct RequestLimits {
  std::uint64_t max_job_blocks = 0;
  std::uint64_t gcm_nonces_per_client = 0;
};

// AES keystream and ECB jobs: a plain AES key, at most max_job_blocks blocks.
std::optional<wire::Refusal> compute_refusal(const wire::ComputeRequest& request, const RequestLimits& limits);
// GCM prefetches: an aes256-gcm key, a size within the wire's bounds, at most
// gcm_nonces_per_client nonces and max_job_blocks instances (1 + blocks_per_nonce per nonce).
std::optional<wire::Refusal> prefetch_refusal(const wire::GcmPrefetchRequest& request,
                                              const RequestLimits& limits);
// GCM tags and opens (`what`: "tag", "open"): an aes256-gcm key, an input that the stored GHASH
// key powers cover.
std::optional<wire::Refusal> gcm_input_refusal(const char* what, const wire::KeyId& key,
                                               std::span<const std::uint8_t> aad, std::span<const std::uint8_t> text);
// Kerberos jobs: a Kerberos key and a request plan_krb_job accepts.
std::optional<wire::Refusal> krb_refusal(const wire::KrbRequest& request);
// A job under a key this server does not hold.
wire::Refusal unknown_key(const wire::KeyId& key);
// A GCM tag under a nonce (`what`: "nonce", "chained tag's nonce") this server does not hold for
// the client: never prefetched by it, or used, expired or evicted. `party` is 0-based.
wire::Refusal unknown_nonce(const char* what, const wire::GcmNonce& nonce, const wire::KeyId& key, int party);
// A job of more instances than max_job_blocks.
std::optional<wire::Refusal> size_refusal(std::uint64_t instances, const RequestLimits& limits);

}  // namespace mpc::jobs
