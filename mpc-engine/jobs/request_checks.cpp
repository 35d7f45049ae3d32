#include "jobs/request_checks.hpp"

#include <string>

#include "common/error.hpp"
#include "jobs/krb_jobs.hpp"
#include "jobs/nonce_pool.hpp"
#include "keys/algorithm_list.hpp"
#include "protocol/rss3/ghash.hpp"

namespace mpc::jobs {

std::optional<wire::Refusal> size_refusal(std::uint64_t instances, const RequestLimits& limits) {
  if (instances <= limits.max_job_blocks) return std::nullopt;
  return wire::Refusal{wire::Status::TooLarge, "job of " + std::to_string(instances) +
                                                   " blocks exceeds max_job_blocks " +
                                                   std::to_string(limits.max_job_blocks)};
}

std::optional<wire::Refusal> compute_refusal(const wire::ComputeRequest& request, const RequestLimits& limits) {
  if (request.key.algorithm != wire::KeyAlgorithm::Aes128 && request.key.algorithm != wire::KeyAlgorithm::Aes256)
    return wire::Refusal{wire::Status::BadRequest,
                         wire::describe(request.key) + " serves only the GCM or Kerberos requests"};
  return size_refusal(request.blocks, limits);
}

std::optional<wire::Refusal> prefetch_refusal(const wire::GcmPrefetchRequest& request,
                                              const RequestLimits& limits) {
  if (request.key.algorithm != wire::KeyAlgorithm::Aes256Gcm)
    return wire::Refusal{wire::Status::BadRequest,
                         "GCM prefetch needs an aes256-gcm key, not " + wire::describe(request.key)};
  if (request.count == 0 || request.count > wire::kMaxGcmPrefetchCount ||
      request.blocks_per_nonce > wire::kMaxGcmBlocksPerNonce)
    return wire::Refusal{wire::Status::BadRequest, "GCM prefetch size out of range"};
  // More nonces than the pool keeps per client would evict this very prefetch's first ones.
  if (request.count > limits.gcm_nonces_per_client)
    return wire::Refusal{wire::Status::TooLarge, "prefetch of " + std::to_string(request.count) +
                                                     " nonces exceeds gcm_nonces_per_client " +
                                                     std::to_string(limits.gcm_nonces_per_client)};
  const std::uint64_t instances = (1 + static_cast<std::uint64_t>(request.blocks_per_nonce)) * request.count;
  if (instances > limits.max_job_blocks)
    return wire::Refusal{wire::Status::TooLarge, "prefetch of " + std::to_string(request.count) + " nonces x (1 + " +
                                                     std::to_string(request.blocks_per_nonce) +
                                                     ") blocks exceeds max_job_blocks " +
                                                     std::to_string(limits.max_job_blocks)};
  return std::nullopt;
}

std::optional<wire::Refusal> gcm_input_refusal(const char* what, const wire::KeyId& key,
                                               std::span<const std::uint8_t> aad, std::span<const std::uint8_t> text) {
  if (key.algorithm != wire::KeyAlgorithm::Aes256Gcm)
    return wire::Refusal{wire::Status::BadRequest,
                         std::string("GCM ") + what + " needs an aes256-gcm key, not " + wire::describe(key)};
  if (rss3::ghash_blocks(aad.size(), text.size()) > wire::kGcmHashPowers)
    return wire::Refusal{wire::Status::BadRequest, std::string("GCM ") + what + " input too long"};
  return std::nullopt;
}

std::optional<wire::Refusal> krb_refusal(const wire::KrbRequest& request) {
  if (!wire::is_krb_algorithm(request.key.algorithm))
    return wire::Refusal{wire::Status::BadRequest, "Kerberos jobs need an " +
                                                       keys::algorithm_list(keys::AlgorithmSet::Kerberos) +
                                                       " key, not " + wire::describe(request.key)};
  if (!request.record_mask)
    return wire::Refusal{wire::Status::BadRequest,
                         "a Kerberos request without its record mask: the servers never take a secret record in clear"};
  // The decoder has checked the request's form, usage and combine already; planning checks
  // again and names any problem all the same.
  try {
    (void)plan_krb_job(request);
  } catch (const Error& error) {
    return wire::Refusal{wire::Status::BadRequest, error.what()};
  }
  return std::nullopt;
}

wire::Refusal unknown_key(const wire::KeyId& key) {
  return wire::Refusal{wire::Status::UnknownKey, wire::describe(key) + " not found"};
}

wire::Refusal unknown_nonce(const char* what, const wire::GcmNonce& nonce, const wire::KeyId& key, int party) {
  return wire::Refusal{wire::Status::UnknownNonce, std::string(what) + " " + describe_nonce(nonce) +
                                                       " is not one this client prefetched under " +
                                                       wire::describe(key) + " on party " + std::to_string(party + 1) +
                                                       ", or it was used, expired or evicted"};
}

}  // namespace mpc::jobs
