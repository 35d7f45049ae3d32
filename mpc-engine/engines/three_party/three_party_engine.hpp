// The three-party engine: replicated shares of every key at three servers, computed with the
// protocol of Araki, Furukawa, Lindell, Nof and Ohara (CCS 2016, protocol/rss3) and, for the
// deep Kerberos circuits, garbled by server 1 for server 2 with server 3's labels
// (garbled_krb_batch.hpp).
//
// Every job runs in batches: one circuit per batch, many jobs' instances side by side,
// formed by the leader and started by the followers (batch_role.hpp). Every party builds its
// input shares from the job the shell handed it (the request all three agreed on), evaluates
// layer by layer with its neighbours, masks its output shares and answers the client itself.
//
// AES-256-GCM jobs (docs/ticket-format.md): a prefetch is a batch job whose nonces the
// leader assigns in the batch header (wire::BatchSlice); each party keeps its share of
// AES_K(N || 1) in its nonce pool and answers the keystream. A tag needs no batch: each party
// answers on its own from its pool entry and its shares of the hash key powers, then keeps the
// entry as a tagged nonce. An open is a batch job with the AES-and-compare circuit that answers
// only the tag check's verdict and the keystream; a reopen of a tagged nonce needs no batch
// either (gcm_reopen.cpp).
//
// Kerberos jobs (wire::KrbRequest, jobs/krb_jobs.hpp) are one instance each of a circuit fixed
// by operation, key size and data length; jobs with the same circuit share a batch, and the
// batch header names the length so the followers compile the same circuit.
//
// Threads: the shell's thread owns the jobs; batch workers (batch_worker.hpp) evaluate, up to
// `workers` batches of the fixed circuits, kKrbBatchesInFlight Kerberos batches and one
// Kerberos garbling prepared ahead at a time, each sending over a lane of its own and reading frames that the data plane's threads
// (data_plane.hpp) or the shell's hand it; small batches run on the shell's thread (see
// inline_evaluator_). Large batches run on the GPU where there is one, everything else on the
// SIMD CPU evaluator.
#pragma once

#include <array>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/log.hpp"
#include "engines/three_party/batch_role.hpp"
#include "engines/three_party/batch_worker.hpp"
#include "protocol/gc3/prepared_garblings.hpp"
#include "engines/three_party/circuit_set.hpp"
#include "engines/three_party/batch_frames.hpp"
#include "engines/three_party/data_plane.hpp"
#include "engines/three_party/jobs.hpp"
#include "engines/three_party/prf_keys.hpp"
#include "jobs/krb_circuit_cache.hpp"
#include "jobs/nonce_pool.hpp"
#include "jobs/request_checks.hpp"
#include "jobs/tagged_nonces.hpp"
#include "node/engine.hpp"
#include "node/wakeup.hpp"

namespace mpc::three_party_engine {

// Batches of the fixed circuits in flight with [limits] workers = 0: one per core, and at
// least two, which fill the time one spends waiting for a neighbour's message.
std::size_t default_workers();
// Kerberos batches (thousands of layers, few instances) run on workers of their own, so
// they never hold up the AES and GCM batches (every TGS needs those) on the workers above.
// Two, because each layer costs every server a few context switches whatever its width:
// with three servers on two cores, six deep batches in flight gave 2.2 protected logins/s
// against 3.7 with two, whose batches held more jobs each (tests/bench/kdc_user_bench.py).
inline constexpr std::size_t kKrbBatchesInFlight = 2;

class ThreePartyEngine final : public node::Engine, private BatchStarter {
 public:
  // Derives the PRF keys, compiles the circuits and runs the start-up self-tests (throws
  // Error(Server) if one fails: the caller must not serve), starts the batch workers.
  explicit ThreePartyEngine(const node::EngineResources& resources);
  ~ThreePartyEngine() override;

  std::optional<node::Refusal> check(const node::ClientJob& job) override;
  void admit(node::ClientJob job) override;
  bool abandon(const node::JobKey& key) override;
  bool computing(const node::JobKey& key) const override;
  void finish_running() override { collect_results(); }
  void take_peer_frame(node::PeerEnvelope envelope) override;
  void step(std::chrono::steady_clock::time_point now) override;
  std::chrono::milliseconds idle_wait() const override;
  std::vector<void*> sockets() const override { return {}; }
  std::vector<int> descriptors() const override;
  void fill_status(wire::ServerStatus& status) const override;
  Stock stock() const override;
  Activity activity() const override;
  void key_changed(const wire::KeyId&, node::KeyChange) override {}
  std::size_t share_copies() const override { return 2; }
  std::string sharing() const override { return "a replicated share (x then a): this is a three-server cluster (rss3)"; }
  std::string name() const override;

 private:
  class InlineExchange;

  // BatchStarter
  std::map<node::JobKey, Job>& jobs() override { return jobs_; }
  BatchWorker* idle_worker(WorkerPool pool) const override;
  bool pool_idle(WorkerPool pool) const override;
  void start_batch(const wire::BatchHeader& header, BatchWorker* worker) override;
  void abort_batch(const wire::BatchHeader& header, wire::Status status, const std::string& detail) override;
  bool send_to(int party, const std::vector<std::uint8_t>& frame) override;
  // abort_batch without the notices to the other two.
  void end_failed_batch(const wire::BatchHeader& header, wire::Status status, const std::string& detail);

  // Job intake (job_intake.cpp): what each kind of request needs from the key's share.
  std::optional<node::Refusal> check_compute(const wire::ComputeRequest& request);
  std::optional<node::Refusal> check_gcm_prefetch(const wire::GcmPrefetchRequest& request);
  std::optional<node::Refusal> check_gcm_tag(const node::JobKey& key, const wire::GcmTagRequest& request);
  std::optional<node::Refusal> check_gcm_open(const wire::GcmOpenRequest& request);
  std::optional<node::Refusal> check_gcm_reopen(const wire::GcmReopenRequest& request);
  std::optional<node::Refusal> check_krb(const wire::KrbRequest& request);
  std::optional<node::Refusal> check_share(const wire::KeyId& key, std::uint32_t instances);
  Job make_job(const node::ClientJob& job, const SecretBytes& share);
  jobs::RequestLimits request_limits() const {
    return {settings_.limits.max_job_blocks, settings_.limits.gcm_nonces_per_client};
  }
  // A key generation: no stored key, the new key's components from the PRF keys (prf_keys.hpp).
  Job make_generation_job(const node::ClientJob& job) const;
  void answer_tag(const node::ClientJob& job);
  void answer_reopen(const node::ClientJob& job);
  // A batch of prefetches with local masks (local_masks.cpp): computed here at once.
  void run_local_masks(const wire::BatchHeader& header);
  // Aborts `header` because a slice names a request this server lacks or one that does not
  // fit it: `batch` says which batch ("the batch", "the batch of local masks").
  void refuse_misfit(const wire::BatchHeader& header, const wire::BatchSlice& slice, const char* batch);
  // The kept state of a local-mask nonce as this server computes it for a reopen: its share
  // of M(N || 1) and its keystream shares over `blocks`, masked under the request's keys.
  static jobs::NonceShare local_nonce_share(const wire::KeyId& key, const SecretBytes& share,
                                            const wire::GcmNonce& nonce, std::size_t blocks, const TagMaskKeys& keys);
  // This server's share of the zero test of a tag this server kept the nonce of (gcm_reopen.cpp):
  // s = AES_K(N || 1) ^ GHASH_H(aad, text) ^ tag, under the request's keys and N as the id.
  static std::array<std::uint8_t, 16> tag_check_share(const SecretBytes& share, const jobs::NonceShare& kept,
                                                      const wire::GcmNonce& nonce, std::span<const std::uint8_t> aad,
                                                      std::span<const std::uint8_t> text,
                                                      const wire::GcmTagBytes& tag, const TagMaskKeys& keys);

  // Batches (three_party_engine.cpp, batch_results.cpp).
  void route_peer_message(node::PeerEnvelope envelope);
  void fail_batch_jobs(const wire::BatchHeader& header, wire::Status status, const std::string& detail);
  bool slice_input(const wire::BatchHeader& header, const BatchTask& task, const wire::BatchSlice& slice,
                   const Job& job, SliceInput& input) const;
  bool prepare_task(const wire::BatchHeader& header, BatchTask& task, std::string& error);
  void collect_results();
  void apply_result(BatchResult& result);
  void add_slice_result(Job& job, const wire::BatchHeader& header, const wire::BatchSlice& slice,
                        const BatchResult& result, std::size_t slice_index, std::size_t offset);
  void complete_job(std::map<node::JobKey, Job>::iterator job);
  void answer_error(const node::JobKey& key, wire::Status status, const std::string& detail);
  void answer_error(const node::JobKey& key, const wire::Refusal& refusal) {
    answer_error(key, refusal.status, refusal.detail);
  }
  void expire_jobs(std::chrono::steady_clock::time_point now);
  // Reads what has come on the previous party's shell lane: frames of `running` (a batch on
  // the shell's thread) into `pending`, the rest to batch_frames_.
  void read_shell_lane(const BatchTag* running, std::deque<node::PeerEnvelope>* pending);

  // Whether the batch workers also hold a GPU evaluator, for batches large enough to finish
  // sooner there: backend = "cuda", or "auto" with a CUDA device present.
  bool uses_gpu() const;

  const settings::ServerSettings& settings_;
  const Logger& log_;
  node::EngineHost& host_;
  PartyPrfKeys prf_keys_;
  CircuitSet circuits_;
  jobs::KrbCircuitCache krb_circuits_;          // fewest AND layers, for layered Kerberos batches
  jobs::KrbCircuitCache own_garbled_circuits_;  // unless the server shares one (EngineResources)
  jobs::KrbCircuitCache* krb_garbled_circuits_;  // fewest AND gates, for garbled ones
  node::Wakeup batch_finished_;
  // Kerberos garblings prepared ahead (garbled_krb_prepared.hpp); outlives the workers.
  PreparedGarblings prepared_garblings_;
  BatchFrames batch_frames_;  // outlives the workers and the data plane, which use it
  std::vector<std::unique_ptr<BatchWorker>> workers_;      // batches of the fixed AES and GCM circuits
  std::vector<std::unique_ptr<BatchWorker>> krb_workers_;  // batches of Kerberos circuits
  // Garblings prepared ahead (PrepareTwice batches) run on a worker of their own at the lowest
  // CPU priority, under active security only: they take the cores when no job needs them, so
  // they never delay a login's jobs, and they never hold a Kerberos worker a job could use.
  std::unique_ptr<BatchWorker> preparation_worker_;
  // Latency-bound batches (up to latency_batch_blocks instances) run on the shell's thread,
  // which reads their layer messages straight off the socket: a hand-off to a worker thread
  // costs a wake-up per layer, about a third of a single block's latency.
  std::unique_ptr<rss3::Evaluator> inline_evaluator_;
  rss3::ShareMatrix inline_inputs_;
  rss3::ShareMatrix inline_outputs_;
  std::unique_ptr<BatchRole> role_;
  std::unique_ptr<DataPlane> data_plane_;  // with a data_endpoint: the previous party's lanes
  // Lane 0 (data_plane.hpp) for batches on the shell's thread: to the next party, and from the
  // previous one when this server has a data_endpoint.
  std::unique_ptr<NextPartyLink> shell_lane_out_;
  std::unique_ptr<transport::DataLink> shell_lane_in_;
  StallWatch shell_lane_stalls_{settings_.limits.peer_timeout};

  std::map<node::JobKey, Job> jobs_;
  jobs::NoncePool nonce_pool_;
  jobs::TaggedNonces tagged_nonces_;
  std::chrono::steady_clock::time_point last_expiry_ = std::chrono::steady_clock::now();
  std::uint64_t batches_run_ = 0;
  std::uint64_t payload_bytes_sent_ = 0;
  std::uint64_t payload_bytes_received_ = 0;
  std::map<std::pair<std::string, int>, std::uint64_t> aborts_;  // Activity::aborts
  std::uint64_t layer_messages_sent_ = 0;
  std::uint64_t and_gates_evaluated_ = 0;
};

std::unique_ptr<node::Engine> make_three_party_engine(const node::EngineResources& resources);

}  // namespace mpc::three_party_engine
