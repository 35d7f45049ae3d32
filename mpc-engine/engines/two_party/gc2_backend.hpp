// The garbled-circuit back end (protocol gc2): server 1 garbles, server 2 evaluates, for every
// job, the AES circuit with the 32-AND S-box (the fewest AND gates; depth costs nothing here).
//
// One job over its stream:
//   2 -> 1  the id of the label set server 2 holds for this key and its own share (0: none)
//   1 -> 2  the id of server 1's label set for the key and its share; if they differ, server
//           2's key-share bits are transferred by chosen OT (protocol/ot): server 2 learns,
//           per key bit, Z ^ (s1 ^ s2) * delta
//   1 -> 2  the active labels of the public input blocks, then the garbled stream (its header
//           names the garbling and carries the constant's label), per part of at most 512 blocks
//   each    its output bits: server 1 the decoding bits, server 2 its labels' colours
//
// Server 1 draws delta when it starts and keeps, per key, the zero labels of the key rows under
// a random label-set id; server 2 keeps the active labels it received under that id. Each
// side also remembers a digest of the share the labels were made with (never sent), so a key
// re-imported under the same id gets fresh labels. The OT thus runs once per key and server-1
// start, not per job, and a job costs one small round trip plus the stream. Reusing input
// labels across jobs under one delta is sound because every garbling's gates use tweaks of
// their own (the Garbler's garbling number, never reused under one delta): all jobs of a
// session form one garbled circuit whose key wires fan out into every job.
// Kerberos and GCM jobs (gc2_circuit_jobs.cpp) run the same way in every two-server cluster,
// lut2 ones included (lookup tables cover the AES S-box alone; HMAC's adders and a tag's
// comparison are gates). Their key labels cover the key's whole material, so a job picks the
// rows it needs (a usage's derived keys, the round keys, the hash key powers) from one
// transfer per key. Each job's stream starts with a digest of the request as the garbler
// got it: the evaluator refuses a job whose request differs from its own copy.
//   Kerberos: the circuit of the operation and data length (server/krb_circuit_cache), with
//     the usage's secret rows and the data's bits as inputs; the output bits are the shares.
//     Server 2's first message also offers a garbling prepared ahead of time for the job's
//     shape (0: none), and server 1 names the one the job runs on (0: garbled now) before the
//     data's labels (prepared_circuits.hpp). Prepared garblings take the same key labels as
//     online ones, which is sound for the same reason: each garbling's number, drawn when it
//     is garbled from the one counter, gives its gates tweaks no other garbling under this
//     delta has, made ahead or online (protocol/gc2/half_gates.hpp, "Garbling ahead").
//   GCM prefetch: the garbler picks the nonces (its epoch || a counter) and sends them; the
//     evaluator accepts each nonce once (NonceLedger); both garble AES over N || 1, N || 2...
//     The shares of AES_K(N || 1) stay on the servers for the one tag that may use them:
//     a server's tag share is GHASH under its XOR share of the hash key powers (linear, no
//     message) ^ its share of AES_K(N || 1).
//   GCM open: AES over N || 1.. keeping the output labels of N || 1; the tag's labels are
//     ghash_labels() of the powers' labels ^ those; an equality circuit against the given
//     tag's bits gives the verdict's shares. One round trip (the key handshake) plus one stream.
#pragma once

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <map>
#include <span>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "circuits/program.hpp"
#include "cuda/gpu_garbling.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "jobs/krb_circuit_cache.hpp"
#include "jobs/krb_jobs.hpp"
#include "engines/two_party/authenticated_aes.hpp"
#include "engines/two_party/authenticated_gcm.hpp"
#include "engines/two_party/authenticated_krb.hpp"
#include "engines/two_party/backend.hpp"
#include "engines/two_party/mask_labels.hpp"
#include "store/epoch_ledger.hpp"
#include "engines/two_party/prepared_circuits.hpp"

namespace mpc::two_party_engine {

// A Kerberos job (wire::KrbRequest) under an XOR share of a Kerberos key's material.
struct KrbTask {
  std::uint64_t job = 0;
  wire::KeyId key;
  wire::KrbOperation operation = wire::KrbOperation::Encrypt;
  std::uint32_t usage = 0;
  std::span<const std::uint8_t> key_share;  // the whole material share
  std::span<const std::uint8_t> data;       // with its secret bytes masked (wire/krb_record_mask.hpp)
  std::array<std::uint8_t, 32> request_digest{};
  std::optional<wire::KrbCombine> combine;  // a job under KRB-FX-CF2 (KrbRequest::combine)
  std::span<const std::uint8_t> mask_share;  // this server's XOR share of the record's mask R
  // security = "active": this server's pad on the result (from its record-mask seed) and the
  // check dealt with its key share.
  client_checks::PadSeed output_pad{};
  std::span<const std::uint8_t> share_check{};
  std::uint64_t pool_epoch = 0;  // the AND material the job takes (pool_entries)
  std::uint64_t pool_start = 0;
};

// A Kerberos job's result: this server's XOR share, or (security = "active") the result under
// both servers' pads, the same on both, with the report the client checks the pads by.
struct KrbOutput {
  SecretBytes bytes;
  std::optional<client_checks::PartReport> report;
};

// A GCM prefetch: `count` nonces of 1 + blocks_per_nonce AES blocks each.
struct GcmPrefetchTask {
  std::uint64_t job = 0;
  wire::KeyId key;
  std::span<const std::uint8_t> key_share;
  std::uint32_t count = 0;
  std::uint32_t blocks_per_nonce = 0;
  std::array<std::uint8_t, 32> request_digest{};
  // Local masks (jobs/gcm_masks.hpp): no garbling; each server computes its XOR share of the
  // masks from these components of K, 32 bytes each.
  bool local_masks = false;
  std::span<const std::uint8_t> mask_components;
  // security = "active": this server's pad seed from the client, the check dealt with its key
  // share, and the AND material the job takes.
  std::optional<wire::OutputPadSeed> output_pad;
  std::span<const std::uint8_t> share_check{};
  std::uint64_t pool_epoch = 0;
  std::uint64_t pool_start = 0;
};
struct GcmPrefetched {
  std::vector<wire::GcmNonce> nonces;
  SecretBytes mask_shares;  // 16 bytes per nonce: this server's share of AES_K(N || 1) (or M)
  // count * blocks_per_nonce * 16 bytes: this server's share, or (security = "active") the
  // keystream under both servers' pads, with the reports the client checks them by.
  SecretBytes keystream;
  std::optional<wire::PaddedReports> padded;
};

struct GcmOpenTask {
  std::uint64_t job = 0;
  wire::KeyId key;
  std::span<const std::uint8_t> key_share;
  wire::GcmNonce nonce{};
  std::span<const std::uint8_t> aad;
  std::span<const std::uint8_t> text;
  wire::GcmTagBytes tag{};
  std::array<std::uint8_t, 32> request_digest{};
  // security = "active", as GcmPrefetchTask's.
  std::optional<wire::OutputPadSeed> output_pad;
  std::span<const std::uint8_t> share_check{};
  std::uint64_t pool_epoch = 0;
  std::uint64_t pool_start = 0;
};
// This server's shares of the keystream (text blocks * 16 bytes) and of the verdict bit, or
// (security = "active") both under both servers' pads (the verdict byte: the verdict in bit 0)
// with the report the client checks them by.
struct GcmOpened {
  SecretBytes keystream;
  std::uint8_t verdict = 0;
  std::optional<client_checks::PartReport> report;
};

// Which GCM nonces a follower has computed AES_K(N || 1) for: each at most once, whatever
// order the jobs run in (ranges are kept merged). Ranges of the current epoch are kept here;
// an epoch it leaves is never taken again, after a restart neither (store/epoch_ledger.hpp).
class NonceLedger {
 public:
  // `epochs`: the server's ledger; none keeps one in memory (tests and benchmarks).
  explicit NonceLedger(store::EpochLedger* epochs = nullptr) : epochs_(epochs != nullptr ? epochs : &own_epochs_) {}
  void use_epochs(store::EpochLedger& epochs) { epochs_ = &epochs; }

  enum class Verdict : std::uint8_t { Fresh, Repeated, EpochOpenedBefore };
  // Fresh, and remembered, when [first, first + count) overlaps no range accepted before in
  // `epoch`, the current epoch or one never opened here (then opened).
  [[nodiscard]] Verdict accept(std::uint64_t epoch, std::uint32_t first, std::uint32_t count);

 private:
  store::EpochLedger own_epochs_{{}};
  store::EpochLedger* epochs_;
  std::uint64_t epoch_ = 0;
  std::map<std::uint64_t, std::uint64_t> ranges_;  // first -> end
};

// With `authenticated` (a gc2 cluster of security = "active"), AES, Kerberos and GCM jobs run
// by authenticated garbling (authenticated_aes.hpp, authenticated_krb.hpp,
// authenticated_gcm.hpp); a GCM prefetch with local masks, which each server would compute
// from its own share unchecked, is refused. Every AES, Kerberos and GCM job's stream starts
// with each server's byte for its mode: a server refuses a job its peer runs in the other mode,
// so neither can lower the other's security.
class Gc2Backend final : public Backend {
 public:
  // pool_entries: the AND material kept made ahead when authenticated ([limits] and_material_entries).
  Gc2Backend(int party, const Logger& log, bool authenticated = false,
             std::uint64_t pool_entries = kAuthenticatedPoolEntries);
  ~Gc2Backend() override;
  // Garbles (server 1) or evaluates (server 2) large AES jobs on this GPU from now on: its
  // tables are the CPU garbler's byte for byte, so the other server may run either.
  void use_gpu(std::unique_ptr<cuda::GpuGarbling> gpu);
  // Compiles Kerberos circuits into `shared` (the server's, which outlives this) from now on.
  void share_krb_circuits(jobs::KrbCircuitCache& shared) { krb_circuits_ = &shared; }
  // Server 2 records every nonce epoch it computes under in the server's ledger.
  void use_epoch_ledger(store::EpochLedger& epochs) { nonce_ledger_.use_epochs(epochs); }

  const char* name() const override {
    return authenticated_aes_ ? "gc2 (authenticated garbling)" : "gc2 (half-gates garbled circuits)";
  }
  std::uint64_t pool_entries(const wire::KeyId& key, std::uint32_t blocks) const override {
    return authenticated_aes_ ? authenticated_aes_->entries(key.algorithm, blocks) : 0;
  }
  ComputeOutput compute(two_party::Channel& peer, const ComputeTask& task) override;
  bool pads_outputs() const override { return authenticated_aes_ != nullptr; }
  void preprocess(two_party::Channel&, std::uint64_t, std::uint64_t, std::uint64_t) override;
  std::string describe_state() const override;
  // security = "active": the AND material of authenticated garbling, made ahead into a pool.
  bool wants_preprocessing() const override { return authenticated_aes_ != nullptr; }
  bool admits_within_production() const override { return authenticated_aes_ != nullptr; }
  // A quarter of the pool per batch, at most 2^16 entries: a batch's memory stays tens of MB
  // (its leaky triples are five times its entries), and its bucket size (5) that of 2^16.
  std::uint64_t preprocess_batch() const override {
    return authenticated_aes_ ? std::min<std::uint64_t>(pool_entries_ / 4, 65536) : 0;
  }
  std::uint64_t pool_capacity() const override { return authenticated_aes_ ? pool_entries_ : 0; }
  void reset_pool(std::uint64_t epoch) override {
    if (and_material_) and_material_->reset(epoch);
  }
  bool keeps_left_epoch() const override { return and_material_ != nullptr; }
  bool holds_left_epoch(std::uint64_t epoch) const override {
    return and_material_ && and_material_->holds_left_epoch(epoch);
  }
  const char* pool_entry_name() const override { return "entries of AND material"; }

  // Kerberos and GCM jobs (gc2_circuit_jobs.cpp): this server's XOR shares of the results.
  // Throw PeerError when the other server fails or got another request.
  KrbOutput krb(two_party::Channel& peer, const KrbTask& task);
  // Entries of AND material a Kerberos or GCM job takes under security = "active" (0 otherwise).
  std::uint64_t circuit_pool_entries(const wire::Request& request) const override;
  std::optional<std::uint64_t> circuit_pool_entries_if_built(const wire::Request& request) const override;
  GcmPrefetched gcm_prefetch(two_party::Channel& peer, const GcmPrefetchTask& task);
  GcmOpened gcm_open(two_party::Channel& peer, const GcmOpenTask& task);

  // Kerberos garblings prepared ahead of time (prepared_circuits.hpp, prepared_jobs.cpp).
  // The byte budget ([limits] prepared_circuits_mib); 0, the default, disables them.
  void set_preparation_budget(std::size_t bytes);
  // Server 1: the shape worth preparing next, if any (the server asks in idle time).
  std::optional<PreparedShape> next_preparation() const;
  // Server 1: garbles one for `shape` and streams it to server 2, which keeps it
  // (store_prepared, on its side of the same stream). Throw PeerError when the other side
  // fails or refuses; after a failure, preparation_failed() holds the shape back.
  void prepare(two_party::Channel& peer, const PreparedShape& shape);
  void store_prepared(two_party::Channel& peer);
  void preparation_failed(const PreparedShape& shape);
  // A deleted key: its labels and prepared garblings go.
  void forget_key(const wire::KeyId& key);
  // A new version of a key (rotation): the garblings prepared for its older versions go (a
  // KDC stops using them; the keys and their labels stay while they are stored).
  void key_rotated(const wire::KeyId& key);
  const PreparedCircuits& prepared() const { return *prepared_; }

 private:
  const circuits::Program& program(wire::KeyAlgorithm algorithm, bool decrypt) const;
  struct LabelSet {
    std::uint64_t id = 0;
    std::array<std::uint8_t, 32> share_digest{};
    std::vector<gc2::Block> labels;  // server 1: zero labels; server 2: active labels
  };
  // Server 1: the label set of `key` for this share (made on first use or a new share).
  // A new set drops the key's prepared garblings of the old one.
  LabelSet garbler_labels(const wire::KeyId& key, std::span<const std::uint8_t> share);
  // The job's opening handshake: the labels of every bit of the key's material share (zero
  // labels on server 1, active ones on server 2), transferred by OT when server 2 lacks them.
  // With a request digest, the garbler sends it first and the evaluator refuses (PeerError) a
  // digest other than its own, before any label moves.
  // With an offer (Kerberos jobs), server 2's first message also offers a prepared garbling
  // (prepared_circuits.hpp): no round trip is added for it.
  struct PreparedOffer {
    // Server 2: called with the label-set id it holds (0: none) before its message leaves;
    // sets id (0: none) and holds_more.
    std::function<void(std::uint64_t held_set)> make;
    std::uint64_t id = 0;     // the garbling offered (server 1: as received)
    bool holds_more = false;  // server 2 holds, or is using, other garblings of the shape
    // Both sides, once the handshake is done: the label set the job runs under, and
    // whether server 2's labels were transferred now (its offer was then for another set).
    std::uint64_t label_set = 0;
    bool transferred = false;
  };
  gc2::Labels key_labels(two_party::Channel& peer, const wire::KeyId& key, std::span<const std::uint8_t> share,
                         const std::array<std::uint8_t, 32>* request_digest = nullptr,
                         PreparedOffer* offer = nullptr);
  // A Kerberos job's circuit over the key's secret rows, R's rows (their labels from
  // mask_labels_) and the public record: with a garbling both servers prepared for its shape,
  // or garbled now. This server's output bits.
  std::vector<std::uint8_t> krb_circuit_bits(two_party::Channel& peer, const KrbTask& task,
                                             const circuits::Program& program, const jobs::KrbCircuitKey& circuit,
                                             const jobs::KrbSecretRange& secret,
                                             std::span<const std::uint8_t> public_record);
  // AES over public blocks (blocks * 16 bytes) under the round keys whose labels are given:
  // this server's share of the output. With `first_output_labels`, also the output labels of
  // block 0 (128).
  SecretBytes aes_blocks(two_party::Channel& peer, const circuits::Program& program,
                         std::span<const gc2::Block> round_key_labels, std::span<const std::uint8_t> blocks,
                         gc2::Labels* first_output_labels = nullptr);
  GcmPrefetched prefetch_nonces(two_party::Channel& peer, const GcmPrefetchTask& task);
  // A semi-honest prefetch's garbled AES over out.nonces' blocks under the key's labels.
  GcmPrefetched garbled_prefetch(two_party::Channel& peer, const gc2::Labels& key, GcmPrefetched out,
                                 const GcmPrefetchTask& task);
  // The garbler's next `count` GCM nonces (its epoch || counter).
  std::vector<wire::GcmNonce> next_nonces(std::uint32_t count);

  // Both servers' modes agree (the job's first bytes), else Error naming both.
  void agree_on_mode(two_party::Channel& peer) const;
  // Server 2 refuses (PeerError) a request digest from server 1 other than its own.
  void agree_on_request(two_party::Channel& peer, const std::array<std::uint8_t, 32>& digest) const;
  // security = "active": a GCM job's pad, check and AND material for AuthenticatedGcm.
  AuthenticatedGcm::Inputs gcm_inputs(std::span<const std::uint8_t> key_share,
                                      const std::optional<wire::OutputPadSeed>& pad,
                                      std::span<const std::uint8_t> share_check, std::uint64_t pool_epoch,
                                      std::uint64_t pool_start) const;

  int party_;
  Logger log_;
  // security = "active": the AND material made ahead, and the jobs run from it.
  std::unique_ptr<AndMaterialStock> and_material_;
  std::unique_ptr<AuthenticatedAes> authenticated_aes_;
  std::unique_ptr<AuthenticatedKrb> authenticated_krb_;
  std::unique_ptr<AuthenticatedGcm> authenticated_gcm_;
  std::uint64_t pool_entries_ = 0;
  // AES-128 / AES-256 x encrypt / decrypt.
  circuits::Program programs_[2][2];
  circuits::Program equality_;  // 128-bit equality: the GCM tag check
  std::unique_ptr<gc2::Garbler> garbler_;  // server 1: one delta for the server's life
  // Jobs of at least cuda::gpu_garbling_min_instances() instances run here when it is free
  // (one job at a time; a second waits for nothing and runs on the CPU).
  std::unique_ptr<cuda::GpuGarbling> gpu_;
  std::mutex gpu_mutex_;
  std::unique_ptr<jobs::KrbCircuitCache> own_krb_circuits_;
  jobs::KrbCircuitCache* krb_circuits_ = nullptr;  // own_krb_circuits_, or the server's shared one
  mutable std::mutex mutex_;
  std::map<std::string, LabelSet> label_sets_;  // by wire::describe(key)
  MaskLabelStock mask_labels_;
  std::uint64_t key_transfers_ = 0;
  std::uint64_t nonce_epoch_ = 0;  // server 1
  std::uint64_t next_nonce_ = 0;
  // Server 1: a prefetch failed, maybe refused by server 2 for its epoch: the next takes another.
  bool nonce_epoch_refused_ = false;
  NonceLedger nonce_ledger_;  // server 2
  std::unique_ptr<PreparedCircuits> prepared_;
  std::uint64_t garbler_instance_ = 0;  // server 1: random per start, names its garblings' maker
};

}  // namespace mpc::two_party_engine
