// The two-party engine of a two-server cluster (protocol gc2 or lut2): the two servers hold
// XOR shares of every key and compute with a two-party protocol (backend.hpp) instead of the
// three-party one. Clients use the same requests; each server answers its XOR share of the
// result, which only the client combines.
//
// Party 1 leads. It numbers the client requests in arrival order and announces each to
// party 2 (wire/two_server_messages.hpp); both run the announced jobs in that order, job n on
// worker n mod kWorkers, so the two sides' workers always wait on the same jobs and can never
// deadlock on each other. The shell hands the leader a request only once both servers hold
// the same copy (node/request_agreement.hpp); the follower runs a job only with the copy the
// shell handed it (it waits job_wait for it, then abandons the job), so neither server
// computes anything the client did not ask both for.
//
// Threads: the shell's thread owns the job queues; workers run the
// protocol through their job's stream (job_streams.hpp) and hand the result back. Kerberos
// garblings prepared ahead of time (prepared_circuits.hpp) are made and kept on a thread of
// their own at a lower priority, on streams of their own behind the client jobs' frames:
// the leader starts one whenever no client job is running, the follower keeps what arrives.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/log.hpp"
#include "engines/two_party/backend.hpp"
#include "engines/two_party/dealer_link.hpp"
#include "engines/two_party/gc2_backend.hpp"
#include "engines/two_party/job_streams.hpp"
#include "engines/two_party/lut2_backend.hpp"
#include "jobs/nonce_pool.hpp"
#include "jobs/request_checks.hpp"
#include "node/engine.hpp"
#include "node/wakeup.hpp"
#include "settings/server_settings.hpp"
#include "wire/two_server_messages.hpp"

namespace mpc::two_party_engine {

inline constexpr std::size_t kWorkers = 2;

// The key behind the masks of a reopen's answers (local_reopen.cpp, pair_key.hpp).
SecretBytes derive_reopen_key(const settings::ServerSettings& settings, const transport::CurveKeyPair& own);

class TwoPartyEngine final : public node::Engine {
 public:
  // Checks the store holds two-server shares, builds the back end and starts the workers.
  explicit TwoPartyEngine(const node::EngineResources& resources);
  ~TwoPartyEngine() override;

  std::optional<node::Refusal> check(const node::ClientJob& job) override;
  void admit(node::ClientJob job) override;
  bool abandon(const node::JobKey& key) override;
  void take_peer_frame(node::PeerEnvelope envelope) override;
  void step(std::chrono::steady_clock::time_point now) override;
  std::chrono::milliseconds idle_wait() const override;
  std::vector<void*> sockets() const override;
  std::vector<int> descriptors() const override { return {wakeup_.descriptor()}; }
  void fill_status(wire::ServerStatus&) const override {}
  Stock stock() const override;
  void key_changed(const wire::KeyId& key, node::KeyChange change) override;
  void set_pair_duty(PairDuty duty) override;
  void anticipate(const wire::Request& request) override;
  std::size_t share_copies() const override { return 1; }
  std::string sharing() const override;
  std::string name() const override;

  struct Job;
  struct Worker;

 private:
  bool leader() const { return settings_.party == 0; }
  // Refusals of Kerberos, GCM prefetch and GCM open requests: jobs of the garbled-circuit engine
  // (circuits_), whatever the cluster's protocol. A GCM tag is local (GHASH is linear).
  std::optional<node::Refusal> circuit_job_refusal(const wire::Request& request) const;
  jobs::RequestLimits request_limits() const {
    return {settings_.limits.max_job_blocks, settings_.limits.gcm_nonces_per_client};
  }
  std::optional<node::Refusal> check_gcm_tag(const node::ClientJob& job, const wire::GcmTagRequest& request);
  void answer_gcm_tag(const node::ClientJob& job, const wire::GcmTagRequest& request);
  // Nonces with local masks (local_reopen.cpp): this server's components of a key's K, and the
  // reopen of such a nonce, answered from the shares alone.
  SecretBytes mask_components_of(const wire::KeyId& key);
  std::optional<node::Refusal> check_local_reopen(const wire::GcmReopenRequest& request);
  void answer_local_reopen(const node::ClientJob& job, const wire::GcmReopenRequest& request);
  // Takes an agreed request: the follower waits for its announcement, the leader numbers,
  // announces and queues it.
  void admit_job(std::shared_ptr<Job> job);
  // Leader: the jobs held back while their circuits are built, admitted once built.
  void admit_awaiting_circuits(std::chrono::steady_clock::time_point now);
  // Leader: whether a job of `entries` fits what is made or being made, with one batch more.
  bool within_production(std::uint64_t entries) const;
  // Leader: numbers, announces and queues an admitted job that takes `entries`.
  void start_job(std::shared_ptr<Job> job, std::uint64_t entries);
  // Leader: starts the jobs waiting for their AND material, in arrival order, as far as it is
  // made or being made; answers busy those that waited too long.
  void start_waiting_for_material(std::chrono::steady_clock::time_point now);
  // The AND material or lookup-table entries a job takes from the pool.
  std::uint64_t job_pool_entries(const Job& job) const;
  // The refusal of an active job under a key stored without the checks of its shares.
  node::Refusal unchecked_key(const wire::KeyId& key);
  // The refusal of a job that needs more pool entries than the pool holds.
  node::Refusal too_large(std::uint64_t entries) const;
  // security = "active": a Kerberos or GCM job the cluster cannot serve so (no pads, no share
  // check, local masks, more AND material than the pool holds), with the reason.
  std::optional<node::Refusal> active_circuit_job_refusal(const wire::Request& request);
  // AND material made by OT runs on made_jobs_, or on standby_jobs_ while the engine's pair
  // stands by.
  PreprocessingThread& made_jobs_for_duty();
  void run_compute_job(Job& job);  // worker
  // A job that failed on this side: its status and error, and an Abort for the other server.
  void fail(Job& job, wire::Status status, const std::string& error, const std::string& check = {});
  // Tells the host that `check` failed in `where`: the other server deviated, unless the check
  // is one the third server of a cluster can fail as well (a key share's check, which it dealt).
  void caught_deviation(const std::string& check, const std::string& where);
  void run_circuit_job(Job& job);  // worker
  void answer_circuit_job(Job& job);
  void answer_error(const node::JobKey& key, wire::Status status, const std::string& detail);
  void answer_error(const node::JobKey& key, const wire::Refusal& refusal) {
    answer_error(key, refusal.status, refusal.detail);
  }
  void handle_peer_frame(std::vector<std::uint8_t> frame);
  void start_announced();
  void queue_job(std::shared_ptr<Job> job);
  void send_outgoing();
  void collect_results();
  void expire(std::chrono::steady_clock::time_point now);
  void worker_loop(Worker& worker);
  void run_preprocessing(Job& job);
  void schedule_preprocessing();  // leader
  // Leader: numbers the pool afresh under a new epoch. made_until: the entries of the epoch
  // left below it were made (a batch from there failed), and jobs still take those not handed
  // out, where the backend keeps them (and_material_stock.hpp).
  void new_pool_epoch(std::optional<std::uint64_t> made_until = std::nullopt);
  bool fits_left_epoch(std::uint64_t entries) const;  // leader
  // lut2 with [lut] preprocessing = "dealer" (dealer_link.hpp).
  void handle_dealer();                                                            // shell's thread
  void announce_preprocessing(std::uint64_t entries, std::uint64_t dealer_batch);  // leader
  void store_dealt_batch(two_party::Channel& peer, const Job& job);                // dealt_jobs_
  // Kerberos garblings prepared ahead of time (prepared_circuits.hpp).
  void schedule_preparation();                                       // leader, shell's thread
  void run_preparation(std::uint64_t job, const PreparedShape& shape);  // leader, preparations_
  void keep_preparation(std::uint64_t job);                             // follower, preparations_

  const settings::ServerSettings& settings_;
  const Logger& log_;
  node::EngineHost& host_;
  // A key the two servers share and no client knows: the masks of a local reopen's answers.
  SecretBytes reopen_key_;
  std::unique_ptr<Backend> backend_;
  // Kerberos and GCM jobs: backend_ itself in a gc2 cluster (one garbler, one delta, one
  // set of key labels), a garbled-circuit engine of its own (own_circuits_) in a lut2 one.
  Gc2Backend* circuits_ = nullptr;
  std::unique_ptr<Gc2Backend> own_circuits_;
  std::unique_ptr<jobs::NoncePool> nonce_pool_;  // shares of AES_K(N || 1) of prefetched GCM nonces
  std::unique_ptr<DealerLink> dealer_;  // [lut] preprocessing = "dealer" only
  Lut2Backend* dealt_pool_ = nullptr;   // backend_, where the dealer's batches go
  node::Wakeup wakeup_;
  JobStreams streams_;
  std::deque<std::vector<std::uint8_t>> unsent_;  // announcements, and frames the socket refused
  std::chrono::steady_clock::time_point last_send_progress_ = std::chrono::steady_clock::now();

  std::uint64_t next_job_ = 0;     // leader: the next job number
  std::uint64_t next_pool_ = 0;     // leader: the next lookup-table pool entry a job gets
  std::uint64_t next_produce_ = 0;  // leader: the next entry a preprocessing job fills
  bool preprocessing_in_flight_ = false;
  // After a failed batch the leader waits before the next, so that servers that disagree
  // (another protocol or security, a peer that deviates) do not fail batch after batch at once.
  std::chrono::steady_clock::time_point preprocessing_paused_until_{};
  std::uint64_t client_jobs_running_ = 0;  // leader: announced client jobs not yet answered
  PairDuty duty_ = PairDuty::Serving;       // a two-server cluster's engine always serves
  std::chrono::steady_clock::time_point last_standby_batch_{};
  std::uint64_t pool_epoch_ = 0;    // lut2: the leader's current pool epoch (follower: the last seen)
  // Leader: made entries [next, end) of the epoch left last, handed out before the current
  // epoch's to jobs that fit in them.
  struct LeftEpoch {
    std::uint64_t epoch = 0, next = 0, end = 0;
  };
  std::optional<LeftEpoch> left_epoch_;
  // Follower: client requests waiting for their announcement.
  std::map<node::JobKey, std::shared_ptr<Job>> unannounced_;
  std::deque<std::shared_ptr<Job>> awaiting_circuits_;  // leader: admit_awaiting_circuits
  struct WaitingJob {
    std::shared_ptr<Job> job;
    std::uint64_t entries = 0;
  };
  std::deque<WaitingJob> waiting_for_material_;  // leader: start_waiting_for_material
  // Follower: announcements in order, waiting for their request.
  std::deque<std::pair<wire::TwoServerAnnounce, std::chrono::steady_clock::time_point>> announced_;

  std::vector<std::unique_ptr<Worker>> workers_;
  std::mutex results_mutex_;
  std::vector<std::shared_ptr<Job>> results_;
  struct Preprocessed {
    bool ok = false;
    std::uint64_t epoch = 0;
    std::uint64_t start = 0;
    std::uint64_t entries = 0;
    std::string error;
    std::string failed_check;  // a failed check of active security; empty: none failed
    std::uint64_t job = 0;
  };
  std::vector<Preprocessed> preprocessed_;
  std::uint64_t jobs_failed_ = 0;
  std::chrono::steady_clock::time_point last_expiry_ = std::chrono::steady_clock::now();
  std::uint64_t next_preparation_job_ = 0;  // leader: kPreparationJobBit | a counter
  bool preparation_in_flight_ = false;      // leader: one preparation at a time
  bool preparation_finished_ = false;       // set by preparations_ (results_mutex_)
  // Where garblings are prepared (leader) and kept (follower). Destroyed before anything its
  // jobs use.
  std::unique_ptr<PreprocessingThread> preparations_;
  // Where preprocessing jobs run: the dealt batches' ([lut] preprocessing = "dealer",
  // dealer_link.hpp), or those made by OT between the servers. Last, so they stop before
  // anything their jobs use is destroyed.
  std::unique_ptr<PreprocessingThread> dealt_jobs_;
  std::unique_ptr<PreprocessingThread> made_jobs_;
  std::unique_ptr<PreprocessingThread> standby_jobs_;  // the lowest priority, for a pair standing by
};

}  // namespace mpc::two_party_engine

namespace mpc::two_party_engine {
std::unique_ptr<node::Engine> make_two_party_engine(const node::EngineResources& resources);
}  // namespace mpc::two_party_engine
