// Party 1's side of every batch (batch_role.hpp): it queues the jobs the servers agreed on,
// forms a batch of one circuit whenever a worker of the right pool is free, numbers it and
// its GCM nonces, announces it and starts it.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "common/log.hpp"
#include "engines/three_party/batch_role.hpp"
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

  // The next batch, of the oldest urgent job (one of at most latency_batch_blocks instances,
  // or one that waited a second) whose pool has an idle worker, else of the oldest job whose
  // pool has one; urgent jobs of its group fill it first, and bulk jobs fill a batch a small
  // job names only up to latency_batch_blocks (public for tests).
  std::optional<wire::BatchHeader> form_batch(std::map<node::JobKey, Job>& jobs, bool krb_worker_idle,
                                              bool other_worker_idle);

 private:
  void new_epoch();

  const settings::ServerSettings& settings_;
  const Logger& log_;
  std::deque<node::JobKey> queue_;  // jobs with instances still to schedule, oldest first
  std::uint64_t epoch_ = 0;   // this run's random epoch
  std::uint32_t sequence_ = 0;
  jobs::NonceCounter nonce_counter_;  // GCM nonces of epoch_
};

}  // namespace mpc::three_party_engine
