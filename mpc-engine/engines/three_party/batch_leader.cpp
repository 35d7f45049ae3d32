#include "engines/three_party/batch_leader.hpp"

#include <sodium.h>

#include <algorithm>
#include <chrono>

#include "engines/three_party/batch_worker.hpp"
#include "engines/three_party/circuit_set.hpp"
#include "jobs/krb_jobs.hpp"
#include "protocol/gc2/half_gates.hpp"

#if defined(MPC_FAULT_INJECTION)
#include "common/fault_injection.hpp"
#endif

namespace mpc::three_party_engine {
namespace {

// Jobs of one family run the same kind of circuit; Kerberos jobs share one family and are
// told apart by their circuit (jobs::KrbCircuitKey).
enum class Family : std::uint8_t {
  Aes128Encrypt,
  Aes128Decrypt,
  Aes256Encrypt,
  Aes256Decrypt,
  GcmPrefetch,
  GcmLocalMasks,  // prefetches with local masks: no circuit, no worker
  GcmOpen,
  Krb,
  KeyGeneration,  // one job per batch, on a Kerberos worker: its circuit is as large
};

// Jobs of one group run the same circuit, so the leader may put them in one batch: the
// family, and for the Kerberos circuits the circuit id, data length and combine shape.
struct BatchGroup {
  Family family = Family::Aes128Encrypt;
  jobs::KrbCircuitKey krb_circuit;  // Kerberos circuits only
  bool operator==(const BatchGroup&) const = default;
};

bool is_krb_family(Family family) { return family == Family::Krb; }
// Large circuits run on the Kerberos workers, never inline or beside the AES batches.
bool on_krb_workers(Family family) { return family == Family::Krb || family == Family::KeyGeneration; }

// A bulk job (a KDC's nonce refill: thousands of blocks sized to take about 200 ms) that has
// waited this long goes ahead like a small one, so a stream of small jobs cannot starve it.
constexpr auto kBulkPatience = std::chrono::seconds(1);

BatchGroup group_of(const Job& job) {
  switch (job.kind) {
    case JobKind::GcmPrefetch: return {job.local_masks ? Family::GcmLocalMasks : Family::GcmPrefetch, {}};
    case JobKind::GcmOpen: return {Family::GcmOpen, {}};
    case JobKind::Krb: return {Family::Krb, job.krb_circuit};
    case JobKind::KeyGeneration: return {Family::KeyGeneration, {}};
    case JobKind::Compute: break;
  }
  const bool decrypt = job.request.operation == wire::Operation::EcbDecrypt;
  if (job.key.algorithm == wire::KeyAlgorithm::Aes128)
    return {decrypt ? Family::Aes128Decrypt : Family::Aes128Encrypt, {}};
  return {decrypt ? Family::Aes256Decrypt : Family::Aes256Encrypt, {}};
}

// Prefetches are bound by throughput (thousands of blocks ahead of time), opens by round
// trips (a ticket waits on them), so "auto" gives them the S-box that suits each.
wire::CircuitId gcm_circuit(Family family, const settings::ServerLimits& limits) {
  if (family == Family::GcmPrefetch)
    return limits.sbox == settings::SboxChoice::Depth4 ? wire::CircuitId::Aes256EncryptDepth4
                                                       : wire::CircuitId::Aes256EncryptAnd32;
  return limits.sbox == settings::SboxChoice::And32 ? wire::CircuitId::Aes256EncryptEqAnd32
                                                    : wire::CircuitId::Aes256EncryptEqDepth4;
}

#if defined(MPC_FAULT_INJECTION)
// "epoch-replay": every third batch that carries GCM nonces goes back to the other of two
// epochs (the first this leader drew, and one more), with its sequence and nonce counter
// restarted, so that it names batch ids and nonces it named before.
void replay_epoch(std::uint64_t& epoch, std::uint32_t& sequence, jobs::NonceCounter& nonce_counter) {
  static std::uint64_t epochs[2] = {0, 0};
  static unsigned batches = 0;
  static unsigned current = 0;
  if (epochs[0] == 0) {
    epochs[0] = epoch;
    do randombytes_buf(&epochs[1], sizeof epochs[1]);
    while (epochs[1] == 0 || epochs[1] == epochs[0]);
  }
  if (++batches % 3 != 0) return;
  current ^= 1;
  epoch = epochs[current];
  sequence = 0;
  nonce_counter.restart();
}
#endif

}  // namespace

BatchLeader::BatchLeader(const settings::ServerSettings& settings, const Logger& log)
    : settings_(settings),
      log_(log),
      stock_(prepares() ? std::size_t{settings.limits.prepared_circuits_mib} << 20 : 0) {
  new_epoch();
}

// Garblings are prepared for Kerberos batches garbled twice: the default, security = "active"
// with krb_evaluation = "garbled".
bool BatchLeader::prepares() const {
  return settings_.security == settings::Security::Active &&
         settings_.krb_evaluation == settings::KrbEvaluation::Garbled && settings_.limits.prepared_circuits_mib != 0;
}

std::uint32_t BatchLeader::next_sequence() {
  if (sequence_ == UINT32_MAX) new_epoch();
  return ++sequence_;
}

void BatchLeader::new_epoch() {
  const std::uint64_t previous = epoch_;
  // 0 means "none seen" at followers; a new epoch must differ from the one it replaces.
  do {
    randombytes_buf(&epoch_, sizeof epoch_);
  } while (epoch_ == 0 || epoch_ == previous);
  sequence_ = 0;
  nonce_counter_.restart();
  stock_.clear();  // garblings are named by (epoch, sequence): those of the old epoch are gone
}

void BatchLeader::epoch_refused(std::uint64_t epoch) {
  if (epoch != epoch_) return;
  log_.info("a follower refused the epoch: starting another", {{"epoch", epoch}});
  new_epoch();
}

void BatchLeader::take_header(int from, wire::BatchHeader header) {
  log_.warn("batch header from a follower ignored", {{"from", from + 1}, {"sequence", header.sequence}});
}

bool BatchLeader::ready(const BatchStarter&) const {
  // Every batch that could start was formed before the loop sleeps; a new job or a finished
  // batch wakes it.
  return false;
}

void BatchLeader::schedule(BatchStarter& starter) {
  for (;;) {
    BatchWorker* krb = starter.idle_worker(WorkerPool::Krb);
    BatchWorker* other = starter.idle_worker(WorkerPool::Fixed);
    auto header = form_batch(starter.jobs(), krb != nullptr, other != nullptr);
    if (!header) break;
    const auto frame = wire::encode_batch(*header);
    bool announced = true;
    for (int party = 1; party < 3 && announced; ++party) {
      if (!starter.send_to(party, frame)) {
        const std::string detail = "party " + std::to_string(party + 1) + " is unreachable";
        log_.warn("batch not started", {{"sequence", header->sequence}, {"error", detail}});
        starter.abort_batch(*header, wire::Status::PeerFailure, detail);
        announced = false;
      }
    }
    if (announced)
      starter.start_batch(*header, runs_without_worker(*header)             ? nullptr
                                   : pool_of(*header) == WorkerPool::Krb ? krb
                                                                         : other);
  }
  BatchWorker* ahead = starter.idle_worker(WorkerPool::Preparation);
  const KrbLoad krb_load = starter.pool_idle(WorkerPool::Krb)                ? KrbLoad::Idle
                           : starter.idle_worker(WorkerPool::Krb) != nullptr ? KrbLoad::Some
                                                                             : KrbLoad::Full;
  auto preparation = form_preparation(krb_load, ahead != nullptr);
  if (!preparation) return;
  const auto frame = wire::encode_batch(*preparation);
  for (int party = 1; party < 3; ++party)
    if (!starter.send_to(party, frame)) {
      starter.abort_batch(*preparation, wire::Status::PeerFailure,
                          "party " + std::to_string(party + 1) + " is unreachable");
      return;
    }
  starter.start_batch(*preparation, ahead);
}

std::optional<std::chrono::steady_clock::time_point> BatchLeader::wake_at() const {
  if (!prepares() || last_krb_activity_ == std::chrono::steady_clock::time_point{}) return std::nullopt;
  const auto at = last_krb_activity_ + kQuietBeforePreparing;
  return at > std::chrono::steady_clock::now() ? std::optional(at) : std::nullopt;
}

std::optional<wire::BatchHeader> BatchLeader::form_preparation(KrbLoad krb_load, bool preparation_worker_idle) {
  if (!prepares() || !preparation_worker_idle || krb_load == KrbLoad::Full) return std::nullopt;
  const auto now = std::chrono::steady_clock::now();
  const bool paused = krb_load == KrbLoad::Idle && now - last_krb_activity_ >= kQuietBeforePreparing;
  const auto circuit = stock_.next(now, paused ? PreparedStock::kReadyPerCircuit : 1);
  if (!circuit) return std::nullopt;
  wire::BatchHeader header;
  header.sequence = next_sequence();
  header.epoch = epoch_;
  header.circuit = circuit->id;
  header.data_bytes = circuit->data_bytes;
  header.krb_combine = circuit->combine;
  header.krb_evaluation = wire::KrbEvaluation::PrepareTwice;
  stock_.preparing(header.sequence, *circuit);
  return header;
}

void BatchLeader::batch_done(const wire::BatchHeader& header, bool succeeded, std::uint64_t and_gates) {
  const auto now = std::chrono::steady_clock::now();
  if (!wire::is_krb_circuit(header.circuit)) return;
  if (header.krb_evaluation != wire::KrbEvaluation::PrepareTwice) last_krb_activity_ = now;
  switch (header.krb_evaluation) {
    case wire::KrbEvaluation::PrepareTwice: stock_.prepared(header.sequence, succeeded, now); return;
    case wire::KrbEvaluation::PreparedTwice:
      if (!succeeded) stock_.clear();
      break;
    default: break;
  }
  if (succeeded && wire::is_garbled_twice(header.krb_evaluation))
    stock_.used({header.circuit, header.data_bytes, header.krb_combine}, gc2::garbled_bytes_of(and_gates, 1), now);
}

std::optional<wire::BatchHeader> BatchLeader::form_batch(std::map<node::JobKey, Job>& jobs, bool krb_worker_idle,
                                                         bool other_worker_idle) {
  while (!queue_.empty()) {
    auto it = jobs.find(queue_.front());
    if (it != jobs.end() && it->second.blocks_scheduled < it->second.instances) break;
    queue_.pop_front();
  }
  // A caller waits on a small job (a seal that found its nonce pool empty, a ticket's open, a
  // single block), so small jobs go ahead of bulk ones, and bulk jobs fill a batch that a small
  // job names only up to a latency batch's size: the small job does not wait behind, or inside,
  // a refill's batch of many thousand blocks. Small jobs still coalesce with each other as far
  // as a batch holds.
  const auto now = std::chrono::steady_clock::now();
  const std::uint32_t small_most = settings_.limits.latency_batch_blocks;
  auto small = [&](const Job& job) { return job.instances <= small_most; };
  auto urgent = [&](const Job& job) { return small(job) || now - job.arrived >= kBulkPatience; };
  auto pending = [&](const node::JobKey& key) -> Job* {
    auto it = jobs.find(key);
    if (it == jobs.end() || it->second.blocks_scheduled >= it->second.instances) return nullptr;
    return &it->second;
  };

  // The oldest urgent job, else the oldest job, with instances left and an idle worker in its
  // pool names the batch's group.
  const Job* first = nullptr;
  for (const bool urgent_only : {true, false}) {
    for (const node::JobKey& key : queue_) {
      const Job* job = pending(key);
      if (job == nullptr || (urgent_only && !urgent(*job))) continue;
      const Family family = group_of(*job).family;
      if (family == Family::GcmLocalMasks || (on_krb_workers(family) ? krb_worker_idle : other_worker_idle)) {
        first = job;
        break;
      }
    }
    if (first != nullptr) break;
  }
  if (first == nullptr) return std::nullopt;
  const BatchGroup group = group_of(*first);
  // A job whose circuit has a garbling ready gets a batch of its own that evaluates it: moving
  // a few labels beats sharing a garbling made while the batch runs.
  const bool prepared_ready = prepares() && is_krb_family(group.family) && stock_.holds(group.krb_circuit, now);
  const std::uint32_t most =
      prepared_ready || group.family == Family::KeyGeneration ? 1
      : is_krb_family(group.family)
          ? std::min(settings_.limits.max_batch_blocks,
                     jobs::max_krb_batch_jobs(static_cast<std::uint32_t>(first->krb_data.size())))
          : settings_.limits.max_batch_blocks;
  const std::uint32_t bulk_most = !is_krb_family(group.family) && small(*first)
                                      ? std::min(most, std::max<std::uint32_t>(small_most, 1))
                                      : most;

  wire::BatchHeader header;
  std::uint32_t total = 0;
  std::uint32_t nonces = 0;
  for (const bool urgent_pass : {true, false}) {
    const std::uint32_t limit = urgent_pass ? most : bulk_most;
    for (const node::JobKey& key : queue_) {
      if (total >= limit) break;
      Job* job = pending(key);
      if (job == nullptr || group_of(*job) != group || urgent(*job) != urgent_pass) continue;
      std::uint32_t take = std::min(job->instances - job->blocks_scheduled, limit - total);
      std::uint32_t slice_nonces = 0;
      if (job->kind == JobKind::GcmPrefetch) {  // with local masks or not
        // Whole nonces only: every party must see all instances of a nonce in one batch.
        const std::uint32_t per_nonce = 1 + job->blocks_per_nonce;
        slice_nonces = take / per_nonce;
        if (slice_nonces == 0) continue;
        take = slice_nonces * per_nonce;
      }
      header.slices.push_back({key.client, key.request, job->digest, job->blocks_scheduled, take, 0, slice_nonces});
      job->blocks_scheduled += take;
      total += take;
      nonces += slice_nonces;
    }
  }
  // Never reuse a PRF id or a nonce: a new epoch starts new id and nonce spaces. (Batches
  // of the old epoch that followers have not started yet are then dropped by them and fail
  // here by timeout; that happens once per 2^32 batches or nonces.)
  if (sequence_ == UINT32_MAX || !nonce_counter_.fits(nonces)) new_epoch();
#if defined(MPC_FAULT_INJECTION)
  if (nonces != 0 && fault::armed("epoch-replay")) replay_epoch(epoch_, sequence_, nonce_counter_);
#endif
  for (auto& slice : header.slices)
    if (slice.nonces != 0) slice.first_nonce = nonce_counter_.take(slice.nonces);
  header.epoch = epoch_;
  header.sequence = ++sequence_;
  const auto now_prepared = [&]() -> std::optional<std::uint32_t> {
    if (!prepares() || group.family != Family::Krb || total != 1) return std::nullopt;
    return stock_.take(group.krb_circuit, now);
  };
  switch (group.family) {
    case Family::GcmPrefetch:
    case Family::GcmOpen: header.circuit = gcm_circuit(group.family, settings_.limits); break;
    case Family::GcmLocalMasks: header.circuit = wire::CircuitId::GcmLocalMasks; break;
    case Family::KeyGeneration: header.circuit = wire::CircuitId::GcmKeyMaterial; break;
    case Family::Krb:
      header.circuit = group.krb_circuit.id;
      header.data_bytes = group.krb_circuit.data_bytes;
      header.krb_combine = group.krb_circuit.combine;
      header.krb_evaluation = settings_.krb_evaluation == settings::KrbEvaluation::Layered ? wire::KrbEvaluation::Layered
                              : settings_.security == settings::Security::Active ? wire::KrbEvaluation::GarbledTwice
                                                                                 : wire::KrbEvaluation::Garbled;
      if (const auto prepared = now_prepared()) {
        header.krb_evaluation = wire::KrbEvaluation::PreparedTwice;
        header.prepared = *prepared;
      }
      last_krb_activity_ = now;
      break;
    default:
      header.circuit = CircuitSet::choose(first->key.algorithm, first->request.operation == wire::Operation::EcbDecrypt,
                                          total, settings_.limits);
  }
  return header;
}

}  // namespace mpc::three_party_engine
