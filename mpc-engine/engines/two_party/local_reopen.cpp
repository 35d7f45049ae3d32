// Nonces with local masks on two servers (jobs/gcm_masks.hpp): a two-server cluster, or two of
// three serving while the third is down (node/pair_service.hpp).
//
// A two-server cluster's XOR shares of K are its two components. A pair of three holds the
// three components of the replicated sharing between them: its leader computes the two it
// holds (its own and the missing server's), the second member its own. Either way the two XOR
// shares of M need no message between the servers.
//
// A reopen is answered from the shares alone, as a tag is. With s_p = M_p(N || 1) ^
// GHASH_p(A, Z) (^ T at the leader) each server's XOR share of s, and r, m drawn from a key
// the two servers share (reopen_key_) and the digest of their copy of the request, server p
// answers r * s_p ^ m (in GF(2^128)): the client's two answers differ by r * s, zero exactly
// when the tag is right and, since r is unknown to it, a uniform block otherwise, never s.
// The keystream shares carry a mask from the same stream, so each alone is uniform. A server
// that answered another copy of the request than its partner draws other r and m: the
// client sees noise. Only servers of security = "passive" reopen so: local masks have no
// actively secure form, and active servers refuse them (docs/threat-model.md).
#include <sodium.h>

#include <algorithm>

#include "common/error.hpp"
#include "engines/two_party/pair_key.hpp"
#include "engines/two_party/two_party_engine.hpp"
#include "jobs/gcm_hash.hpp"
#include "jobs/gcm_masks.hpp"
#include "jobs/request_checks.hpp"
#include "protocol/rss3/gf128.hpp"
#include "protocol/rss3/ghash.hpp"

namespace mpc::two_party_engine {
namespace {

constexpr char kReopenKeyLabel[] = "mpc-kdc two-server reopen key v1";
constexpr char kReopenMaskLabel[] = "mpc-kdc two-server reopen masks v1";

std::size_t text_blocks(const wire::GcmOpenRequest& request) { return (request.text.size() + 15) / 16; }

}  // namespace

SecretBytes derive_reopen_key(const settings::ServerSettings& settings, const transport::CurveKeyPair& own) {
  return derive_pair_key(settings, own, kReopenKeyLabel, {});
}

SecretBytes TwoPartyEngine::mask_components_of(const wire::KeyId& key) {
  if (const auto paired = host_.paired_share(key)) {
    if (paired->share == nullptr) return {};
    SecretBytes both = jobs::replicated_mask_components(*paired->share);
    if (paired->leader) return both;  // its own component and the missing server's
    return SecretBytes(both.span().first(jobs::kMaskComponentBytes));  // its own: the other is the leader's
  }
  const SecretBytes* share = host_.key_material(key);
  if (share == nullptr) return {};
  return jobs::xor_mask_component(share->span());
}

std::optional<node::Refusal> TwoPartyEngine::check_local_reopen(const wire::GcmReopenRequest& request) {
  // Each server reopens from its own share of the masks, which a deviating one could shift.
  if (backend_->pads_outputs())
    return node::Refusal{wire::Status::BadRequest,
                         std::string("GCM nonces with local masks have no actively secure two-party form (each server "
                                     "would answer from its own share of the masks, unchecked): ") +
                             (host_.paired_share(request.key)
                                  ? "two servers of security = \"active\" serving while the third is down reopen "
                                    "none; their tickets open again once three servers serve"
                                  : "a two-server cluster of security = \"active\" reopens none; it serves AES_K "
                                    "nonces (the router's gcm_masks = aes)")};
  if (auto refused = jobs::gcm_input_refusal("reopen", request.key, request.aad, request.text)) return refused;
  if (host_.key_material(request.key) == nullptr)
    return jobs::unknown_key(request.key);
  return std::nullopt;
}

void TwoPartyEngine::answer_local_reopen(const node::ClientJob& job, const wire::GcmReopenRequest& request) {
  const std::size_t blocks = text_blocks(request);
  SecretBytes masks((1 + blocks) * 16);
  {
    const SecretBytes components = mask_components_of(request.key);
    if (components.size() == 0) {
      answer_error(job.key, jobs::unknown_key(request.key));
      return;
    }
    jobs::MaskKeys(request.key, components.span()).xor_terms(request.nonce, 1, masks.span());
  }
  const SecretBytes* share = host_.key_material(request.key);
  if (share == nullptr) {
    answer_error(job.key, jobs::unknown_key(request.key));
    return;
  }
  rss3::ByteShare hash = jobs::gcm_hash_share(share->span(), {}, request.aad, request.text);
  std::array<std::uint8_t, 16> s{};
  for (std::size_t i = 0; i < 16; ++i)
    s[i] = static_cast<std::uint8_t>(masks[i] ^ hash.x[i] ^ (settings_.party == 0 ? request.tag[i] : 0));
  hash.wipe();

  // r || m || the keystream's mask, from the two servers' key, the digest and the nonce.
  SecretBytes stream(32 + blocks * 16);
  {
    SecretBytes seed(crypto_stream_chacha20_ietf_KEYBYTES);
    crypto_generichash_state state;
    crypto_generichash_init(&state, reopen_key_.data(), reopen_key_.size(), seed.size());
    crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(kReopenMaskLabel), sizeof kReopenMaskLabel - 1);
    crypto_generichash_update(&state, job.digest.data(), job.digest.size());
    crypto_generichash_update(&state, request.nonce.data(), request.nonce.size());
    crypto_generichash_final(&state, seed.data(), seed.size());
    wipe(&state, sizeof state);
    const std::uint8_t stream_nonce[crypto_stream_chacha20_ietf_NONCEBYTES] = {};
    crypto_stream_chacha20_ietf(stream.data(), stream.size(), stream_nonce, seed.data());
  }
  stream[0] |= 1;  // r is never zero
  const rss3::Gf128 product = rss3::gf128_mul_portable(rss3::gf128_load(stream.data()), rss3::gf128_load(s.data())) ^
                              rss3::gf128_load(stream.data() + 16);
  wipe(s.data(), s.size());
  wire::GcmReopenResult result;
  result.replicated = false;
  result.blocks = static_cast<std::uint32_t>(blocks);
  rss3::gf128_store(product, result.check.data());
  result.x.resize(blocks * 16);
  for (std::size_t i = 0; i < result.x.size(); ++i)
    result.x[i] = static_cast<std::uint8_t>(masks[16 + i] ^ stream[32 + i]);
  wire::Reply answer;
  answer.id = request.id;
  answer.body = std::move(result);
  host_.answer(job.key, std::move(answer));
}

}  // namespace mpc::two_party_engine
