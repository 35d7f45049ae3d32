// The Kerberos and GCM jobs of a two-server cluster, garbled (see gc2_backend.hpp).
#include <sodium.h>

#include <algorithm>
#include <iterator>

#include "common/error.hpp"
#include "protocol/gc2/ghash_labels.hpp"
#include "jobs/gcm_hash.hpp"
#include "jobs/gcm_masks.hpp"
#include "jobs/krb_jobs.hpp"
#include "jobs/nonce_pool.hpp"
#include "engines/two_party/gc2_backend.hpp"
#if defined(MPC_FAULT_INJECTION)
#include "common/fault_injection.hpp"
#endif

namespace mpc::two_party_engine {
namespace {

using gc2::Block;

constexpr std::size_t kRoundKeyRows = wire::kGcmRoundKeyBytes * 8;

}  // namespace

NonceLedger::Verdict NonceLedger::accept(std::uint64_t epoch, std::uint32_t first, std::uint32_t count) {
  if (count == 0) return Verdict::Repeated;
  if (epoch != epoch_) {
    if (!epochs_->open(epoch)) return Verdict::EpochOpenedBefore;
    epoch_ = epoch;
    ranges_.clear();
  }
  std::uint64_t begin = first;
  std::uint64_t end = begin + count;
  auto next = ranges_.lower_bound(begin);
  if (next != ranges_.end() && next->first < end) return Verdict::Repeated;
  if (next != ranges_.begin()) {
    auto previous = std::prev(next);
    if (previous->second > begin) return Verdict::Repeated;
    if (previous->second == begin) {
      begin = previous->first;
      ranges_.erase(previous);
    }
  }
  if (next != ranges_.end() && next->first == end) {
    end = next->second;
    ranges_.erase(next);
  }
  ranges_.emplace(begin, end);
  return Verdict::Fresh;
}

// Server 1 sends the data's active labels; both then run the circuit over the secret rows and
// the data. One instance, so input row r is label r.
KrbOutput Gc2Backend::krb(two_party::Channel& peer, const KrbTask& task) {
  const wire::KeyAlgorithm algorithm = task.key.algorithm;
  if (task.key_share.size() != wire::material_bytes(algorithm))
    throw Error(Component::Server, "key share of the wrong size");
  wire::KrbRequest request;
  request.key = task.key;
  request.operation = task.operation;
  request.usage = task.usage;
  request.data.assign(task.data.begin(), task.data.end());
  request.combine = task.combine;
  agree_on_mode(peer);
  if (authenticated_krb_) {
    if (task.share_check.size() != wire::share_check_bytes(task.key.algorithm))
      throw Error(Component::Server, "a Kerberos job under security = \"active\" with a key stored without its share's check");
    agree_on_request(peer, task.request_digest);
    AuthenticatedKrb::Job job{&request, task.key_share, task.mask_share, task.output_pad, task.share_check};
    try {
      AuthenticatedKrb::Padded padded = authenticated_krb_->run(peer, job, task.pool_epoch, task.pool_start,
                                                                kAuthenticatedPoolWait);
      return {std::move(padded.bytes), padded.report};
    } catch (const two_party::PoolEmpty& error) {
      throw BackendBusy(Component::Server, error.what());
    }
  }
  const jobs::KrbJobPlan plan = jobs::plan_krb_job(request);
  const std::size_t result_bytes = plan.result_bytes;
  const std::shared_ptr<const circuits::Program> krb_program =
      krb_circuits_->program(plan.circuit.id, plan.circuit.data_bytes, plan.circuit.combine);
  const circuits::Program& prog = *krb_program;
  const jobs::KrbSecretRange range = plan.secret;
  const std::size_t secret_rows = range.bytes * 8;
  const std::span<const std::uint8_t> public_record(plan.public_record);
  const std::size_t data_rows = public_record.size() * 8;
  if (task.mask_share.size() != plan.mask_bytes) throw Error(Component::Server, "record mask share of the wrong size");
  if (prog.num_inputs != secret_rows + 8 * plan.mask_bytes + data_rows || prog.num_outputs > result_bytes * 8)
    throw Error(Component::Server, "Kerberos circuit does not fit its job");
  // The other server may still be compiling this circuit (a shape it has not seen yet, up to
  // seconds for a KRB-FX-CF2 job of an RFC 8009 key) before it answers.
  peer.allow_extra_wait(jobs::krb_first_layer_grace(prog));

#if defined(MPC_FAULT_INJECTION)
  // "krb-mask-bit": either server takes its share of the record's mask R with bit 0 flipped, so
  // the job computes on a record with bit 0 flipped (an encryption of another plaintext, with
  // its MAC), unnoticed under security = "passive".
  if (plan.mask_bytes > 0 && fault::armed("krb-mask-bit")) {
    SecretBytes flipped(task.mask_share);
    flipped[0] ^= 1;
    KrbTask altered = task;
    altered.mask_share = flipped.span();
    std::vector<std::uint8_t> bits = krb_circuit_bits(peer, altered, prog, plan.circuit, range, public_record);
    SecretBytes share(result_bytes);
    for (std::size_t j = 0; j < bits.size(); ++j) share[j / 8] |= static_cast<std::uint8_t>(bits[j] << (j % 8));
    return {std::move(share), std::nullopt};
  }
#endif
  // With a garbling both servers prepared for this shape, or garbled now (prepared_jobs.cpp).
  std::vector<std::uint8_t> bits = krb_circuit_bits(peer, task, prog, plan.circuit, range, public_record);
  SecretBytes share(result_bytes);
  for (std::size_t j = 0; j < bits.size(); ++j) share[j / 8] |= static_cast<std::uint8_t>(bits[j] << (j % 8));
  wipe(bits.data(), bits.size());
  return {std::move(share), std::nullopt};
}

std::vector<wire::GcmNonce> Gc2Backend::next_nonces(std::uint32_t count) {
  std::lock_guard lock(mutex_);
  if (next_nonce_ + count > wire::kGcmCountersPerEpoch || nonce_epoch_refused_) {
    nonce_epoch_refused_ = false;
    const std::uint64_t previous = nonce_epoch_;
    do randombytes_buf(&nonce_epoch_, sizeof nonce_epoch_);
    while (nonce_epoch_ == 0 || nonce_epoch_ == previous);
    next_nonce_ = 0;
  }
  std::vector<wire::GcmNonce> nonces(count);
  for (std::uint32_t i = 0; i < count; ++i)
    nonces[i] = jobs::make_gcm_nonce(nonce_epoch_, static_cast<std::uint32_t>(next_nonce_ + i));
  next_nonce_ += count;
  return nonces;
}

AuthenticatedGcm::Inputs Gc2Backend::gcm_inputs(std::span<const std::uint8_t> key_share,
                                                const std::optional<wire::OutputPadSeed>& pad,
                                                std::span<const std::uint8_t> share_check, std::uint64_t pool_epoch,
                                                std::uint64_t pool_start) const {
  if (!pad) throw Error(Component::Server, "a GCM job under security = \"active\" without the client's output pad");
  if (share_check.size() != wire::share_check_bytes(wire::KeyAlgorithm::Aes256Gcm))
    throw Error(Component::Server, "a GCM job under security = \"active\" with a key stored without its share's check");
  AuthenticatedGcm::Inputs inputs;
  inputs.round_key_share = key_share.first(wire::kGcmRoundKeyBytes);
  inputs.share_check = share_check;
  inputs.pad = *pad;
  inputs.epoch = pool_epoch;
  inputs.start = pool_start;
  inputs.wait = kAuthenticatedPoolWait;
  return inputs;
}

GcmPrefetched Gc2Backend::gcm_prefetch(two_party::Channel& peer, const GcmPrefetchTask& task) {
  if (authenticated_gcm_ && task.local_masks)
    throw Error(Component::Server,
                "GCM nonces with local masks have no actively secure two-party form (each server would compute its "
                "masks from its own share, unchecked): a two-server cluster of security = \"active\" serves AES_K "
                "nonces (the router's gcm_masks = aes)");
  if (party_ != 0) return prefetch_nonces(peer, task);
  try {
    return prefetch_nonces(peer, task);
  } catch (...) {
    // Server 2 refuses an epoch it computed under before it restarted, and says so only by
    // ending the job: after any failure the next prefetch takes a new epoch.
    std::lock_guard lock(mutex_);
    nonce_epoch_refused_ = true;
    throw;
  }
}

GcmPrefetched Gc2Backend::prefetch_nonces(two_party::Channel& peer, const GcmPrefetchTask& task) {
  if (task.key.algorithm != wire::KeyAlgorithm::Aes256Gcm || task.key_share.size() != wire::material_bytes(task.key.algorithm))
    throw Error(Component::Server, "GCM prefetch needs an aes256-gcm key share");
  if (task.count == 0) throw Error(Component::Server, "GCM prefetch of no nonces");
  GcmPrefetched out;
  // The nonces travel as the epoch and the first counter; server 2 computes each at most once.
  std::uint8_t range[12];
  if (party_ == 0) {
    out.nonces = next_nonces(task.count);
    std::copy_n(out.nonces.front().begin(), 12, range);
    peer.send(range);
  } else {
    peer.receive(range);
    const wire::GcmNonce first_nonce = [&] {
      wire::GcmNonce nonce{};
      std::copy_n(range, 12, nonce.begin());
      return nonce;
    }();
    const std::uint64_t epoch = jobs::gcm_nonce_epoch(first_nonce);
    const std::uint32_t first = jobs::gcm_nonce_counter(first_nonce);
    if (static_cast<std::uint64_t>(first) + task.count > wire::kGcmCountersPerEpoch)
      throw PeerError(Component::Server, "GCM nonce range past its epoch's end");
    NonceLedger::Verdict verdict;
    {
      std::lock_guard lock(mutex_);
      verdict = nonce_ledger_.accept(epoch, first, task.count);
    }
    // Nothing was computed: the client's next attempt gets nonces of the leader's next epoch.
    if (verdict == NonceLedger::Verdict::EpochOpenedBefore)
      throw RetryableError(Component::Server, "GCM nonces of an epoch this server computed under before (a replay, or "
                                              "it restarted since): refused");
    if (verdict == NonceLedger::Verdict::Repeated)
      throw PeerError(Component::Server, "the leading server repeated GCM nonces: refused");
    out.nonces.resize(task.count);
    for (std::uint32_t i = 0; i < task.count; ++i) out.nonces[i] = jobs::make_gcm_nonce(epoch, first + i);
  }
  const std::size_t per_nonce = 1 + static_cast<std::size_t>(task.blocks_per_nonce);
  if (task.local_masks) {
    // The same counters, marked: both servers compute their XOR shares of M on their own. The
    // range is the only message, and nothing follows it to push it out.
    peer.flush();
    const jobs::MaskKeys masks(task.key, task.mask_components);
    out.mask_shares = SecretBytes(task.count * 16);
    out.keystream = SecretBytes(task.count * task.blocks_per_nonce * 16);
    SecretBytes terms(per_nonce * 16);
    for (std::size_t n = 0; n < task.count; ++n) {
      out.nonces[n] = jobs::prefetch_nonce(jobs::gcm_nonce_epoch(out.nonces[n]), jobs::gcm_nonce_counter(out.nonces[n]), true);
      masks.xor_terms(out.nonces[n], 1, terms.span());
      std::copy_n(terms.data(), 16, out.mask_shares.data() + n * 16);
      std::copy_n(terms.data() + 16, task.blocks_per_nonce * 16, out.keystream.data() + n * task.blocks_per_nonce * 16);
    }
    return out;
  }
  agree_on_mode(peer);
  if (authenticated_gcm_) {
    const AuthenticatedGcm::Inputs inputs =
        gcm_inputs(task.key_share, task.output_pad, task.share_check, task.pool_epoch, task.pool_start);
    agree_on_request(peer, task.request_digest);
    try {
      AuthenticatedGcm::Prefetched padded = authenticated_gcm_->prefetch(peer, inputs, out.nonces, task.blocks_per_nonce);
      out.mask_shares = std::move(padded.mask_shares);
      out.keystream = std::move(padded.keystream);
      out.padded = std::move(padded.reports);
      return out;
    } catch (const two_party::PoolEmpty& error) {
      throw BackendBusy(Component::Server, error.what());
    }
  }
#if defined(MPC_FAULT_INJECTION)
  // "share-bit": either server takes its share of the last round key with bit 0 flipped, which
  // changes every keystream block and mask unnoticed under security = "passive".
  if (fault::armed("share-bit")) {
    SecretBytes flipped(task.key_share);
    flipped[wire::kGcmRoundKeyBytes - 16] ^= 1;
    GcmPrefetchTask altered = task;
    altered.key_share = flipped.span();
    const gc2::Labels key = key_labels(peer, altered.key, altered.key_share, &altered.request_digest);
    return garbled_prefetch(peer, key, std::move(out), task);
  }
#endif
  const gc2::Labels key = key_labels(peer, task.key, task.key_share, &task.request_digest);
  return garbled_prefetch(peer, key, std::move(out), task);
}

GcmPrefetched Gc2Backend::garbled_prefetch(two_party::Channel& peer, const gc2::Labels& key, GcmPrefetched out,
                                           const GcmPrefetchTask& task) {
  const std::size_t per_nonce = 1 + static_cast<std::size_t>(task.blocks_per_nonce);
  std::vector<std::uint8_t> blocks(task.count * per_nonce * 16);
  for (std::size_t n = 0; n < task.count; ++n)
    for (std::size_t b = 0; b < per_nonce; ++b) {
      const auto counter = jobs::gcm_counter_block(out.nonces[n], static_cast<std::uint32_t>(1 + b));
      std::copy(counter.begin(), counter.end(), blocks.begin() + static_cast<std::ptrdiff_t>((n * per_nonce + b) * 16));
    }
  const SecretBytes shares = aes_blocks(peer, programs_[1][0], key.span().first(kRoundKeyRows), blocks);
  out.mask_shares = SecretBytes(task.count * 16);
  out.keystream = SecretBytes(task.count * task.blocks_per_nonce * 16);
  for (std::size_t n = 0; n < task.count; ++n) {
    const std::uint8_t* nonce_blocks = shares.data() + n * per_nonce * 16;
    std::copy_n(nonce_blocks, 16, out.mask_shares.data() + n * 16);
    std::copy_n(nonce_blocks + 16, task.blocks_per_nonce * 16, out.keystream.data() + n * task.blocks_per_nonce * 16);
  }
  return out;
}

GcmOpened Gc2Backend::gcm_open(two_party::Channel& peer, const GcmOpenTask& task) {
  if (task.key.algorithm != wire::KeyAlgorithm::Aes256Gcm || task.key_share.size() != wire::material_bytes(task.key.algorithm))
    throw Error(Component::Server, "GCM open needs an aes256-gcm key share");
  agree_on_mode(peer);
  if (authenticated_gcm_) {
    const AuthenticatedGcm::Inputs inputs =
        gcm_inputs(task.key_share, task.output_pad, task.share_check, task.pool_epoch, task.pool_start);
    agree_on_request(peer, task.request_digest);
    // GHASH of public data is linear in the powers: this server's share from its share of them.
    rss3::ByteShare hash = jobs::gcm_hash_share(task.key_share, {}, task.aad, task.text);
    std::array<std::uint8_t, 16> hash_share{};
    std::copy_n(hash.x.begin(), 16, hash_share.begin());
    hash.wipe();
    const auto text_blocks = static_cast<std::uint32_t>((task.text.size() + 15) / 16);
    try {
      AuthenticatedGcm::Opened opened =
          authenticated_gcm_->open(peer, inputs, task.nonce, text_blocks, hash_share, task.tag);
      wipe(hash_share.data(), hash_share.size());
      GcmOpened out;
      out.keystream = std::move(opened.keystream);
      out.verdict = opened.verdict;
      out.report = opened.report;
      return out;
    } catch (const two_party::PoolEmpty& error) {
      wipe(hash_share.data(), hash_share.size());
      throw BackendBusy(Component::Server, error.what());
    } catch (...) {
      wipe(hash_share.data(), hash_share.size());
      throw;
    }
  }
  const gc2::Labels key = key_labels(peer, task.key, task.key_share, &task.request_digest);
  const std::size_t text_blocks = (task.text.size() + 15) / 16;
  std::vector<std::uint8_t> blocks((1 + text_blocks) * 16);
  for (std::size_t b = 0; b <= text_blocks; ++b) {
    const auto counter = jobs::gcm_counter_block(task.nonce, static_cast<std::uint32_t>(1 + b));
    std::copy(counter.begin(), counter.end(), blocks.begin() + static_cast<std::ptrdiff_t>(b * 16));
  }
  gc2::Labels mask_labels;
  const SecretBytes shares =
      aes_blocks(peer, programs_[1][0], key.span().first(kRoundKeyRows), blocks, &mask_labels);
  // The computed tag's labels, free: GHASH is linear in the powers' bits.
  gc2::Labels tag_labels = gc2::ghash_labels(key.span().subspan(kRoundKeyRows), task.aad, task.text);
  for (std::size_t j = 0; j < 128; ++j) tag_labels[j] ^= mask_labels[j];
  gc2::Labels given(128);
  std::vector<std::uint8_t> verdict;
  if (party_ == 0) {
    const gc2::Labels zero = gc2::zero_labels(128);
    const gc2::Labels active = gc2::garbler_input_labels(*garbler_, gc2::bits_of(task.tag), zero);
    peer.send({reinterpret_cast<const std::uint8_t*>(active.data()), active.size() * sizeof(Block)});
    verdict = garbler_->garble(equality_, 1, gc2::concatenated(tag_labels.span(), zero.span()), peer);
  } else {
    peer.receive({reinterpret_cast<std::uint8_t*>(given.data()), given.size() * sizeof(Block)});
    verdict = gc2::evaluate(equality_, 1, gc2::concatenated(tag_labels.span(), given.span()), peer);
  }
  GcmOpened out;
  out.keystream = SecretBytes(text_blocks * 16);
  std::copy_n(shares.data() + 16, text_blocks * 16, out.keystream.data());
  out.verdict = verdict.at(0);
  return out;
}

}  // namespace mpc::two_party_engine
