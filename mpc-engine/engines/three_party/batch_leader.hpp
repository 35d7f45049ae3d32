// Party 1's side of every batch (batch_role.hpp): it queues the jobs the servers agreed on,
// forms a batch of one circuit whenever a worker of the right pool is free, numbers it and
// its GCM nonces, announces it and starts it. Under active security with garbled Kerberos
// jobs, it also has Kerberos garblings prepared ahead on a worker of the lowest CPU priority,
// and names one in a batch of one job of its circuit (prepared_stock.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

#include "common/log.hpp"
#include "engines/three_party/batch_role.hpp"
#include "engines/three_party/prepared_stock.hpp"
#include "jobs/nonce_pool.hpp"
#include "settings/server_settings.hpp"

namespace mpc::three_party_engine {

class BatchLeader final : public BatchRole {
 public:
  BatchLeader(const settings::ServerSettings& settings, const Logger& log);
  void job_admitted(const node::JobKey& key) override { queue_.push_back(key); }
  void take_header(int from, wire::BatchHeader header) override;
  void schedule(BatchStarter& starter) override;
  bool ready(const BatchStarter& starter) const override;
  std::uint64_t epoch() const override { return epoch_; }
  void epoch_refused(std::uint64_t epoch) override;
  void batch_done(const wire::BatchHeader& header, bool succeeded, std::uint64_t and_gates) override;
  // The next batch, of the oldest urgent job (one of at most latency_batch_blocks instances,
  // or one that waited a second) whose pool has an idle worker, else of the oldest job whose
  // pool has one; urgent jobs of its group fill it first, and bulk jobs fill a batch a small
  // job names only up to latency_batch_blocks (public for tests).
  std::optional<wire::BatchHeader> form_batch(std::map<node::JobKey, Job>& jobs, bool krb_worker_idle,
                                              bool other_worker_idle);
  std::optional<std::chrono::steady_clock::time_point> wake_at() const override;

  // How many Kerberos workers run a batch when a preparation could start.
  enum class KrbLoad : std::uint8_t { Idle, Some, Full };
  // Kerberos jobs pausing this long, with every Kerberos worker idle, is a pause.
  static constexpr std::chrono::milliseconds kQuietBeforePreparing{20};

  // A batch that prepares a garbling ahead on the preparation worker, which runs it at the
  // lowest CPU priority at every server (public for tests). What the stock wants:
  // - for a circuit with no garbling ready, as soon as a Kerberos worker is free, beside a
  //   running job: the next job of that circuit would otherwise garble as it runs, and a
  //   preparation takes only the CPU time the jobs leave (a client logging in back to back
  //   leaves about a third of two cores idle);
  // - up to PreparedStock::kReadyPerCircuit, once Kerberos jobs have paused: made beside a
  //   login's jobs, a reserve would take CPU time from them wherever the servers share cores.
  // With every Kerberos worker busy, nothing: the servers are saturated.
  std::optional<wire::BatchHeader> form_preparation(KrbLoad krb_load, bool preparation_worker_idle);

 private:
  void new_epoch();
  std::uint32_t next_sequence();
  bool prepares() const;

  const settings::ServerSettings& settings_;
  const Logger& log_;
  std::deque<node::JobKey> queue_;  // jobs with instances still to schedule, oldest first
  std::uint64_t epoch_ = 0;   // this run's random epoch
  std::uint32_t sequence_ = 0;
  jobs::NonceCounter nonce_counter_;  // GCM nonces of epoch_
  PreparedStock stock_;
  std::chrono::steady_clock::time_point last_krb_activity_{};
};

}  // namespace mpc::three_party_engine
