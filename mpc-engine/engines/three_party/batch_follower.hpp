// Party 2's and party 3's side of every batch (batch_role.hpp): they start the batches the
// leader announces, in order, after checking each header against what they hold.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "common/log.hpp"
#include "engines/three_party/batch_role.hpp"
#include "jobs/nonce_pool.hpp"
#include "settings/server_settings.hpp"
#include "store/epoch_ledger.hpp"

namespace mpc::three_party_engine {

class BatchFollower final : public BatchRole {
 public:
  // `epochs`: every epoch this server ever computed under; outlives the follower.
  BatchFollower(const settings::ServerSettings& settings, const Logger& log, store::EpochLedger& epochs);
  void job_admitted(const node::JobKey&) override {}
  void take_header(int from, wire::BatchHeader header) override;
  void schedule(BatchStarter& starter) override;
  bool ready(const BatchStarter& starter) const override;
  std::uint64_t epoch() const override { return last_epoch_seen_; }

  // Why this server must not run `header` with the jobs it holds, or nullopt: the leader
  // names a job only after this server confirmed holding the same copy, so a copy missing or
  // differing here means the leader did not wait for that (or this server lost the job).
  std::optional<std::string> copies_match(const std::map<node::JobKey, Job>& jobs, const wire::BatchHeader& header,
                                          wire::Status& status) const;

 private:
  enum class BatchId : std::uint8_t { Fresh, Replayed, EpochOpenedBefore };
  // Whether `header` names a batch id never run here: a higher sequence in the current
  // epoch, or any sequence of an epoch never opened here (then opened).
  BatchId accept_batch_id(const wire::BatchHeader& header);
  bool accept_gcm_nonces(const wire::BatchHeader& header);

  const settings::ServerSettings& settings_;
  const Logger& log_;
  store::EpochLedger& epochs_;
  std::deque<wire::BatchHeader> announced_;  // announced, not yet started
  std::uint64_t last_epoch_seen_ = 0;        // replay protection, with epochs_
  std::uint32_t last_sequence_seen_ = 0;
  jobs::NonceGuard nonce_guard_;  // GCM nonces already used
};

}  // namespace mpc::three_party_engine
