// A two-server server's Kerberos, GCM prefetch, tag and open requests: whatever the cluster's
// protocol, the garbled-circuit engine (gc2_backend.hpp) runs them; a tag is local.
#include <sodium.h>

#include <algorithm>

#include "protocol/rss3/ghash.hpp"
#include "server/krb_jobs.hpp"
#include "two_server/two_server.hpp"
#include "two_server/two_server_job.hpp"

namespace mpc::two_server {

std::optional<std::string> TwoServer::circuit_job_refusal(const wire::Request& request) const {
  if (const auto* krb = std::get_if<wire::KrbRequest>(&request)) {
    if (!wire::is_krb_algorithm(krb->key.algorithm))
      return "Kerberos jobs need an aes128-/aes256-cts-hmac-sha1-96, aes128-cts-hmac-sha256-128 or "
             "aes256-cts-hmac-sha384-192 key, not " + wire::describe(krb->key);
    // The decoder has checked the request's form, usage and combine already; planning checks
    // again and names any problem all the same.
    try {
      (void)server::plan_krb_job(*krb);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::nullopt;
  }
  if (const auto* prefetch = std::get_if<wire::GcmPrefetchRequest>(&request)) {
    if (prefetch->key.algorithm != wire::KeyAlgorithm::Aes256Gcm)
      return "GCM prefetch needs an aes256-gcm key, not " + wire::describe(prefetch->key);
    if (prefetch->count == 0 || prefetch->count > wire::kMaxGcmPrefetchCount ||
        prefetch->blocks_per_nonce > wire::kMaxGcmBlocksPerNonce)
      return std::string("GCM prefetch size out of range");
    return std::nullopt;
  }
  if (const auto* open = std::get_if<wire::GcmOpenRequest>(&request)) {
    if (open->key.algorithm != wire::KeyAlgorithm::Aes256Gcm)
      return "GCM open needs an aes256-gcm key, not " + wire::describe(open->key);
    if (rss3::ghash_blocks(open->aad.size(), open->text.size()) > wire::kGcmHashPowers)
      return std::string("GCM open input too long");
    return std::nullopt;
  }
  return std::string("not a Kerberos or GCM job");
}

void TwoServer::handle_circuit_job(transport::ReceivedMessage& message, wire::Request request) {
  auto job = new_job(message);
  const wire::RequestId id = wire::request_id(request);
  if (auto refusal = circuit_job_refusal(request)) {
    refuse(job, id, wire::Status::BadRequest, *refusal);
    return;
  }
  if (const auto* prefetch = std::get_if<wire::GcmPrefetchRequest>(&request)) {
    const std::uint64_t blocks = prefetch->count * (1 + static_cast<std::uint64_t>(prefetch->blocks_per_nonce));
    // More nonces than the pool keeps per client would evict this very prefetch's first ones.
    if (prefetch->count > settings_.limits.gcm_nonces_per_client) {
      refuse(job, id, wire::Status::TooLarge, "prefetch of " + std::to_string(prefetch->count) +
                                                  " nonces exceeds gcm_nonces_per_client " +
                                                  std::to_string(settings_.limits.gcm_nonces_per_client));
      return;
    }
    if (blocks > settings_.limits.max_job_blocks) {
      refuse(job, id, wire::Status::TooLarge, "prefetch of " + std::to_string(blocks) +
                                                  " blocks exceeds max_job_blocks " +
                                                  std::to_string(settings_.limits.max_job_blocks));
      return;
    }
  }
  job->request.id = id;
  job->request.key = std::visit(
      [](const auto& body) -> wire::KeyId {
        if constexpr (requires { body.key; }) return body.key;
        else return {};
      },
      request);
  job->request.blocks = 0;
  const auto encoded = wire::encode_request(request);
  crypto_generichash(job->digest.data(), job->digest.size(), encoded.data(), encoded.size(), nullptr, 0);
  job->circuit = std::move(request);
  admit(std::move(job));
}

void TwoServer::handle_gcm_tag(transport::ReceivedMessage& message, const wire::GcmTagRequest& request) {
  if (request.key.algorithm != wire::KeyAlgorithm::Aes256Gcm) {
    reply_error(message.routing_id, request.id, wire::Status::BadRequest,
                "GCM tag needs an aes256-gcm key, not " + wire::describe(request.key));
    return;
  }
  const std::size_t count = rss3::ghash_blocks(request.aad.size(), request.text.size());
  if (count > wire::kGcmHashPowers) {
    reply_error(message.routing_id, request.id, wire::Status::BadRequest, "GCM tag input too long");
    return;
  }
  const SecretBytes* share = key_material(request.key);
  if (share == nullptr) {
    reply_error(message.routing_id, request.id, wire::Status::UnknownKey, wire::describe(request.key) + " not found");
    return;
  }
  // GHASH is linear: this server's XOR share of the powers gives its share of GHASH. First,
  // so that a request that cannot be hashed does not use up the nonce.
  std::vector<rss3::ByteShare> powers(count);
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t at = wire::kGcmRoundKeyBytes + 16 * k;
    powers[k].x.assign(share->data() + at, share->data() + at + 16);
    powers[k].a.assign(16, 0);
  }
  rss3::ByteShare hash = rss3::ghash_share(powers, request.aad, request.text);
  for (auto& power : powers) power.wipe();
  const auto pooled = nonce_pool_->take(message.sender, request.key, request.nonce, std::chrono::steady_clock::now());
  if (!pooled) {
    hash.wipe();
    reply_error(message.routing_id, request.id, wire::Status::UnknownNonce,
                "nonce not prefetched by this client under " + wire::describe(request.key) + " on party " +
                    std::to_string(settings_.party + 1) + ", or it was used, expired or evicted");
    return;
  }
  // Taken once: the share of AES_K(N || 1) masks this one tag share and is gone.
  wire::GcmTagResult result;
  result.replicated = false;
  for (std::size_t i = 0; i < 16; ++i) result.x[i] = static_cast<std::uint8_t>(hash.x[i] ^ pooled->x[i]);
  hash.wipe();
  wire::Reply answer;
  answer.id = request.id;
  answer.body = result;
  reply(message.routing_id, std::move(answer));
  ++jobs_served_;
}

void TwoServer::run_circuit_job(Job& job) {
  try {
    auto stream = streams_.open(job.number);
    if (const auto* krb = std::get_if<wire::KrbRequest>(&*job.circuit)) {
      KrbTask task{job.number,        krb->key,  krb->operation, krb->usage, job.key_share.span(),
                   krb->data,         job.digest, krb->combine};
      job.result = circuits_->krb(*stream, task);
    } else if (const auto* prefetch = std::get_if<wire::GcmPrefetchRequest>(&*job.circuit)) {
      GcmPrefetchTask task{job.number, prefetch->key, job.key_share.span(), prefetch->count,
                           prefetch->blocks_per_nonce, job.digest};
      job.prefetched = circuits_->gcm_prefetch(*stream, task);
    } else if (const auto* open = std::get_if<wire::GcmOpenRequest>(&*job.circuit)) {
      GcmOpenTask task{job.number, open->key, job.key_share.span(), open->nonce, open->aad, open->text, open->tag,
                       job.digest};
      job.opened = circuits_->gcm_open(*stream, task);
    }
  } catch (const PeerError& error) {
    fail(job, wire::Status::PeerFailure, error.what());
  } catch (const std::exception& error) {
    fail(job, wire::Status::Internal, error.what());
  }
}

void TwoServer::reply_circuit_job(Job& job) {
  wire::Reply answer;
  answer.id = job.request.id;
  if (const auto* krb = std::get_if<wire::KrbRequest>(&*job.circuit)) {
    (void)krb;
    wire::KrbResult result;
    result.x.assign(job.result.span().begin(), job.result.span().end());
    answer.body = std::move(result);
  } else if (const auto* prefetch = std::get_if<wire::GcmPrefetchRequest>(&*job.circuit)) {
    // The shares of AES_K(N || 1) wait here for the nonces' tags; the client gets the nonces
    // and its keystream share.
    const auto now = std::chrono::steady_clock::now();
    wire::GcmPrefetchResult result;
    result.count = prefetch->count;
    result.blocks_per_nonce = prefetch->blocks_per_nonce;
    for (std::size_t n = 0; n < job.prefetched.nonces.size(); ++n) {
      const auto& nonce = job.prefetched.nonces[n];
      server::NonceShare mask;
      std::copy_n(job.prefetched.mask_shares.data() + n * 16, 16, mask.x.begin());
      if (!nonce_pool_->put(job.client, prefetch->key, nonce, mask, now))
        log_.warn("a prefetched GCM nonce was already pooled for this client: both dropped");
      result.nonces.insert(result.nonces.end(), nonce.begin(), nonce.end());
    }
    result.x.assign(job.prefetched.keystream.span().begin(), job.prefetched.keystream.span().end());
    job.prefetched = GcmPrefetched{};
    answer.body = std::move(result);
  } else {
    wire::GcmOpenResult result;
    result.replicated = false;
    result.blocks = static_cast<std::uint32_t>(job.opened.keystream.size() / 16);
    result.x.assign(job.opened.keystream.span().begin(), job.opened.keystream.span().end());
    result.verdict_x = job.opened.verdict;
    job.opened = GcmOpened{};
    answer.body = std::move(result);
  }
  job.result.clear();
  reply(job.routing_id, std::move(answer));
}

}  // namespace mpc::two_server
