// One party of the three-party engine.
//
// Party 1 leads: it groups the pending requests of all clients into batches (one
// circuit per batch, big jobs split, small ones coalesced, at most max_batch_blocks
// instances) and announces each batch to the other two; a new batch is formed the
// moment a batch worker is free, with no waiting window. Every party then runs the
// same batch: it builds its input shares from the requests the client sent it
// directly, evaluates layer by layer with its neighbours, masks its output shares
// and answers each client itself.
//
// Threads: the main thread owns the sockets, the store and the jobs; batch workers
// (batch_worker.hpp) evaluate, up to kBatchesInFlight batches of the fixed circuits and
// kKrbBatchesInFlight Kerberos batches at a time.
//
// AES-256-GCM jobs (docs/ticket-format.md): a prefetch is a batch job whose nonces the
// leader assigns in the batch header (wire::BatchSlice); each party keeps its share of
// AES_K(N || 1) in its nonce pool (nonce_pool.hpp) and answers the keystream. A tag needs
// no batch: each party answers on its own from its pool entry and its shares of the hash
// key powers. An open is a batch job with the AES-and-compare circuit that answers only
// the tag check's verdict and the keystream.
//
// Kerberos jobs (wire::KrbRequest, krb_jobs.hpp) are one instance each of a circuit fixed by
// operation, key size and data length; jobs with the same circuit share a batch, and the
// batch header names the length so the followers compile the same circuit (cached in
// krb_circuits_). Their circuits are hundreds to thousands of AND layers deep, so their
// batches always run on a worker: the main thread keeps answering and collecting meanwhile.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "common/log.hpp"
#include "server/batch_worker.hpp"
#include "server/circuit_set.hpp"
#include "server/early_messages.hpp"
#include "server/jobs.hpp"
#include "server/krb_circuit_cache.hpp"
#include "server/nonce_pool.hpp"
#include "server/peer_links.hpp"
#include "server/prf_keys.hpp"
#include "server/request_agreement.hpp"
#include "server/wakeup.hpp"
#include "settings/server_settings.hpp"
#include "store/share_store.hpp"
#include "transport/zmq_link.hpp"

namespace mpc::server {

// Two batches in flight fill the time one spends waiting for a neighbour's message;
// more only add memory. Every party must run at least as many as the leader forms.
// Small batches run on the main thread instead (see inline_evaluator_).
inline constexpr std::size_t kBatchesInFlight = 2;
// Kerberos batches (thousands of layers, few instances) run on workers of their own, so
// they never hold up the AES and GCM batches (every TGS needs those) on the workers above.
// Two, because each layer costs every server a few context switches whatever its width:
// with three servers on two cores, six deep batches in flight gave 2.2 protected logins/s
// against 3.7 with two, whose batches held more jobs each (tests/bench/kdc_user_bench.py).
inline constexpr std::size_t kKrbBatchesInFlight = 2;

class Server {
 public:
  // Loads keys and the store, compiles the circuits and runs the start-up self-tests
  // (throws Error(Server) if one fails: the caller must not serve); binds the sockets.
  Server(settings::ServerSettings settings, const Logger& log);
  ~Server();
  // Serves until `stop` becomes true.
  void run(const std::atomic<bool>& stop);

 private:
  void handle_client_message(transport::ReceivedMessage& message);
  // Each job handler gets the digest of the request frame (wire::request_digest).
  void handle_compute(transport::ReceivedMessage& message, wire::ComputeRequest& request,
                      const wire::RequestDigest& digest);
  void handle_gcm_prefetch(transport::ReceivedMessage& message, const wire::GcmPrefetchRequest& request,
                           const wire::RequestDigest& digest);
  void handle_gcm_tag(transport::ReceivedMessage& message, wire::GcmTagRequest& request,
                      const wire::RequestDigest& digest);
  void handle_gcm_open(transport::ReceivedMessage& message, const wire::GcmOpenRequest& request,
                       const wire::RequestDigest& digest);
  void handle_krb(transport::ReceivedMessage& message, wire::KrbRequest& request, const wire::RequestDigest& digest);
  // Answers a request id this server has seen before (a live job or a tombstone); false if new.
  bool answer_known_request(const transport::ReceivedMessage& message, const JobKey& key);
  // Checks the limits, loads the key share, lets `prepare` take from it what the job needs
  // and queues the job (or answers the refusal); then tells the others what it holds.
  void admit_job(transport::ReceivedMessage& message, const wire::RequestId& id, Job job,
                 const wire::RequestDigest& digest, const std::function<void(Job&, const SecretBytes&)>& prepare);
  // Answers a job request with an error and tells the other parties it was refused.
  void refuse_job(transport::ReceivedMessage& message, const wire::RequestId& id, wire::Status status,
                  const std::string& detail);
  // Request agreement (request_agreement.hpp).
  void handle_notes(int from, const std::vector<wire::RequestNote>& notes);
  // Leader: schedules the job once every party holds its copy, or gives it up.
  void settle_job(const JobKey& key);
  // Leader: answers the request with `status` wherever it is held, and remembers it.
  void give_up(const JobKey& key, wire::Status status, const std::string& detail);
  // Follower: the leader gave the request up.
  void drop_job(const JobKey& key, const PartyWord& word);
  void settle_tag(const JobKey& key);
  void answer_tag(const JobKey& key);
  void pass_agreement_deadlines();
  void flush_notes();
  void count_refusal(wire::Status status, const JobKey& key, const std::string& detail);
  // Answers a job whose instances are all evaluated and forgets it.
  void complete_job(std::map<JobKey, Job>::iterator job);
  void add_slice_result(Job& job, const wire::BatchHeader& header, const wire::BatchSlice& slice,
                        const BatchResult& result, std::size_t slice_index, std::size_t offset);
  void reply(const std::string& routing_id, wire::Reply reply);
  void reply_error(const std::string& routing_id, const wire::RequestId& id, wire::Status status,
                   const std::string& detail);
  class InlineExchange;
  void drain_client_requests();
  void drain_peer_messages();
  // A peer message that is not for the batch the caller waits on: to the worker running
  // its batch, kept until its batch starts, or (a header) queued.
  void route_peer_message(PeerEnvelope envelope);
  // An idle worker of the pool that runs batches of Kerberos circuits (`krb`) or of the one
  // that runs all others; nullptr if none.
  BatchWorker* idle_worker(bool krb);
  std::chrono::milliseconds idle_wait();
  // The next batch of the oldest queued job whose pool has an idle worker.
  std::optional<wire::BatchHeader> form_batch(bool krb_worker_idle, bool other_worker_idle);
  void lead_batch(wire::BatchHeader header);
  void start_announced_batches();
  // Follower: whether it holds, for every slice, a copy with the digest the leader put in the
  // header; else why not.
  std::optional<std::string> copies_match(const wire::BatchHeader& header, wire::Status& status) const;
  void start_batch(const wire::BatchHeader& header, BatchWorker& worker);
  void collect_results();
  void apply_result(BatchResult& result);
  void abort_batch(const wire::BatchHeader& header, wire::Status status, const std::string& detail);
  void fail_batch_jobs(const wire::BatchHeader& header, wire::Status status, const std::string& detail);
  void expire_jobs();
  bool accept_batch_nonce(const wire::BatchHeader& header);
  // The share material of a stored key, or nullptr if there is none. Opening a record costs
  // an LMDB read and a secretbox over up to 33 KB, and a login asks for three tags, so the
  // material of the most recently used keys stays open in memory (SecretBytes, wiped when
  // dropped; deleting a key drops it). That exposes nothing new: a server's material is in
  // its memory for every job anyway, and one server's shares are uniform on their own.
  const SecretBytes* key_material(const wire::KeyId& key);
  void forget_key_material(const wire::KeyId& key);
  bool accept_gcm_nonces(const wire::BatchHeader& header);
  void new_epoch();
  // The inputs of one slice of `header` for the job it names, or false if the job cannot
  // run in that slice.
  bool slice_input(const wire::BatchHeader& header, const BatchTask& task, const wire::BatchSlice& slice,
                   const Job& job, SliceInput& input) const;
  // The program (for a Kerberos batch: where the worker finds it) and input layout of a
  // batch's circuit; false, with `error` saying why, if there is none.
  bool prepare_task(const wire::BatchHeader& header, BatchTask& task, std::string& error);

  // An evaluator of the configured back end: the GPU one for backend = "cuda", or for
  // "auto" when a CUDA device is present; the SIMD CPU one otherwise.
  std::unique_ptr<rss3::Evaluator> make_evaluator() const;

  settings::ServerSettings settings_;
  const Logger& log_;
  transport::CurveKeyPair own_keys_;
  PartyPrfKeys prf_keys_;
  store::ShareStore store_;
  CircuitSet circuits_;
  KrbCircuitCache krb_circuits_;          // fewest AND layers, for layered Kerberos batches
  KrbCircuitCache krb_garbled_circuits_{  // fewest AND gates, for garbled ones
      KrbCircuitCache::kDefaultBudgetOps,
      [](const KrbCircuitKey& key) { return build_krb_circuit(key, circuits::CircuitCost::FewestAnds); }};
  transport::Context context_;
  std::unique_ptr<transport::Listener> clients_;
  std::unique_ptr<PeerLinks> peers_;
  Wakeup batch_finished_;
  std::vector<std::unique_ptr<BatchWorker>> workers_;      // batches of the fixed AES and GCM circuits
  std::vector<std::unique_ptr<BatchWorker>> krb_workers_;  // batches of Kerberos circuits
  // Latency-bound batches (up to latency_batch_blocks instances) run on the main thread,
  // which reads their layer messages straight off the socket: a hand-off to a worker
  // thread costs a wake-up per layer, about a third of a single block's latency.
  std::unique_ptr<rss3::Evaluator> inline_evaluator_;
  rss3::ShareMatrix inline_inputs_;
  rss3::ShareMatrix inline_outputs_;

  std::vector<std::pair<wire::KeyId, SecretBytes>> open_material_;  // most recently used first
  std::map<JobKey, Job> jobs_;
  std::deque<JobKey> queue_;                     // leader: jobs with blocks still to schedule
  std::deque<wire::BatchHeader> announced_;      // follower: announced, not yet started
  // GCM tags waiting for the others' notes: a tag needs no batch, so each party answers its
  // own once all three hold the same request.
  struct PendingTag {
    std::string routing_id;
    wire::GcmTagRequest request;
    CopyWords words;
  };
  std::map<JobKey, PendingTag> pending_tags_;
  RequestLedger ledger_;
  OutgoingNotes outgoing_notes_;
  std::deque<std::pair<int, std::vector<wire::RequestNote>>> notes_in_;  // heard, not yet handled
  // When a request not yet agreed is given up (job_wait after it, or the first note about it,
  // came), in arrival order; entries of requests settled meanwhile are skipped.
  std::deque<std::pair<std::chrono::steady_clock::time_point, JobKey>> agreement_deadlines_;
  EarlyMessages early_messages_;                 // layer/abort messages ahead of their batch
  std::uint64_t epoch_ = 0;                      // leader: this run's random epoch
  std::uint32_t sequence_ = 0;                   // leader: last sequence used
  std::uint64_t last_epoch_seen_ = 0;            // follower: replay protection
  std::uint32_t last_sequence_seen_ = 0;
  NonceCounter nonce_counter_;                   // leader: GCM nonces of epoch_
  NonceGuard nonce_guard_;                       // follower: GCM nonces already used
  NoncePool nonce_pool_;
  std::uint64_t batches_run_ = 0;
  std::uint64_t jobs_served_ = 0;
  std::uint64_t payload_bytes_sent_ = 0;
  std::uint64_t layer_messages_sent_ = 0;
  std::uint64_t and_gates_evaluated_ = 0;
  std::uint64_t request_mismatches_ = 0;
};

}  // namespace mpc::server
