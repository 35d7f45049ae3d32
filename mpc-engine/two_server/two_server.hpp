// One server of a two-server cluster (protocol gc2 or lut2): the two servers hold XOR shares
// of every key and compute with a two-party protocol (backend.hpp) instead of the three-party
// one. Clients use the same requests; each server answers its XOR share of the result, which
// only the client combines.
//
// Party 1 leads. It numbers the client requests in arrival order and announces each to
// party 2 (wire/two_server_messages.hpp); both run the announced jobs in that order, job n on
// worker n mod kWorkers, so the two sides' workers always wait on the same jobs and can never
// deadlock on each other. A follower runs a job only with the client's own copy of the
// request (it waits job_wait for it, then abandons the job), so neither server computes
// anything the client did not ask both for.
//
// Threads: the main thread owns the sockets, the store and the job queues; workers run the
// protocol through their job's stream (job_streams.hpp) and hand the result back. Kerberos
// garblings prepared ahead of time (prepared_circuits.hpp) are made and kept on a thread of
// their own at a lower priority, on streams of their own behind the client jobs' frames:
// the leader starts one whenever no client job is running, the follower keeps what arrives.
#pragma once

#include <atomic>
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
#include "server/nonce_pool.hpp"
#include "server/peer_links.hpp"
#include "server/wakeup.hpp"
#include "settings/server_settings.hpp"
#include "store/share_store.hpp"
#include "transport/zmq_link.hpp"
#include "two_server/backend.hpp"
#include "two_server/dealer_link.hpp"
#include "two_server/gc2_backend.hpp"
#include "two_server/job_streams.hpp"
#include "two_server/lut2_backend.hpp"
#include "wire/two_server_messages.hpp"

namespace mpc::two_server {

inline constexpr std::size_t kWorkers = 2;

class TwoServer {
 public:
  TwoServer(settings::ServerSettings settings, const Logger& log);
  ~TwoServer();
  void run(const std::atomic<bool>& stop);

  struct Job;
  struct Worker;

 private:
  void handle_client_message(transport::ReceivedMessage& message);
  void handle_compute(transport::ReceivedMessage& message, wire::ComputeRequest& request);
  // Kerberos, GCM prefetch and GCM open requests: jobs of the garbled-circuit engine
  // (circuits_), whatever the cluster's protocol. A GCM tag is local (GHASH is linear).
  void handle_circuit_job(transport::ReceivedMessage& message, wire::Request request);
  std::optional<std::string> circuit_job_refusal(const wire::Request& request) const;
  void handle_gcm_tag(transport::ReceivedMessage& message, const wire::GcmTagRequest& request);
  std::shared_ptr<Job> new_job(const transport::ReceivedMessage& message);
  // Refuses a request; a follower remembers the refusal so the leader's announcement of the
  // same request is abandoned at once.
  void refuse(const std::shared_ptr<Job>& job, const wire::RequestId& id, wire::Status status,
              const std::string& detail);
  // Takes a checked request: the follower waits for its announcement, the leader numbers,
  // announces and queues it.
  void admit(std::shared_ptr<Job> job);
  void run_compute_job(Job& job);  // worker
  // A job that failed on this side: its status and error, and an Abort for the other server.
  void fail(Job& job, wire::Status status, const std::string& error);
  void run_circuit_job(Job& job);  // worker
  void reply_circuit_job(Job& job);
  void handle_admin(transport::ReceivedMessage& message, wire::Request& request);
  void handle_peer_frame(std::vector<std::uint8_t> frame);
  void start_announced();
  void queue_job(std::shared_ptr<Job> job);
  void send_outgoing();
  void collect_results();
  void expire(std::chrono::steady_clock::time_point now);
  void reply(const std::string& routing_id, wire::Reply reply);
  void reply_error(const std::string& routing_id, const wire::RequestId& id, wire::Status status,
                   const std::string& detail);
  const SecretBytes* key_material(const wire::KeyId& key);
  void worker_loop(Worker& worker);
  void run_preprocessing(Job& job);
  void schedule_preprocessing();  // leader
  void new_pool_epoch();          // leader
  // lut2 with [lut] preprocessing = "dealer" (dealer_link.hpp).
  void handle_dealer();                                                            // main thread
  void announce_preprocessing(std::uint64_t entries, std::uint64_t dealer_batch);  // leader
  void store_dealt_batch(two_party::Channel& peer, const Job& job);                // dealt_jobs_
  // Kerberos garblings prepared ahead of time (prepared_circuits.hpp).
  void schedule_preparation();                                       // leader, main thread
  void run_preparation(std::uint64_t job, const PreparedShape& shape);  // leader, preparations_
  void keep_preparation(std::uint64_t job);                             // follower, preparations_

  settings::ServerSettings settings_;
  Logger log_;
  transport::CurveKeyPair own_keys_;
  store::ShareStore store_;
  std::unique_ptr<Backend> backend_;
  // Kerberos and GCM jobs: backend_ itself in a gc2 cluster (one garbler, one delta, one
  // set of key labels), a garbled-circuit engine of its own (own_circuits_) in a lut2 one.
  Gc2Backend* circuits_ = nullptr;
  std::unique_ptr<Gc2Backend> own_circuits_;
  std::unique_ptr<server::NoncePool> nonce_pool_;  // shares of AES_K(N || 1) of prefetched GCM nonces
  transport::Context context_;
  std::unique_ptr<transport::Listener> clients_;
  std::unique_ptr<server::PeerLinks> peers_;
  std::unique_ptr<DealerLink> dealer_;  // [lut] preprocessing = "dealer" only
  Lut2Backend* dealt_pool_ = nullptr;   // backend_, where the dealer's batches go
  server::Wakeup wakeup_;
  JobStreams streams_;
  std::deque<std::vector<std::uint8_t>> unsent_;  // announcements, and frames the socket refused
  std::chrono::steady_clock::time_point last_send_progress_ = std::chrono::steady_clock::now();

  std::map<std::string, SecretBytes> material_cache_;  // by wire::describe(key)
  std::uint64_t next_job_ = 0;     // leader: the next job number
  std::uint64_t next_pool_ = 0;     // leader: the next lookup-table pool entry a job gets
  std::uint64_t next_produce_ = 0;  // leader: the next entry a preprocessing job fills
  bool preprocessing_in_flight_ = false;
  std::uint64_t client_jobs_running_ = 0;  // leader: announced client jobs not yet answered
  std::uint64_t pool_epoch_ = 0;    // lut2: the leader's current pool epoch (follower: the last seen)
  // Follower: client requests waiting for their announcement, by client key and request id.
  std::map<std::pair<wire::ClientKey, wire::RequestId>, std::shared_ptr<Job>> unannounced_;
  // Follower: announcements in order, waiting for their request.
  std::deque<std::pair<wire::TwoServerAnnounce, std::chrono::steady_clock::time_point>> announced_;

  std::vector<std::unique_ptr<Worker>> workers_;
  std::mutex results_mutex_;
  std::vector<std::shared_ptr<Job>> results_;
  struct Preprocessed {
    bool ok = false;
    std::uint64_t epoch = 0;
    std::uint64_t entries = 0;
    std::string error;
  };
  std::vector<Preprocessed> preprocessed_;
  std::uint64_t jobs_served_ = 0;
  std::uint64_t jobs_failed_ = 0;
  std::uint64_t next_preparation_job_ = 0;  // leader: kPreparationJobBit | a counter
  bool preparation_in_flight_ = false;      // leader: one preparation at a time
  bool preparation_finished_ = false;       // set by preparations_ (results_mutex_)
  // Where garblings are prepared (leader) and kept (follower). Destroyed before anything its
  // jobs use.
  std::unique_ptr<PreprocessingThread> preparations_;
  // [lut] preprocessing = "dealer": where the dealt batches' jobs run (dealer_link.hpp). Last,
  // so it stops before anything its jobs use is destroyed.
  std::unique_ptr<PreprocessingThread> dealt_jobs_;
};

}  // namespace mpc::two_server
