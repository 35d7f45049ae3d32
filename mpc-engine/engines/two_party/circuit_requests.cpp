// The two-party engine's Kerberos, GCM prefetch, tag and open requests: whatever the cluster's
// protocol, the garbled-circuit engine (gc2_backend.hpp) runs them; a tag is local.
#include <sodium.h>

#include <algorithm>

#include "jobs/request_checks.hpp"
#include "protocol/client_checks/output_pads.hpp"
#include "wire/krb_record_mask.hpp"
#include "engines/two_party/engine_job.hpp"
#include "engines/two_party/two_party_engine.hpp"
#include "jobs/gcm_hash.hpp"

namespace mpc::two_party_engine {

std::optional<node::Refusal> TwoPartyEngine::circuit_job_refusal(const wire::Request& request) const {
  if (const auto* krb = std::get_if<wire::KrbRequest>(&request)) return jobs::krb_refusal(*krb);
  if (const auto* prefetch = std::get_if<wire::GcmPrefetchRequest>(&request))
    return jobs::prefetch_refusal(*prefetch, request_limits());
  if (const auto* open = std::get_if<wire::GcmOpenRequest>(&request))
    return jobs::gcm_input_refusal("open", open->key, open->aad, open->text);
  return node::Refusal{wire::Status::BadRequest, "not a Kerberos or GCM job"};
}

std::optional<node::Refusal> TwoPartyEngine::check_gcm_tag(const node::ClientJob& job,
                                                           const wire::GcmTagRequest& request) {
  if (auto refused = jobs::gcm_input_refusal("tag", request.key, request.aad, request.text)) return refused;
  // A chained tag's additive shares and the zero test that checks them are three-server
  // protocols; a client asks for them only of three servers.
  if (request.chained || request.check)
    return node::Refusal{wire::Status::BadRequest, "chained and checked GCM tags need three servers"};
  if (host_.key_material(request.key) == nullptr) return jobs::unknown_key(request.key);
  if (!nonce_pool_->holds(job.key.client, request.key, request.nonce, std::chrono::steady_clock::now()))
    return jobs::unknown_nonce("nonce", request.nonce, request.key, settings_.party);
  return std::nullopt;
}

void TwoPartyEngine::answer_gcm_tag(const node::ClientJob& job, const wire::GcmTagRequest& request) {
  const SecretBytes* share = host_.key_material(request.key);
  if (share == nullptr) {
    answer_error(job.key, jobs::unknown_key(request.key));
    return;
  }
  // GHASH is linear: this server's XOR share of the powers gives its share of GHASH. First,
  // so that a request that cannot be hashed does not use up the nonce.
  rss3::ByteShare hash = jobs::gcm_hash_share(share->span(), {}, request.aad, request.text);
  const auto pooled = nonce_pool_->take(job.key.client, request.key, request.nonce, std::chrono::steady_clock::now());
  if (!pooled) {
    hash.wipe();
    answer_error(job.key, jobs::unknown_nonce("nonce", request.nonce, request.key, settings_.party));
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
  host_.answer(job.key, std::move(answer));
}

void TwoPartyEngine::run_circuit_job(Job& job) {
  try {
    auto stream = streams_.open(job.number);
    if (const auto* krb = std::get_if<wire::KrbRequest>(&*job.circuit)) {
      // This server's XOR share of the record's mask: the pair's leader (or server 1) is party 0.
      const SecretBytes mask =
          wire::xor_record_mask(*krb->record_mask, settings_.party == 0, wire::krb_secret_record_bytes(*krb));
      KrbTask task{job.number, krb->key,    krb->operation, krb->usage,  job.key_share.span(),
                   krb->data,  job.digest,  krb->combine,   mask.span()};
      // Under security = "active" this server's pad on the result comes from a seed its peer lacks.
      task.output_pad = client_checks::pad_of_seed(wire::pad_seed_of(*krb->record_mask, settings_.party == 0));
      task.share_check = job.share_check.span();
      task.pool_epoch = job.pool_epoch;
      task.pool_start = job.pool_start;
      KrbOutput output = circuits_->krb(*stream, task);
      job.result = std::move(output.bytes);
      job.krb_report = output.report;
    } else if (const auto* prefetch = std::get_if<wire::GcmPrefetchRequest>(&*job.circuit)) {
      GcmPrefetchTask task{job.number,           prefetch->key, job.key_share.span(),         prefetch->count,
                           prefetch->blocks_per_nonce, job.digest,   prefetch->local_masks, job.mask_components.span()};
      task.output_pad = prefetch->output_pad;
      task.share_check = job.share_check.span();
      task.pool_epoch = job.pool_epoch;
      task.pool_start = job.pool_start;
      job.prefetched = circuits_->gcm_prefetch(*stream, task);
    } else if (const auto* open = std::get_if<wire::GcmOpenRequest>(&*job.circuit)) {
      GcmOpenTask task{job.number, open->key, job.key_share.span(), open->nonce, open->aad, open->text, open->tag,
                       job.digest};
      task.output_pad = open->output_pad;
      task.share_check = job.share_check.span();
      task.pool_epoch = job.pool_epoch;
      task.pool_start = job.pool_start;
      job.opened = circuits_->gcm_open(*stream, task);
    }
  } catch (const RetryableError& error) {
    fail(job, wire::Status::Regrouping, error.what());
  } catch (const VerificationError& error) {
    fail(job, wire::Status::VerificationFailed, error.what(), error.check());
  } catch (const PeerError& error) {
    fail(job, wire::Status::PeerFailure, error.what());
  } catch (const BackendBusy& error) {
    fail(job, wire::Status::Busy, error.what());
  } catch (const std::exception& error) {
    fail(job, wire::Status::Internal, error.what());
  }
}

void TwoPartyEngine::answer_circuit_job(Job& job) {
  wire::Reply answer;
  answer.id = job.request.id;
  if (const auto* krb = std::get_if<wire::KrbRequest>(&*job.circuit)) {
    (void)krb;
    wire::KrbResult result;
    result.x.assign(job.result.span().begin(), job.result.span().end());
    if (job.krb_report) result.padded_report = client_checks::serialize(*job.krb_report);
    answer.body = std::move(result);
  } else if (const auto* prefetch = std::get_if<wire::GcmPrefetchRequest>(&*job.circuit)) {
    // The shares of AES_K(N || 1) wait here for the nonces' tags; the client gets the nonces
    // and its keystream share.
    const auto now = std::chrono::steady_clock::now();
    wire::GcmPrefetchResult result;
    result.replicated = false;
    result.count = prefetch->count;
    result.blocks_per_nonce = prefetch->blocks_per_nonce;
    for (std::size_t n = 0; n < job.prefetched.nonces.size(); ++n) {
      const auto& nonce = job.prefetched.nonces[n];
      jobs::NonceShare mask;
      std::copy_n(job.prefetched.mask_shares.data() + n * 16, 16, mask.x.begin());
      if (!nonce_pool_->put(job.client, prefetch->key, nonce, mask, now))
        log_.warn("a prefetched GCM nonce was already pooled for this client: both dropped");
      result.nonces.insert(result.nonces.end(), nonce.begin(), nonce.end());
    }
    result.x.assign(job.prefetched.keystream.span().begin(), job.prefetched.keystream.span().end());
    result.padded = std::move(job.prefetched.padded);
    job.prefetched = GcmPrefetched{};
    answer.body = std::move(result);
  } else {
    wire::GcmOpenResult result;
    result.replicated = false;
    result.blocks = static_cast<std::uint32_t>(job.opened.keystream.size() / 16);
    result.x.assign(job.opened.keystream.span().begin(), job.opened.keystream.span().end());
    result.verdict_x = job.opened.verdict;
    if (job.opened.report) result.padded_report = client_checks::serialize(*job.opened.report);
    job.opened = GcmOpened{};
    answer.body = std::move(result);
  }
  job.result.clear();
  host_.answer(job.key, std::move(answer));
}

}  // namespace mpc::two_party_engine
