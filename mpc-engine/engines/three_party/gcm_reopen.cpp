// Reopening a ticket this server tagged, or any ticket of a nonce with local masks: the tag
// check and the keystream without AES.
//
// A full open (a GcmOpen batch) recomputes AES_K(N || 1) and compares it with
// GHASH_H(A, Z) ^ T inside a circuit of some 60 AND layers. Each server still holds its share
// of AES_K(N || 1) of a nonce it tagged (jobs/tagged_nonces.hpp), so s = AES_K(N || 1) ^
// GHASH_H(A, Z) ^ T is local, linear work, and whether s is zero reaches the client through
// the zero test of rss3/zero_test.hpp: no message between the servers, one round trip for the
// client, and nothing about s beyond "zero or not". The keystream shares are those the
// prefetch answered. A nonce with local masks is not kept at all: each server computes its
// shares of M(N || 1) and of the keystream again (local_masks.cpp), after a restart too.
//
// The servers answer a reopen from their own copies at once, as they answer a tag, and
// compare digests afterwards (node/request_agreement.hpp). The zero test's randomness comes
// from keys bound to the digest of the copy (TagMaskKeys): a server that answered another
// copy than its neighbours adds PRF outputs nobody cancels, so the client sees noise, never
// a product of the others' shares; and every distinct request gets a fresh r, so
// comparing answers for two requests (other A, other T) teaches nothing about H.
//
// Active security: the keystream is opened three ways like every output (rss3/output.hpp), so
// one altered share is refused by the client; an altered check share can only make a right
// tag fail (zero_test.hpp), which the client reports as a tag that does not verify.
#include <cstring>
#include <optional>

#include "common/error.hpp"
#include "common/fault_injection.hpp"
#include "engines/three_party/three_party_engine.hpp"
#include "jobs/gcm_hash.hpp"
#include "jobs/request_checks.hpp"
#include "protocol/rss3/ghash.hpp"
#include "protocol/rss3/zero_test.hpp"

namespace mpc::three_party_engine {
namespace {

std::size_t text_blocks(const wire::GcmOpenRequest& request) { return (request.text.size() + 15) / 16; }

std::string not_held(const wire::GcmReopenRequest& request, int party) {
  return "nonce " + jobs::describe_nonce(request.nonce) + " of " + wire::describe(request.key) +
         " is not held for reopening on party " + std::to_string(party + 1) +
         " (not tagged here, restarted, expired or evicted): open it in full";
}

}  // namespace

std::optional<node::Refusal> ThreePartyEngine::check_gcm_reopen(const wire::GcmReopenRequest& request) {
  if (auto refused = jobs::gcm_input_refusal("reopen", request.key, request.aad, request.text)) return refused;
  if (auto refused = check_share(request.key, 1)) return refused;
  // A nonce with local masks reopens from the key's share alone, held or not.
  if (wire::is_local_mask_nonce(request.nonce)) return std::nullopt;
  const jobs::NonceShare* kept = tagged_nonces_.find(request.key, request.nonce, std::chrono::steady_clock::now());
  if (kept == nullptr || kept->keystream.size() < 2 * 16 * text_blocks(request))
    return node::Refusal{wire::Status::UnknownNonce, not_held(request, settings_.party)};
  return std::nullopt;
}

rss3::Block ThreePartyEngine::tag_check_share(const SecretBytes& share, const jobs::NonceShare& kept,
                                             const wire::GcmNonce& nonce, std::span<const std::uint8_t> aad,
                                             std::span<const std::uint8_t> text, const wire::GcmTagBytes& tag,
                                             const TagMaskKeys& keys) {
  // The public tag joins s as the sharing (0, tag).
  rss3::ByteShare hash = jobs::gcm_hash_share(share, aad, text);
  rss3::Block s_x{};
  rss3::Block s_a{};
  for (std::size_t i = 0; i < 16; ++i) {
    s_x[i] = static_cast<std::uint8_t>(hash.x[i] ^ kept.x[i]);
    s_a[i] = static_cast<std::uint8_t>(hash.a[i] ^ kept.a[i] ^ tag[i]);
  }
  hash.wipe();
  const rss3::Block out = rss3::zero_test_share(s_x, s_a, keys.own, keys.previous,
                                                {jobs::gcm_nonce_epoch(nonce), jobs::gcm_nonce_counter(nonce)});
  wipe(s_x.data(), s_x.size());
  wipe(s_a.data(), s_a.size());
  return out;
}

void ThreePartyEngine::answer_reopen(const node::ClientJob& client_job) {
  const auto& request = std::get<wire::GcmReopenRequest>(client_job.request);
  const SecretBytes* share = host_.key_material(request.key);
  const bool local = wire::is_local_mask_nonce(request.nonce);
  const jobs::NonceShare* kept =
      local ? nullptr : tagged_nonces_.find(request.key, request.nonce, std::chrono::steady_clock::now());
  const std::size_t blocks = text_blocks(request);
  if (share == nullptr || share->size() != 2 * wire::material_bytes(request.key.algorithm)) {
    answer_error(client_job.key, jobs::unknown_key(request.key));
    return;
  }
  const TagMaskKeys keys(prf_keys_, client_job.digest);
  // A local-mask nonce is never kept: every server computes its shares, under the same masks.
  std::optional<jobs::NonceShare> computed;
  if (local) {
    computed = local_nonce_share(request.key, *share, request.nonce, blocks, keys);
    kept = &*computed;
  } else if (kept == nullptr || kept->keystream.size() < 2 * 16 * blocks) {
    answer_error(client_job.key, wire::Status::UnknownNonce, not_held(request, settings_.party));
    return;
  }
  wire::GcmReopenResult result;
  result.blocks = static_cast<std::uint32_t>(blocks);
  result.check = tag_check_share(*share, *kept, request.nonce, request.aad, request.text, request.tag, keys);
  const std::size_t held = kept->keystream.size() / 2;
  const std::uint8_t* keystream = kept->keystream.data();
  result.x.assign(keystream, keystream + blocks * 16);
  result.a.assign(keystream + held, keystream + held + blocks * 16);
#if defined(MPC_FAULT_INJECTION)
  if (const auto bit = fault::armed("reopen-check-bit")) result.check[(*bit / 8) % 16] ^= static_cast<std::uint8_t>(1u << (*bit % 8));
  if (const auto bit = fault::armed("reopen-keystream-bit"); bit && !result.x.empty())
    result.x[(*bit / 8) % result.x.size()] ^= static_cast<std::uint8_t>(1u << (*bit % 8));
#endif
  wire::Reply answer;
  answer.id = request.id;
  answer.body = std::move(result);
  host_.answer(client_job.key, std::move(answer));
}

}  // namespace mpc::three_party_engine
