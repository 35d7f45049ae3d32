#include "engines/three_party/batch_follower.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "engines/three_party/batch_worker.hpp"
#include "node/request_agreement.hpp"

namespace mpc::three_party_engine {

BatchFollower::BatchFollower(const settings::ServerSettings& settings, const Logger& log,
                             store::EpochLedger& epochs)
    : settings_(settings), log_(log), epochs_(epochs) {}

namespace {

// The worker for `header`. Batches start in the order announced, so a preparation waiting for
// the preparation worker would hold up every batch behind it: one announced before that worker
// has wound up the last one (it runs at the lowest priority), or to a server without one (a
// passive server following an active leader), takes a Kerberos worker instead.
BatchWorker* worker_for(const BatchStarter& starter, const wire::BatchHeader& header) {
  const WorkerPool pool = pool_of(header);
  BatchWorker* worker = starter.idle_worker(pool);
  if (worker == nullptr && pool == WorkerPool::Preparation) worker = starter.idle_worker(WorkerPool::Krb);
  return worker;
}

}  // namespace

void BatchFollower::take_header(int from, wire::BatchHeader header) {
  if (from != 0) {
    log_.warn("batch header from a follower ignored", {{"from", from + 1}, {"sequence", header.sequence}});
    return;
  }
  announced_.push_back(std::move(header));
}

bool BatchFollower::ready(const BatchStarter& starter) const {
  return !announced_.empty() &&
         (runs_without_worker(announced_.front()) || worker_for(starter, announced_.front()) != nullptr);
}

void BatchFollower::schedule(BatchStarter& starter) {
  while (!announced_.empty()) {
    const wire::BatchHeader& front = announced_.front();
    const bool local = runs_without_worker(front);
    BatchWorker* worker = local ? nullptr : worker_for(starter, front);
    if (!local && worker == nullptr) return;
    // After a leader restart only its newest epoch matters: skip what it announced before.
    const bool superseded = std::any_of(announced_.begin() + 1, announced_.end(),
                                        [&](const wire::BatchHeader& later) { return later.epoch != front.epoch; });
    if (superseded) {
      announced_.pop_front();
      continue;
    }
    wire::BatchHeader header = std::move(announced_.front());
    announced_.pop_front();
    BatchId id = BatchId::Replayed;
    try {
      id = accept_batch_id(header);
    } catch (const Error& error) {
      log_.error("batch refused", {{"sequence", header.sequence}, {"error", error.what()}});
      starter.abort_batch(header, wire::Status::Internal,
                          "party " + std::to_string(settings_.party + 1) + " cannot record the batch's epoch");
      continue;
    }
    if (id != BatchId::Fresh) {
      // Regrouping: nothing was computed, and the client's next attempt runs in the leader's
      // next epoch (the leader starts one on this refusal).
      starter.abort_batch(header, wire::Status::Regrouping,
                          "party " + std::to_string(settings_.party + 1) +
                              (id == BatchId::Replayed ? " ran this batch id before"
                                                       : " computed under this epoch before (a replay, or it "
                                                         "restarted since)") +
                              ": the leader starts another epoch");
      continue;
    }
    last_epoch_seen_ = header.epoch;
    last_sequence_seen_ = header.sequence;
    wire::Status status = wire::Status::Ok;
    if (const auto problem = copies_match(starter.jobs(), header, status)) {
      log_.warn("batch refused", {{"sequence", header.sequence}, {"error", *problem}});
      starter.abort_batch(header, status, *problem);
      continue;
    }
    if (!accept_gcm_nonces(header)) {
      starter.abort_batch(header, wire::Status::PeerFailure,
                          "party " + std::to_string(settings_.party + 1) + " refused the batch's GCM nonces");
      continue;
    }
    starter.start_batch(header, worker);
  }
}

std::optional<std::string> BatchFollower::copies_match(const std::map<node::JobKey, Job>& jobs,
                                                       const wire::BatchHeader& header, wire::Status& status) const {
  const std::string party = "party " + std::to_string(settings_.party + 1);
  for (const auto& slice : header.slices) {
    const node::JobKey key{slice.client, slice.request};
    auto it = jobs.find(key);
    if (it == jobs.end()) {
      status = wire::Status::PeerFailure;
      return party + " holds no copy of request " + node::describe_request(key) + " named by the batch";
    }
    if (it->second.digest != slice.digest) {
      status = wire::Status::RequestMismatch;
      return party + "'s copy of request " + node::describe_request(key) + " differs from the leader's";
    }
  }
  return std::nullopt;
}

BatchFollower::BatchId BatchFollower::accept_batch_id(const wire::BatchHeader& header) {
  if (header.epoch == last_epoch_seen_) {
    if (header.sequence > last_sequence_seen_) return BatchId::Fresh;
    log_.warn("replayed batch id refused", {{"sequence", header.sequence}});
    return BatchId::Replayed;
  }
  if (epochs_.open(header.epoch)) return BatchId::Fresh;
  log_.warn("epoch opened before refused", {{"epoch", header.epoch}, {"sequence", header.sequence}});
  return BatchId::EpochOpenedBefore;
}

bool BatchFollower::accept_gcm_nonces(const wire::BatchHeader& header) {
  std::vector<jobs::NonceRange> ranges;
  for (const auto& slice : header.slices)
    if (slice.nonces != 0) ranges.push_back({slice.first_nonce, slice.nonces});
  if (ranges.empty()) return true;
  if (nonce_guard_.accept(header.epoch, ranges)) return true;
  log_.warn("GCM nonces already used refused", {{"sequence", header.sequence},
                                                {"first_nonce", static_cast<std::uint64_t>(ranges.front().first)}});
  return false;
}

}  // namespace mpc::three_party_engine
