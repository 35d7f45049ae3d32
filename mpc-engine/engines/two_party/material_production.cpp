// The AND material of a two-server pool: when the leader makes a batch of it (the pool's room,
// the pair's duty, client jobs running), the announcement both servers run it under, and the
// batch itself, from OT preprocessing or from the lookup-table dealer; a pool epoch restarted
// after a batch fails.
#include <sodium.h>

#include <algorithm>

#include "common/error.hpp"
#include "engines/two_party/engine_job.hpp"
#include "engines/two_party/two_party_engine.hpp"

namespace mpc::two_party_engine {
namespace {

// A pair standing by while its server is busy makes one batch of material at most this often.
constexpr auto kPacedStandbyBatches = std::chrono::seconds(5);

}  // namespace

void TwoPartyEngine::run_preprocessing(Job& job) {
  try {
    auto stream = streams_.open(job.number);
    if (dealer_)
      store_dealt_batch(*stream, job);
    else
      backend_->preprocess(*stream, job.pool_epoch, job.pool_start, job.pool_entries);
  } catch (const VerificationError& error) {
    job.status = wire::Status::VerificationFailed;
    job.error = error.what();
    job.failed_check = error.check();
    streams_.send_abort(job.number, std::string(kVerificationAbort) + error.check() + ": " + error.what());
  } catch (const std::exception& error) {
    job.status = wire::Status::PeerFailure;
    job.error = error.what();
    streams_.send_abort(job.number, error.what());
  }
  std::lock_guard lock(results_mutex_);
  preprocessed_.push_back({job.status == wire::Status::Ok, job.pool_epoch, job.pool_start, job.pool_entries, job.error,
                           job.failed_check, job.number});
  wakeup_.notify();
}

void TwoPartyEngine::new_pool_epoch(std::optional<std::uint64_t> made_until) {
  const std::uint64_t previous = pool_epoch_;
  do randombytes_buf(&pool_epoch_, sizeof pool_epoch_);
  while (pool_epoch_ == 0 || pool_epoch_ == previous || (left_epoch_ && pool_epoch_ == left_epoch_->epoch));
  // An epoch that made nothing (its first batch failed) leaves the one before it kept, as the
  // backend does (and_material_stock.hpp); any other new epoch drops it.
  if (!made_until || *made_until > 0) left_epoch_.reset();
  if (made_until && backend_->keeps_left_epoch() && next_pool_ < *made_until)
    left_epoch_ = LeftEpoch{previous, next_pool_, *made_until};
  backend_->reset_pool(pool_epoch_);
  next_pool_ = 0;
  next_produce_ = 0;
  preprocessing_in_flight_ = false;
  if (dealer_) dealer_->cancel_request();  // its batch would be numbered for the old pool
  log_.info("preprocessing pool restarted",
            {{"epoch", pool_epoch_}, {"kept", left_epoch_ ? left_epoch_->end - left_epoch_->next : 0}});
}

void TwoPartyEngine::set_pair_duty(PairDuty duty) {
  if (duty == duty_) return;
  duty_ = duty;
  wakeup_.notify();
}

PreprocessingThread& TwoPartyEngine::made_jobs_for_duty() {
  // Made ahead while all three serve, the material takes only what the server's other threads
  // leave; a serving pair's is urgent.
  return duty_ == PairDuty::Standby || duty_ == PairDuty::Paced ? *standby_jobs_ : *made_jobs_;
}

void TwoPartyEngine::anticipate(const wire::Request& request) {
  // Circuits are built for the AND material's count; their like runs again when the pair serves.
  if (!backend_->wants_preprocessing() || !std::holds_alternative<wire::KrbRequest>(request)) return;
  try {
    (void)backend_->circuit_pool_entries_if_built(request);
  } catch (const std::exception&) {
    // Readying is never the job's business: should the pair serve its like, it says why.
  }
}

void TwoPartyEngine::schedule_preprocessing() {
  if (!backend_->wants_preprocessing() || preprocessing_in_flight_) return;
  if (std::chrono::steady_clock::now() < preprocessing_paused_until_) return;
  if (duty_ == PairDuty::Waiting) return;
  const bool standing = duty_ == PairDuty::Standby || duty_ == PairDuty::Paced;
  if (duty_ == PairDuty::Paced && std::chrono::steady_clock::now() - last_standby_batch_ < kPacedStandbyBatches)
    return;
  const std::uint64_t batch = backend_->preprocess_batch();
  // A pair standing by keeps half a pool made: its first jobs' worth, at a quarter of the memory.
  const std::uint64_t capacity =
      standing ? std::max(batch, backend_->pool_capacity() / 2) : backend_->pool_capacity();
  // Entries kept from the epoch left count against the pool's memory, unless a job too large
  // for them waits for the current epoch's.
  const std::uint64_t kept =
      left_epoch_ && waiting_for_material_.empty() ? left_epoch_->end - left_epoch_->next : 0;
  if (next_produce_ + batch + kept > next_pool_ + capacity) return;
  if (standing) last_standby_batch_ = std::chrono::steady_clock::now();
  // Dealt entries cost the servers a copy (and server 1 a ChaCha20 expansion): the pool is
  // kept full even while client jobs run. The job starts when the batch comes (handle_dealer).
  if (dealer_) {
    dealer_->request_batch(batch);
    return;
  }
  // Preprocessing competes with the online phase for the same cores: while client jobs run,
  // it waits unless the pool is down to a quarter of its size.
  const std::uint64_t ahead = next_produce_ > next_pool_ ? next_produce_ - next_pool_ : 0;
  if (client_jobs_running_ > 0 && ahead >= capacity / 4) return;
  announce_preprocessing(batch, 0);
}

void TwoPartyEngine::announce_preprocessing(std::uint64_t entries, std::uint64_t dealer_batch) {
  auto job = std::make_shared<Job>();
  job->number = next_job_++;
  job->kind = wire::TwoServerJobKind::LutPreprocessing;
  job->pool_epoch = pool_epoch_;
  job->pool_start = next_produce_;
  job->pool_entries = entries;
  wire::TwoServerAnnounce announce;
  announce.job = job->number;
  announce.kind = job->kind;
  announce.pool_epoch = pool_epoch_;
  announce.pool_start = job->pool_start;
  announce.pool_entries = entries;
  announce.dealer_batch = dealer_batch;
  unsent_.push_back(wire::encode_two_server(announce));
  next_produce_ += entries;
  preprocessing_in_flight_ = true;
  if (dealer_batch != 0) {
    dealer_->expect(job->number, dealer_batch);
    dealt_jobs_->post([this, job] { run_preprocessing(*job); });
  } else {
    made_jobs_for_duty().post([this, job] { run_preprocessing(*job); });
  }
}

void TwoPartyEngine::handle_dealer() {
  dealer_->tick(std::chrono::steady_clock::now());
  const auto grant = dealer_->receive();
  // The leader asked for this batch when the pool had room for it, and a new pool epoch since
  // would have cancelled the request: it still fits.
  if (grant && leader() && !preprocessing_in_flight_) announce_preprocessing(grant->count, grant->batch);
}

// Each server stores its shares of the dealer's batch; the follower then confirms the batch id
// it stored, so a batch that never reached it (or another one) fails the job on both sides and
// the leader starts a new pool epoch, as after a failed OT preprocessing job.
void TwoPartyEngine::store_dealt_batch(two_party::Channel& peer, const Job& job) {
  // The follower gives up well within the leader's stream timeout, so the leader hears why.
  const auto wait = leader() ? std::chrono::milliseconds(0) : settings_.limits.peer_timeout / 2;
  auto shares = dealer_->take(job.number, job.pool_entries, wait);
  dealt_pool_->store_dealt(job.pool_epoch, job.pool_start, std::move(shares.entries));
  std::array<std::uint8_t, 8> stored{};
  for (std::size_t i = 0; i < stored.size(); ++i) stored[i] = static_cast<std::uint8_t>(shares.batch >> (8 * i));
  if (!leader()) {
    peer.send(stored);
    peer.flush();
    return;
  }
  std::array<std::uint8_t, 8> confirmed{};
  peer.receive(confirmed);
  if (confirmed != stored)
    throw PeerError(Component::Server, "the other server stored another dealer batch for pool entries " +
                                           std::to_string(job.pool_start) + ".." +
                                           std::to_string(job.pool_start + job.pool_entries));
}

}  // namespace mpc::two_party_engine
