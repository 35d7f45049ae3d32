// What each kind of request takes from the key's replicated share, and which requests this
// engine refuses before any server computes with them.
#include <cstring>
#include <variant>

#include "common/error.hpp"
#include "common/fault_injection.hpp"
#include "engines/three_party/three_party_engine.hpp"
#include "jobs/gcm_hash.hpp"
#include "jobs/gcm_masks.hpp"
#include "jobs/krb_jobs.hpp"
#include "jobs/request_checks.hpp"
#include "wire/krb_record_mask.hpp"
#include "node/key_admin.hpp"
#include "protocol/rss3/ghash.hpp"
#include "protocol/rss3/output.hpp"

namespace mpc::three_party_engine {
namespace {

std::size_t round_key_bytes(wire::KeyAlgorithm algorithm) { return (wire::aes_rounds(algorithm) + 1) * 16; }

// x || a of the expanded round keys out of a stored share (x || a of the whole material).
SecretBytes round_key_share(const SecretBytes& share, wire::KeyAlgorithm algorithm) {
  const std::size_t half = share.size() / 2;
  const std::size_t bytes = round_key_bytes(algorithm);
  SecretBytes out(2 * bytes);
  std::memcpy(out.data(), share.data(), bytes);
  std::memcpy(out.data() + bytes, share.data() + half, bytes);
  return out;
}

node::Refusal refusal(wire::Status status, std::string detail) { return {status, std::move(detail)}; }

}  // namespace

std::optional<node::Refusal> ThreePartyEngine::check(const node::ClientJob& job) {
  return std::visit(
      [&](const auto& request) -> std::optional<node::Refusal> {
        using T = std::decay_t<decltype(request)>;
        if constexpr (std::is_same_v<T, wire::ComputeRequest>) return check_compute(request);
        else if constexpr (std::is_same_v<T, wire::GcmPrefetchRequest>) return check_gcm_prefetch(request);
        else if constexpr (std::is_same_v<T, wire::GcmTagRequest>) return check_gcm_tag(job.key, request);
        else if constexpr (std::is_same_v<T, wire::GcmOpenRequest>) return check_gcm_open(request);
        else if constexpr (std::is_same_v<T, wire::GcmReopenRequest>) return check_gcm_reopen(request);
        else if constexpr (std::is_same_v<T, wire::KrbRequest>) return check_krb(request);
        else if constexpr (std::is_same_v<T, wire::GenerateKeyRequest>) return std::nullopt;  // the shell's checks
        else return refusal(wire::Status::BadRequest, "not a job request");
      },
      job.request);
}

std::optional<node::Refusal> ThreePartyEngine::check_share(const wire::KeyId& key, std::uint32_t instances) {
  if (auto refused = jobs::size_refusal(instances, request_limits())) return refused;
  const SecretBytes* share = host_.key_material(key);
  if (share == nullptr) return jobs::unknown_key(key);
  if (share->size() != 2 * wire::material_bytes(key.algorithm))
    return refusal(wire::Status::Internal, "stored share of " + wire::describe(key) + " has the wrong size");
  return std::nullopt;
}

std::optional<node::Refusal> ThreePartyEngine::check_compute(const wire::ComputeRequest& request) {
  if (auto refused = jobs::compute_refusal(request, request_limits())) return refused;
  return check_share(request.key, request.blocks);
}

std::optional<node::Refusal> ThreePartyEngine::check_gcm_prefetch(const wire::GcmPrefetchRequest& request) {
  if (auto refused = jobs::prefetch_refusal(request, request_limits())) return refused;
  // A nonce never spans batches, so its instances must fit in one.
  const std::uint64_t per_nonce = 1 + static_cast<std::uint64_t>(request.blocks_per_nonce);
  if (per_nonce > settings_.limits.max_batch_blocks)
    return refusal(wire::Status::TooLarge, std::to_string(request.blocks_per_nonce) +
                                               " blocks per nonce exceed max_batch_blocks " +
                                               std::to_string(settings_.limits.max_batch_blocks) + " - 1");
  const std::uint64_t instances = per_nonce * request.count;
  return check_share(request.key, static_cast<std::uint32_t>(instances));
}

std::optional<node::Refusal> ThreePartyEngine::check_gcm_tag(const node::JobKey& key, const wire::GcmTagRequest& request) {
  if (auto refused = jobs::gcm_input_refusal("tag", request.key, request.aad, request.text)) return refused;
  if (auto refused = check_share(request.key, 1)) return refused;
  if (!nonce_pool_.holds(key.client, request.key, request.nonce, std::chrono::steady_clock::now()))
    return jobs::unknown_nonce("nonce", request.nonce, request.key, settings_.party);
  if (request.chained &&
      !nonce_pool_.holds(key.client, request.key, request.chained->nonce, std::chrono::steady_clock::now()))
    return jobs::unknown_nonce("chained tag's nonce", request.chained->nonce, request.key, settings_.party);
  if (request.check && !wire::is_local_mask_nonce(request.check->nonce) &&
      tagged_nonces_.find(request.key, request.check->nonce, std::chrono::steady_clock::now()) == nullptr)
    return refusal(wire::Status::UnknownNonce, "checked nonce " + jobs::describe_nonce(request.check->nonce) +
                                                   " is not held for reopening on party " +
                                                   std::to_string(settings_.party + 1));
  return std::nullopt;
}

std::optional<node::Refusal> ThreePartyEngine::check_gcm_open(const wire::GcmOpenRequest& request) {
  if (auto refused = jobs::gcm_input_refusal("open", request.key, request.aad, request.text)) return refused;
  return check_share(request.key, static_cast<std::uint32_t>(1 + (request.text.size() + 15) / 16));
}

std::optional<node::Refusal> ThreePartyEngine::check_krb(const wire::KrbRequest& request) {
  if (auto refused = jobs::krb_refusal(request)) return refused;
  return check_share(request.key, 1);
}

void ThreePartyEngine::admit(node::ClientJob client_job) {
  if (std::holds_alternative<wire::GcmTagRequest>(client_job.request)) {
    answer_tag(client_job);
    return;
  }
  if (std::holds_alternative<wire::GcmReopenRequest>(client_job.request)) {
    answer_reopen(client_job);
    return;
  }
  if (std::holds_alternative<wire::GenerateKeyRequest>(client_job.request)) {
    Job job = make_generation_job(client_job);
    job.arrived = std::chrono::steady_clock::now();
    jobs_.emplace(client_job.key, std::move(job));
    role_->job_admitted(client_job.key);
    return;
  }
  const SecretBytes* share = host_.key_material(wire::request_key(client_job.request));
  if (share == nullptr || share->size() % 2 != 0) {
    answer_error(client_job.key, wire::Status::UnknownKey, "the key was deleted while the request waited");
    return;
  }
  Job job = make_job(client_job, *share);
  job.digest = client_job.digest;
  job.arrived = std::chrono::steady_clock::now();
  jobs_.emplace(client_job.key, std::move(job));
  role_->job_admitted(client_job.key);
}

Job ThreePartyEngine::make_job(const node::ClientJob& client_job, const SecretBytes& share) {
  Job job;
  if (const auto* compute = std::get_if<wire::ComputeRequest>(&client_job.request)) {
    job.kind = JobKind::Compute;
    job.key = compute->key;
    job.instances = compute->blocks;
    job.request = *compute;
    job.key_share = share;
  } else if (const auto* prefetch = std::get_if<wire::GcmPrefetchRequest>(&client_job.request)) {
    job.kind = JobKind::GcmPrefetch;
    job.key = prefetch->key;
    job.blocks_per_nonce = prefetch->blocks_per_nonce;
    job.nonce_count = prefetch->count;
    job.instances = (1 + prefetch->blocks_per_nonce) * prefetch->count;
    job.local_masks = prefetch->local_masks;
    job.key_share = prefetch->local_masks ? jobs::replicated_mask_components(share)
                                          : round_key_share(share, job.key.algorithm);
    const std::size_t keystream_bytes = static_cast<std::size_t>(job.nonce_count) * job.blocks_per_nonce * 16;
    job.masked_x.resize(keystream_bytes);
    job.masked_a.resize(keystream_bytes);
    job.nonces.resize(static_cast<std::size_t>(job.nonce_count) * wire::kGcmNonceBytes);
    job.nonce_shares.resize(static_cast<std::size_t>(job.nonce_count) * 32);
  } else if (const auto* open = std::get_if<wire::GcmOpenRequest>(&client_job.request)) {
    const std::size_t text_blocks = (open->text.size() + 15) / 16;
    job.kind = JobKind::GcmOpen;
    job.key = open->key;
    job.instances = static_cast<std::uint32_t>(1 + text_blocks);
    job.nonce = open->nonce;
    job.key_share = round_key_share(share, job.key.algorithm);
    // Instance 0 compares AES_K(N || 1) with GHASH_H(aad, text) ^ tag: equal iff the tag is
    // right. The tag is public, so it joins the share as the constant sharing (0, tag).
    rss3::ByteShare check = jobs::gcm_hash_share(share, open->aad, open->text);
    job.tag_check.resize(32);
    for (std::size_t i = 0; i < 16; ++i) {
      job.tag_check[i] = check.x[i];
      job.tag_check[16 + i] = static_cast<std::uint8_t>(check.a[i] ^ open->tag[i]);
    }
    check.wipe();
    job.masked_x.resize(text_blocks * 16);
    job.masked_a.resize(text_blocks * 16);
  } else if (const auto* krb = std::get_if<wire::KrbRequest>(&client_job.request)) {
    jobs::KrbJobPlan plan = jobs::plan_krb_job(*krb);
    job.kind = JobKind::Krb;
    job.key = krb->key;
    job.instances = 1;
    job.krb_circuit = plan.circuit;
    job.krb_data = std::move(plan.public_record);
    job.krb_result_bytes = plan.result_bytes;
    // The record's secret bytes come masked by R; R's shares join the key's as secret rows.
    const SecretBytes mask = wire::replicated_record_mask(*krb->record_mask, plan.mask_bytes);
    job.key_share = jobs::krb_secret_rows(share, job.key.algorithm, plan.secret, mask);
  }
  return job;
}

Job ThreePartyEngine::make_generation_job(const node::ClientJob& client_job) const {
  const auto& request = std::get<wire::GenerateKeyRequest>(client_job.request);
  Job job;
  job.kind = JobKind::KeyGeneration;
  job.key = request.key;
  job.instances = 1;
  job.digest = client_job.digest;
  job.key_share = generated_key_share(prf_keys_, client_job.digest);
  return job;
}

bool ThreePartyEngine::abandon(const node::JobKey& key) { return jobs_.erase(key) != 0; }

bool ThreePartyEngine::computing(const node::JobKey& key) const {
  const auto it = jobs_.find(key);
  return it != jobs_.end() && it->second.in_batch;
}

namespace {

// The AAD of a chained tag with zeros where the first tag goes: prefix || N || 0^16.
std::vector<std::uint8_t> chained_aad(const wire::GcmTagRequest& request) {
  std::vector<std::uint8_t> aad(request.chained->prefix);
  aad.insert(aad.end(), request.nonce.begin(), request.nonce.end());
  aad.resize(aad.size() + wire::kGcmTagBytes);
  return aad;
}

}  // namespace

void ThreePartyEngine::answer_tag(const node::ClientJob& client_job) {
  const auto& request = std::get<wire::GcmTagRequest>(client_job.request);
  const SecretBytes* share = host_.key_material(request.key);
  if (share == nullptr || share->size() != 2 * wire::material_bytes(request.key.algorithm)) {
    answer_error(client_job.key, jobs::unknown_key(request.key));
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  const TagMaskKeys keys(prf_keys_, client_job.digest);
  // Everything that can fail comes before the nonces are used up.
  std::optional<wire::GcmTagBytes> check;
  if (request.check) {
    // A local-mask nonce's share of M(N' || 1) is computed again; any other must be held.
    std::optional<jobs::NonceShare> computed;
    if (wire::is_local_mask_nonce(request.check->nonce))
      computed = local_nonce_share(request.key, *share, request.check->nonce, 0, keys);
    const jobs::NonceShare* kept =
        computed ? &*computed : tagged_nonces_.find(request.key, request.check->nonce, now);
    if (kept == nullptr) {
      answer_error(client_job.key, wire::Status::UnknownNonce,
                   "checked nonce " + jobs::describe_nonce(request.check->nonce) + " expired on party " +
                       std::to_string(settings_.party + 1) + " as the tag arrived");
      return;
    }
    // The zero test of a reopen of the checked tag.
    check = tag_check_share(*share, *kept, request.check->nonce, request.check->aad, {}, request.check->tag, keys);
  }
  // GHASH first: a request that cannot be hashed must not use up the nonce.
  rss3::ByteShare tag = jobs::gcm_hash_share(*share, request.aad, request.text);
  std::vector<std::uint8_t> next_aad;
  rss3::ByteShare next_hash;
  if (request.chained) {
    next_aad = chained_aad(request);
    next_hash = jobs::gcm_hash_share(*share, next_aad, {});
  }
  auto pooled = nonce_pool_.take(client_job.key.client, request.key, request.nonce, now);
  auto next_pooled = request.chained ? nonce_pool_.take(client_job.key.client, request.key, request.chained->nonce, now)
                                     : std::optional<jobs::NonceShare>{};
  if (!pooled || (request.chained && !next_pooled)) {
    tag.wipe();
    next_hash.wipe();
    answer_error(client_job.key, wire::Status::UnknownNonce,
                 "nonce " + jobs::describe_nonce(!pooled ? request.nonce : request.chained->nonce) +
                     " expired on party " + std::to_string(settings_.party + 1) + " as the tag arrived");
    return;
  }
  for (std::size_t i = 0; i < 16; ++i) {
    tag.x[i] ^= pooled->x[i];
    tag.a[i] ^= pooled->a[i];
  }
  wire::GcmTagResult result;
  if (request.chained) {
    // The chained tag T' = GHASH_H(prefix || N || T) ^ AES_K(N' || 1) with T still shared: the
    // blocks holding T are products of two secrets, so this server's share of T' is additive
    // (its a components and its product share, rss3::secret_block_ghash_share), masked by a
    // zero-sharing under the request's keys and N'. An additive share has no redundancy: the
    // client checks T' with a later request's zero test before anything carrying it leaves.
    rss3::GhashBlock chained = jobs::gcm_secret_block_share(*share, next_aad.size(),
                                                            request.chained->prefix.size() + wire::kGcmNonceBytes, tag);
    std::array<std::uint8_t, 16> alpha{};
    rss3::CorrelatedRandomness zero_sharing(
        keys.own, keys.previous,
        {jobs::gcm_nonce_epoch(request.chained->nonce), jobs::gcm_nonce_counter(request.chained->nonce)});
    zero_sharing.next_alpha(alpha);
    wire::GcmTagBytes out{};
    for (std::size_t i = 0; i < 16; ++i)
      out[i] = static_cast<std::uint8_t>(chained[i] ^ next_hash.a[i] ^ next_pooled->a[i] ^ alpha[i]);
    wipe(chained.data(), chained.size());
    wipe(alpha.data(), alpha.size());
#if defined(MPC_FAULT_INJECTION)
    if (const auto bit = fault::armed("chained-tag-bit")) out[(*bit / 8) % 16] ^= static_cast<std::uint8_t>(1u << (*bit % 8));
#endif
    result.chained = out;
  }
  next_hash.wipe();
  // Re-randomise before opening, as for every output (rss3/output.hpp). The bare share
  // would be (GHASH share ^ pool share): its components are the stored shares of H^1..H^L
  // combined by coefficients the client chose, hidden only by this one pool share. The
  // masks use this nonce as their id (one tag per nonce, so no id is used twice) under keys
  // bound to the request's digest: a party that computed on another copy than its
  // neighbour uses masks its neighbour never uses, so its reply is uniform noise to the
  // client. The servers answer a tag before comparing their copies, so this binding is what
  // keeps differing copies from opening the shares (node/request_agreement.hpp).
  rss3::CorrelatedRandomness masks(keys.own, keys.previous,
                                   {jobs::gcm_nonce_epoch(request.nonce), jobs::gcm_nonce_counter(request.nonce)});
  rss3::mask_output_share(masks, 0, tag);
  // This linear job needs no check of its own under security = "active": a wrong share cannot
  // pass for a right one. The client opens the tag three ways, from the pairs (a'_i, x'_{i-1})
  // (rss3/output.hpp). Whatever a server i does wrong here (another stored share, pool share,
  // GHASH or mask) reaches the client only as an altered reply (x'_i ^ d, a'_i ^ e): that moves
  // reconstruction i by e and reconstruction i+1 by d and leaves reconstruction i+2 as it was,
  // so the three agree only when d = e = 0, and the client refuses shares that disagree. The
  // tag is as right as the pool share AES_K(N || 1), which the prefetch batch computed.
  std::copy_n(tag.x.begin(), 16, result.x.begin());
  std::copy_n(tag.a.begin(), 16, result.a.begin());
  tag.wipe();
  result.check = check;
#if defined(MPC_FAULT_INJECTION)
  if (const auto bit = fault::armed("tag-share-bit")) result.x[(*bit / 8) % 16] ^= static_cast<std::uint8_t>(1u << (*bit % 8));
#endif
  wire::Reply answer;
  answer.id = request.id;
  answer.body = result;
  host_.answer(client_job.key, std::move(answer));
  // A local-mask nonce reopens from the key's share alone: nothing to keep.
  if (!wire::is_local_mask_nonce(request.nonce))
    tagged_nonces_.keep(request.key, request.nonce, std::move(*pooled), now);
  if (request.chained && !wire::is_local_mask_nonce(request.chained->nonce))
    tagged_nonces_.keep(request.key, request.chained->nonce, std::move(*next_pooled), now);
}

}  // namespace mpc::three_party_engine
