// GCM nonces with local masks (jobs/gcm_masks.hpp): a prefetch batch that runs no circuit, and
// the state a reopen of such a nonce needs, computed from the key's share alone.
//
// The leader still forms the batch: its header gives every server the same nonces from the
// epoch's one counter (the follower's NonceGuard refuses a counter used before), and names the
// requests and their digests, so no server computes for a request the others did not get.
// Each server then computes its replicated share of every nonce's masks with two AES-256 calls
// per block, keeps the share of M(N || 1) in its nonce pool for the one tag that may use it,
// and answers the keystream shares re-randomised under the batch's id (rss3/output.hpp), so
// the client opens them three ways as any output.
//
// Active security: every term of M is computed by the two servers that hold its component, so
// a server that alters its share of a keystream block is refused by the client's three-way
// opening, and one that alters its kept share of M(N || 1) makes the tag's three openings
// disagree (or, in a chained tag, fail its check).
#include <cstring>

#include "common/error.hpp"
#include "common/fault_injection.hpp"
#include "engines/three_party/three_party_engine.hpp"
#include "jobs/gcm_masks.hpp"
#include "protocol/rss3/output.hpp"

namespace mpc::three_party_engine {
namespace {

bool fits_local_batch(const wire::BatchSlice& slice, const Job& job) {
  const std::uint64_t per_nonce = 1 + static_cast<std::uint64_t>(job.blocks_per_nonce);
  return job.kind == JobKind::GcmPrefetch && job.local_masks && slice.nonces != 0 &&
         static_cast<std::uint64_t>(slice.nonces) * per_nonce == slice.blocks &&
         static_cast<std::uint64_t>(slice.first_block) + slice.blocks <= job.instances &&
         slice.first_block % per_nonce == 0 && job.key_share.size() == 2 * jobs::kMaskComponentBytes;
}

}  // namespace

void ThreePartyEngine::run_local_masks(const wire::BatchHeader& header) {
  for (const auto& slice : header.slices) {
    auto it = jobs_.find(node::JobKey{slice.client, slice.request});
    if (it == jobs_.end() || !fits_local_batch(slice, it->second)) {
      refuse_misfit(header, slice, "the batch of local masks");
      return;
    }
  }
  rss3::CorrelatedRandomness randomness(prf_keys_.own, prf_keys_.previous, {header.epoch, header.sequence});
  std::size_t offset = 0;  // of this batch's keystream output, the same at every server
  for (const auto& slice : header.slices) {
    auto it = jobs_.find(node::JobKey{slice.client, slice.request});
    Job& job = it->second;
    const jobs::MaskKeys keys(job.key, job.key_share.span());
    const std::size_t per_nonce = 1 + static_cast<std::size_t>(job.blocks_per_nonce);
    const std::size_t bytes = static_cast<std::size_t>(job.blocks_per_nonce) * 16;
    for (std::size_t k = 0; k < slice.nonces; ++k) {
      const std::size_t q = slice.first_block / per_nonce + k;
      const auto nonce = jobs::prefetch_nonce(header.epoch, slice.first_nonce + static_cast<std::uint32_t>(k), true);
      std::memcpy(job.nonces.data() + q * wire::kGcmNonceBytes, nonce.data(), wire::kGcmNonceBytes);
      rss3::ByteShare masks = jobs::replicated_masks(keys, nonce, 1, per_nonce);
#if defined(MPC_FAULT_INJECTION)
      // Its term of the first component altered in both places it appears: a share of M(N || 1)
      // that is consistent in itself, as a server computing with a wrong component would hold.
      if (const auto bit = fault::armed("local-mask-bit")) {
        masks.x[(*bit / 8) % 16] ^= static_cast<std::uint8_t>(1u << (*bit % 8));
        masks.a[(*bit / 8) % 16] ^= static_cast<std::uint8_t>(1u << (*bit % 8));
      }
#endif
      std::memcpy(job.nonce_shares.data() + q * 32, masks.x.data(), 16);
      std::memcpy(job.nonce_shares.data() + q * 32 + 16, masks.a.data(), 16);
      rss3::ByteShare keystream{{masks.x.begin() + 16, masks.x.end()}, {masks.a.begin() + 16, masks.a.end()}};
      masks.wipe();
      rss3::mask_output_share(randomness, offset, keystream);
      offset += bytes;
      if (bytes != 0) {
        std::memcpy(job.masked_x.data() + q * bytes, keystream.x.data(), bytes);
        std::memcpy(job.masked_a.data() + q * bytes, keystream.a.data(), bytes);
      }
      keystream.wipe();
    }
    job.blocks_done += slice.blocks;
    if (job.blocks_done == job.instances) {
      job.key_share.clear();
      complete_job(it);
    }
  }
  ++batches_run_;
  log_.debug("batch of local masks done", {{"sequence", header.sequence}});
  role_->batch_done(header, true, 0);
}

jobs::NonceShare ThreePartyEngine::local_nonce_share(const wire::KeyId& key, const SecretBytes& share,
                                                     const wire::GcmNonce& nonce, std::size_t blocks,
                                                     const TagMaskKeys& keys) {
  const SecretBytes components = jobs::replicated_mask_components(share);
  rss3::ByteShare masks = jobs::replicated_masks(jobs::MaskKeys(key, components.span()), nonce, 1, 1 + blocks);
  jobs::NonceShare out;
  std::memcpy(out.x.data(), masks.x.data(), 16);
  std::memcpy(out.a.data(), masks.a.data(), 16);
  rss3::ByteShare keystream{{masks.x.begin() + 16, masks.x.end()}, {masks.a.begin() + 16, masks.a.end()}};
  masks.wipe();
  // Re-randomised as the prefetch's were, under the request's keys: the zero test draws its r
  // from the start of the same streams, output masks come from their reserved counters.
  rss3::CorrelatedRandomness randomness(keys.own, keys.previous,
                                        {jobs::gcm_nonce_epoch(nonce), jobs::gcm_nonce_counter(nonce)});
  rss3::mask_output_share(randomness, 0, keystream);
  out.keystream = SecretBytes(2 * blocks * 16);
  if (blocks != 0) {
    std::memcpy(out.keystream.data(), keystream.x.data(), blocks * 16);
    std::memcpy(out.keystream.data() + blocks * 16, keystream.a.data(), blocks * 16);
  }
  keystream.wipe();
  return out;
}

}  // namespace mpc::three_party_engine
