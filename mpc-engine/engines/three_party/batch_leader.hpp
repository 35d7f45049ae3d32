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
  void batch_done(const wire::BatchHeader& header, bool succeeded, std::uint64_t and_gates) override;
  // The next batch, of the oldest urgent job (one of at most latency_batch_blocks instances,
  // or one that waited a second) whose pool has an idle worker, else of the oldest job whose
  // pool has one; urgent jobs of its group fill it first, and bulk jobs fill a batch a small
  // job names only up to latency_batch_blocks (public for tests).
  std::optional<wire::BatchHeader> form_batch(std::map<node::JobKey, Job>& jobs, bool krb_worker_idle,
                                              bool other_worker_idle);
  // A batch that prepares a garbling ahead on the preparation worker, when the stock wants one
  // and a Kerberos worker is idle (public for tests). It runs at the lowest CPU priority, so it
  // may start while a job runs: it takes the CPU time the job leaves (a client logging in back
  // to back leaves about a third of two cores idle). With every Kerberos worker busy the
  // servers are saturated, and a garbling made then would only take their time.
  std::optional<wire::BatchHeader> form_preparation(bool krb_worker_idle, bool preparation_worker_idle);

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
};

}  // namespace mpc::three_party_engine
