// One server of the engine: the shell every protocol runs in.
//
// The node owns what does not depend on the protocol: the CurveZMQ listener for clients (and
// their data links, client_links.hpp), the links to the other servers, the encrypted share
// store and a bounded cache of open key material, client intake (decoding, the client's role,
// key administration, Status), the servers' agreement on each request before anything is
// computed with it (request_agreement.hpp), the answers, and the poll loop. The engine (engine.hpp) is handed
// the job requests and computes them with the other servers.
//
// Which requests an engine is handed, and when: the leader (party 1, or the pair's leader in
// two-party service) hands over a request once every serving server has confirmed holding the
// same copy; a follower hands its copy over at once and tells the leader, which names it in a
// batch only after that. A GCM tag, which no batch carries, is handed over by every server
// only once all of them agree. Whoever holds a request the others never confirm gives it up
// after job_wait_ms.
//
// A three-server cluster keeps serving with one server down (degraded_service): the shell
// tracks who hears whom (membership.hpp) and, while the third is down, hands jobs to a
// two-party engine between the two that remain (pair_service.hpp) instead. Every request
// live at a switch is answered PeerFailure: the client library sends it again, under a new
// id, to the servers that now serve.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/log.hpp"
#include "node/client_links.hpp"
#include "node/engine.hpp"
#include "node/job_metrics.hpp"
#include "node/key_cache.hpp"
#include "node/membership.hpp"
#include "node/pair_check_keeper.hpp"
#include "node/pair_service.hpp"
#include "node/peer_links.hpp"
#include "node/request_agreement.hpp"
#include "node/service_stall.hpp"
#include "settings/server_settings.hpp"
#include "node/metrics_endpoint.hpp"
#include "node/metrics_text.hpp"
#include "store/exclusion_file.hpp"
#include "store/share_store.hpp"
#include "transport/zmq_link.hpp"

namespace mpc::node {

using EngineFactory = std::function<std::unique_ptr<Engine>(const EngineResources&)>;

// The serving parties in one place: who serves and who leads.
struct Serving {
  std::vector<int> parties;  // 0-based, sorted
  int leader = 0;
};

class Node final : public EngineHost {
 public:
  // Loads the keys and the store, binds the sockets and builds the engine (which runs its
  // self-tests: a throw means the caller must not serve). `make_pair_engine` builds the
  // two-party engine a three-server cluster serves with while a server is down.
  Node(settings::ServerSettings settings, const Logger& log, const EngineFactory& make_engine,
       EngineFactory make_pair_engine = {});
  ~Node() override;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Serves until `stop` becomes true.
  void run(const std::atomic<bool>& stop);

  // EngineHost
  const SecretBytes* key_material(const wire::KeyId& key) override;
  const SecretBytes* key_share_check(const wire::KeyId& key) override;
  void answer(const JobKey& key, wire::Reply reply) override;
  void forget(const JobKey& key) override;
  bool take_shell_frame(PeerEnvelope& envelope) override;
  PeerLinks& peers() override { return *peers_; }
  bool try_send(int party, std::span<const std::uint8_t> frame) override { return peers_->try_send_to(party, frame); }
  bool keep_alive() override;
  std::optional<Refusal> store_generated(const wire::KeyId& key, const SecretBytes& share) override;
  void link_broke(int party) override { link_breaks_.note(party, std::chrono::steady_clock::now()); }
  void deviation_caught(int party, const std::string& check, const std::string& where) override;
  void pair_failed(int missing, const std::string& check, const std::string& where) override;

 private:
  // A request this server holds, from its arrival until it is answered.
  struct Live {
    std::string routing_id;
    CopyWords words;                // every party's word on it, this server's own included
    std::optional<ClientJob> held;  // not yet handed to the engine
    bool local = false;             // a GCM tag or reopen: answered at once, compared afterwards
    std::chrono::steady_clock::time_point arrived;
    JobKind kind = JobKind::Count;
  };

  bool leader() const { return settings_.party == serving_.leader; }
  Engine& active() { return pair_ ? *pair_->engine : *engine_; }
  const Engine& active() const { return pair_ ? *pair_->engine : *engine_; }
  // Membership (membership.cpp, cluster_mode.cpp): heartbeats, lost sessions, switches.
  void tend_membership(std::chrono::steady_clock::time_point now);
  void send_hello(std::chrono::steady_clock::time_point now);
  // Whether this server ignores `party` (the test server's "shun-missing-server"; never otherwise).
  bool shuns(int party) const;
  void switch_mode(const ModeChange& change);
  // The mode this server serves in now (a change decided inside a batch is made after it).
  ModeChange serving_mode() const;
  // Tells the service just joined of the requests this server refused or gave up since
  // `since` (node/cluster_mode.cpp says why).
  void pass_on_refusals(std::chrono::steady_clock::time_point since);
  // The engines of the two pairs this server belongs to, built at the start and kept
  // (pair_service.hpp): their duties follow who serves and who is heard (Engine::PairDuty).
  void build_pairs();
  void update_pair_duties(std::chrono::steady_clock::time_point now);
  // Exclusion (exclusion.cpp): the record read at the start, the operator's requests, what both
  // peers say, and the answer an excluded server gives jobs (nullopt: it is not excluded).
  void load_exclusion();
  // Writes the record (nullopt: nobody excluded) and follows it; false when it could not be
  // written (logged, nothing changed).
  bool record_exclusion(std::optional<store::Exclusion> exclusion);
  bool write_exclusion_file(const std::optional<store::Exclusion>& exclusion);
  wire::Reply answer_exclusion(const wire::ExclusionRequest& request, const std::string& role);
  // A client's report of a job whose answers failed its checks (wire::ExclusionAction::CheckFailed).
  wire::Reply answer_failed_check(const wire::ExclusionRequest& request, const std::string& role);
  void follow_peers_exclusion(std::chrono::steady_clock::time_point now);
  // Refuses jobs while this server is excluded or the disputes leave it out of the pair.
  std::optional<Refusal> excluded_self_refusal() const;
  // Disputes (exclusion.cpp): the party in two of them is excluded as the operator would.
  void follow_disputes(std::chrono::steady_clock::time_point now);
  // A service that serves nothing while all three servers are heard (service_stall.hpp) is left.
  void follow_stall(std::chrono::steady_clock::time_point now);
  // What the watch of a stalled service learns from the answer to a job the servers compute
  // together (a GCM tag, answered by each server alone, tells nothing of a stall), as the
  // engine gave it: a peer failure the client is told to send again (Regrouping) counts.
  void note_answer(JobKind kind, wire::Status status);
  // A readmission taken from both peers (membership.hpp): one this server missed.
  void follow_peers_readmission(std::chrono::steady_clock::time_point now);
  // Every dispute, the three-party suspension and the failed pairs are dropped: by the
  // operator's readmission (counted), by a readmission both peers took and this server missed
  // (their count, `peers_readmissions`, taken), or as both peers hold when they readmit an
  // excluded server (not counted).
  enum class Clearing { Readmission, ReadmissionOfPeers, FromPeers };
  void clear_disputes(Clearing clearing, std::uint32_t peers_readmissions = 0);
  // Keeps the disputes on disk when they changed since last written.
  void record_disputes();
  bool disputes_recorded() const;
  // The engines that run beside the serving one: the pairs standing by.
  std::vector<Engine*> standing_pairs() const;
  // The checks this server deals for the pair serving without it (pair_check_keeper.hpp,
  // cluster_mode.cpp): every key's again, a few at a time, after each return to three-party
  // service; a key's own when it is stored here.
  void tend_pair_checks(std::chrono::steady_clock::time_point now);
  // Sends both peers their deals of `keys`; false when either could not be sent one now.
  bool deal_pair_checks(std::span<const wire::KeyId> keys);
  // The checks a pair's members make for each other (pair_check_keeper.hpp): this server's tags
  // go to its partner while it serves in a pair whose third server it holds in disputes with
  // both others (missing_proven).
  void tend_mutual_checks(std::chrono::steady_clock::time_point now);
  bool missing_proven(int missing) const;
  void key_stored(const wire::KeyId& key);
  // A frame of the pair's two-party engine: to it, if this server serves in that pair.
  void take_pair_frame(int from, std::span<const std::uint8_t> inner);
  // Why key changes are refused now (a server is down), or nullopt.
  std::optional<std::string> key_change_refusal();
  // Whether the cluster may be regrouping (two-party service allowed, and a server not heard
  // lately or its link just broke, a switch due, just made, or two-party service on): a job
  // failed now is worth sending again.
  bool regrouping();
  // Whether a send to `party`, whose connection is down, should wait for it (PeerLinks).
  bool peer_alive(int party);
  // Tells the membership if `party`'s session was lost since last asked; the sessions lost so far.
  std::uint64_t note_lost_sessions(int party);
  // A peer failure while regrouping() is answered Regrouping: the client sends it again.
  wire::Status failure_status(wire::Status status);
  void handle_client_message(transport::ReceivedMessage& message);
  void handle_job(transport::ReceivedMessage& message, wire::Request request);
  void handle_admin(transport::ReceivedMessage& message, wire::Request& request);
  // What Status answers, and the same counters for Prometheus.
  wire::ServerStatus status();
  std::string metrics_text();
  // Answers a request id seen before (live or buried); false if it is new.
  bool answer_known(const transport::ReceivedMessage& message, const JobKey& key);
  void refuse(const transport::ReceivedMessage& message, const JobKey& key, JobKind kind, bool local,
              const Refusal& refusal);
  void tell(int party, const JobKey& key, const PartyWord& word);
  void tell_others_for_record(const JobKey& key, const PartyWord& word, std::chrono::steady_clock::time_point now);
  void answer_tag_now(const JobKey& key, Live& live, std::chrono::steady_clock::time_point now);
  // A peer's note on a tag this server answered: a differing copy is counted and logged once.
  void check_answered_tag(Tombstone& tombstone, const JobKey& key, int from, const PartyWord& word);
  // Hands a batch job's request to the engine once every party agrees, or gives it up (a GCM
  // tag is never held: answer_tag_now answers or refuses it on arrival).
  void settle(const JobKey& key);
  void hand_over(Live& live);
  // Answers a request that is not (or no longer) the engine's with an error and buries it.
  // The leader also tells the followers when `tell_followers`.
  void give_up(const JobKey& key, wire::Status status, const std::string& detail, bool tell_followers);
  void handle_notes(int from, const std::vector<wire::RequestNote>& notes);
  void pass_deadlines(std::chrono::steady_clock::time_point now);
  // A follower's note to the leader about a job no batch names yet, sent again
  // (request_agreement.hpp: "A follower reminds the leader").
  void remind_leader(std::chrono::steady_clock::time_point now);
  void flush_notes(std::chrono::steady_clock::time_point now);
  void send_reply(const std::string& routing_id, const wire::Reply& reply);
  void count_refusal(wire::Status status, const JobKey& key, const std::string& detail);
  std::chrono::milliseconds idle_wait() const;

  settings::ServerSettings settings_;
  const Logger& log_;
  transport::CurveKeyPair own_keys_;
  store::ShareStore store_;
  store::EpochLedger epochs_;
  KeyCache key_cache_;
  transport::Context context_;
  std::unique_ptr<transport::Listener> clients_;
  std::unique_ptr<ClientLinks> client_links_;  // rss3 with a data_endpoint: clients' data links
  std::unique_ptr<PeerLinks> peers_;
  std::unique_ptr<MetricsEndpoint> metrics_;  // with metrics_listen only
  Serving serving_;
  // rss3 only: who hears whom, and the two-party service while a server is down.
  std::optional<Membership> membership_;
  std::optional<PairCheckKeeper> pair_checks_;
  bool pair_checks_due_ = true;  // every key's deals to go out once the cluster is settled
  bool pair_checks_sweep_ = false;  // a deal of every key under way
  std::chrono::steady_clock::time_point pair_checks_retry_{};
  int mutual_missing_ = -1;  // the pair whose members' own checks this server sends or sent
  std::vector<wire::KeyId> mutual_to_send_;
  std::chrono::steady_clock::time_point mutual_retry_{};
  LinkBreaks link_breaks_;
  EngineFactory make_pair_engine_;
  std::array<std::uint64_t, 3> sessions_lost_{};
  static constexpr std::chrono::milliseconds kSessionCheckPeriod{5};
  std::chrono::steady_clock::time_point last_session_check_{};
  std::optional<ModeChange> pending_change_;  // decided inside a batch, made after it
  std::uint64_t mode_switches_ = 0;
  std::uint64_t mode_since_unix_ms_ = 0;
  std::optional<store::Exclusion> exclusion_;  // as on disk
  std::uint64_t exclusions_ = 0;               // exclusions recorded since start
  std::uint64_t disputes_ = 0;                 // checks failed here that named a peer, a pair or suspended
  std::string dispute_reason_;                 // the last of them
  ServiceStall stall_;
  std::uint8_t known_distrusts_ = 0;           // the disputes logged so far
  std::optional<store::Disputes> disputes_on_disk_;  // as last written (store/exclusion_file.hpp)
  // A disk that refused the peers' word is asked again after a pause, not at every hello.
  std::chrono::steady_clock::time_point follow_peers_not_before_{};
  std::chrono::steady_clock::time_point record_disputes_not_before_{};
  std::chrono::steady_clock::time_point mode_entered_ = std::chrono::steady_clock::now();
  // The test server's late switches only (common/fault_injection.hpp): when the change waiting
  // now was first due. Present in every build so that both builds share one layout.
  std::optional<std::chrono::steady_clock::time_point> late_switch_since_;
  // Indexed by the server each pair serves without; this server's own slot stays empty.
  std::array<std::unique_ptr<PairService>, 3> pairs_;
  PairService* pair_ = nullptr;  // the pair serving now, one of pairs_
  std::chrono::steady_clock::time_point last_busy_{};  // when a request was last held

  std::map<JobKey, Live> live_;
  RequestLedger ledger_;
  OutgoingNotes outgoing_notes_;
  std::deque<std::pair<int, std::vector<wire::RequestNote>>> notes_in_;  // heard inside an engine's batch
  // When a request not yet handed over is given up: job_wait after it, or after the first
  // note about it, came. In arrival order; entries of requests settled meanwhile are skipped.
  std::deque<std::pair<std::chrono::steady_clock::time_point, JobKey>> deadlines_;
  // When a follower tells the leader again of a job it handed over: kLeaderReminder after it
  // did last. In that order; entries of jobs answered meanwhile are skipped.
  std::deque<std::pair<std::chrono::steady_clock::time_point, JobKey>> reminders_;
  std::uint64_t jobs_served_ = 0;
  std::uint64_t request_mismatches_ = 0;
  std::uint64_t verification_failures_ = 0;
  JobMetrics job_metrics_;

  std::unique_ptr<Engine> engine_;  // last: built from, and destroyed before, everything above
};

}  // namespace mpc::node
