// When a two-server server prepares Kerberos garblings ahead of time (prepared_circuits.hpp):
// the leader starts one preparation at a time, only while no client job runs, on a stream of
// its own (a number with kPreparationJobBit set, background priority); the follower keeps
// what such a stream brings. Both run on preparations_, at a lower CPU priority.
#include <sys/resource.h>
#include <unistd.h>

#include "common/error.hpp"
#include "engines/two_party/two_party_engine.hpp"
#include "engines/two_party/engine_job.hpp"

namespace mpc::two_party_engine {
namespace {

// Preparing garblings ahead is background work: its thread yields the CPU to client jobs.
// (Linux: setpriority on a thread id changes that thread alone.)
void lower_this_thread_priority() {
  thread_local bool lowered = false;
  if (lowered) return;
  lowered = true;
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
}

}  // namespace

void TwoPartyEngine::schedule_preparation() {
  if (preparation_in_flight_ || client_jobs_running_ > 0) return;
  auto shape = circuits_->next_preparation();
  if (!shape) return;
  const std::uint64_t job = next_preparation_job_++;
  preparation_in_flight_ = true;
  preparations_->post([this, job, shape = std::move(*shape)] { run_preparation(job, shape); });
}

void TwoPartyEngine::run_preparation(std::uint64_t job, const PreparedShape& shape) {
  lower_this_thread_priority();
  try {
    auto stream = streams_.open(job, StreamPriority::Background);
    circuits_->prepare(*stream, shape);
    log_.debug("garbling prepared", {{"job", job}, {"shape", describe(shape)}});
  } catch (const std::exception& error) {
    circuits_->preparation_failed(shape);
    streams_.send_abort(job, error.what());
    log_.info("garbling not prepared", {{"shape", describe(shape)}, {"error", error.what()}});
  }
  {
    std::lock_guard lock(results_mutex_);
    preparation_finished_ = true;
  }
  wakeup_.notify();
}

void TwoPartyEngine::keep_preparation(std::uint64_t job) {
  lower_this_thread_priority();
  try {
    auto stream = streams_.open(job, StreamPriority::Background);
    circuits_->store_prepared(*stream);
  } catch (const std::exception& error) {
    streams_.send_abort(job, error.what());
    log_.info("prepared garbling refused", {{"job", job}, {"error", error.what()}});
  }
}

}  // namespace mpc::two_party_engine
