#include "engines/two_party/two_party_engine.hpp"

#include <sodium.h>

#include <algorithm>

#include "common/error.hpp"
#include "common/thread_name.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "engines/two_party/engine_job.hpp"
#include "jobs/batch_inputs.hpp"
#include "jobs/request_checks.hpp"
#include "node/key_admin.hpp"

namespace mpc::two_party_engine {
namespace {

constexpr auto kUnannouncedExpiry = std::chrono::seconds(30);
constexpr auto kPreprocessingRetry = std::chrono::seconds(1);

wire::ClientKey client_key(const transport::PublicKey& key) {
  wire::ClientKey out{};
  std::copy(key.begin(), key.end(), out.begin());
  return out;
}

}  // namespace

TwoPartyEngine::TwoPartyEngine(const node::EngineResources& resources)
    : settings_(resources.settings),
      log_(resources.log),
      host_(resources.host),
      reopen_key_(derive_reopen_key(settings_, resources.own_keys)),
      backend_(make_backend(settings_, log_)),
      streams_([this] { wakeup_.notify(); }, settings_.limits.peer_timeout, kUnannouncedExpiry) {
  circuits_ = dynamic_cast<Gc2Backend*>(backend_.get());
  if (circuits_ == nullptr) {
    own_circuits_ = std::make_unique<Gc2Backend>(settings_.party, log_);
    circuits_ = own_circuits_.get();
  }
  if (resources.garbled_krb_circuits != nullptr) circuits_->share_krb_circuits(*resources.garbled_krb_circuits);
  circuits_->use_epoch_ledger(resources.epochs);
  circuits_->set_preparation_budget(static_cast<std::size_t>(settings_.limits.prepared_circuits_mib) << 20);
  if (settings_.backend == settings::EvaluatorBackend::Cuda ||
      (settings_.backend == settings::EvaluatorBackend::Auto && cuda::cuda_device_available()))
    circuits_->use_gpu(std::make_unique<cuda::GpuGarbling>(0));
  preparations_ = std::make_unique<PreprocessingThread>();
  randombytes_buf(&next_preparation_job_, sizeof next_preparation_job_);
  next_preparation_job_ = (next_preparation_job_ >> 2) | kPreparationJobBit;  // room to count up
  nonce_pool_ = std::make_unique<jobs::NoncePool>(settings_.limits.gcm_nonces_per_client,
                                                  settings_.limits.gcm_nonce_ttl);
  if (settings_.protocol == settings::Protocol::Lut2 &&
      settings_.lut.preprocessing == settings::LutPreprocessing::Dealer) {
    dealt_pool_ = dynamic_cast<Lut2Backend*>(backend_.get());
    if (dealt_pool_ == nullptr)
      throw Error(Component::Server, "[lut] preprocessing = \"dealer\" needs the lut2 back end");
    dealer_ = std::make_unique<DealerLink>(resources.context, settings_, resources.own_keys, log_);
    dealt_jobs_ = std::make_unique<PreprocessingThread>();
  } else if (backend_->wants_preprocessing()) {
    // Preprocessing made between the servers runs beside the client jobs, never behind them: a
    // job waiting on its worker for entries would otherwise hold up the batch that makes them.
    made_jobs_ = std::make_unique<PreprocessingThread>();
    // A pair standing by makes its material where nothing else wants the cores.
    standby_jobs_ = std::make_unique<PreprocessingThread>(PreprocessingThread::Priority::Background);
  }
  randombytes_buf(&next_job_, sizeof next_job_);
  next_job_ >>= 1;  // room to count up without wrapping
  if (leader() && backend_->wants_preprocessing()) new_pool_epoch();
  // The follower holds no pool now: the leader must not hand out material made with it before.
  if (!leader() && backend_->wants_preprocessing()) unsent_.push_back(wire::encode_two_server(wire::TwoServerStarted{}));
  for (std::size_t i = 0; i < kWorkers; ++i) {
    auto worker = std::make_unique<Worker>();
    Worker* raw = worker.get();
    worker->thread = std::thread([this, raw] { worker_loop(*raw); });
    workers_.push_back(std::move(worker));
  }
}

TwoPartyEngine::~TwoPartyEngine() {
  streams_.shut_down();
  for (auto& worker : workers_) {
    {
      std::lock_guard lock(worker->mutex);
      worker->stopping = true;
    }
    worker->ready.notify_all();
  }
  for (auto& worker : workers_) worker->thread.join();
  log_.info("two-party engine stopping", {{"failed", jobs_failed_}, {"circuits", circuits_->describe_state()}});
}

std::unique_ptr<node::Engine> make_two_party_engine(const node::EngineResources& resources) {
  return std::make_unique<TwoPartyEngine>(resources);
}

std::string TwoPartyEngine::name() const {
  return std::string(settings::protocol_name(settings_.protocol)) + " (" + backend_->name() + ")";
}

std::string TwoPartyEngine::sharing() const {
  return std::string("one XOR share of the key material: this is a two-server cluster (") +
         settings::protocol_name(settings_.protocol) + ")";
}

std::vector<void*> TwoPartyEngine::sockets() const {
  if (dealer_) return {dealer_->socket()};
  return {};
}

std::chrono::milliseconds TwoPartyEngine::idle_wait() const {
  const bool backlog = !unsent_.empty() || streams_.has_outgoing();
  if (backlog) return std::chrono::milliseconds(1);
  // Jobs held back for their circuits or their AND material are admitted once they are there:
  // looked at often.
  return awaiting_circuits_.empty() && waiting_for_material_.empty() ? std::chrono::milliseconds(50)
                                                                      : std::chrono::milliseconds(5);
}

void TwoPartyEngine::key_changed(const wire::KeyId& key, node::KeyChange change) {
  if (change == node::KeyChange::Deleted) circuits_->forget_key(key);
  if (change == node::KeyChange::Stored) circuits_->key_rotated(key);
}

void TwoPartyEngine::take_peer_frame(node::PeerEnvelope envelope) { handle_peer_frame(std::move(envelope.data)); }

void TwoPartyEngine::step(std::chrono::steady_clock::time_point now) {
  wakeup_.clear();
  if (unsent_.empty() && !streams_.has_outgoing()) last_send_progress_ = now;
  if (dealer_) handle_dealer();
  if (!leader()) start_announced();
  if (leader()) admit_awaiting_circuits(now);
  collect_results();
  if (leader()) start_waiting_for_material(now);
  if (leader()) schedule_preprocessing();
  if (leader()) schedule_preparation();
  // A dealt batch takes milliseconds: ask for the next one as soon as the last is stored,
  // not at the next wake-up.
  if (dealer_ && leader()) schedule_preprocessing();
  send_outgoing();
  if (now - last_expiry_ > std::chrono::seconds(1)) {
    expire(now);
    last_expiry_ = now;
  }
}

void TwoPartyEngine::answer_error(const node::JobKey& key, wire::Status status, const std::string& detail) {
  host_.answer(key, node::error_reply(key.request, status, detail));
}

node::Engine::Stock TwoPartyEngine::stock() const {
  Stock stock{nonce_pool_->size(), 0, 0, std::nullopt};
  // Jobs may take entries still being made: then nothing is ahead. Entries kept from the
  // epoch left serve jobs first and count against the pool, so they are ahead too.
  if (leader() && backend_->wants_preprocessing())
    stock.lut_entries_ahead = (next_produce_ > next_pool_ ? next_produce_ - next_pool_ : 0) +
                              (left_epoch_ ? left_epoch_->end - left_epoch_->next : 0);
  return stock;
}

std::optional<node::Refusal> TwoPartyEngine::check(const node::ClientJob& job) {
  if (std::holds_alternative<wire::GenerateKeyRequest>(job.request))
    return node::Refusal{wire::Status::BadRequest,
                         "keys are generated by three servers serving together (protocol rss3); two servers import "
                         "a key instead"};
  if (const auto* tag = std::get_if<wire::GcmTagRequest>(&job.request)) return check_gcm_tag(job, *tag);
  // Two servers keep no tagged nonces: only a nonce with local masks reopens here, from the
  // shares alone (local_reopen.cpp); the client opens any other in full.
  if (const auto* reopen = std::get_if<wire::GcmReopenRequest>(&job.request)) {
    if (wire::is_local_mask_nonce(reopen->nonce)) return check_local_reopen(*reopen);
    return node::Refusal{wire::Status::UnknownNonce, "two servers keep no tagged nonces for reopening: open it in full"};
  }
  if (const auto* compute = std::get_if<wire::ComputeRequest>(&job.request)) {
    if (auto refused = jobs::compute_refusal(*compute, request_limits())) return refused;
    // Outputs padded for the client need its pad; without one they would reach both servers.
    if (backend_->pads_outputs() && !compute->output_pad)
      return node::Refusal{wire::Status::BadRequest,
                           "this cluster (security = \"active\") answers AES jobs only under the client's output "
                           "pads, which the request lacks: a client library that predates them"};
    if (leader()) {
      const std::uint64_t entries = backend_->pool_entries(compute->key, compute->blocks);
      if (entries > backend_->pool_capacity() && backend_->wants_preprocessing()) return too_large(entries);
    }
    if (host_.key_material(compute->key) == nullptr) return jobs::unknown_key(compute->key);
    // Each server is held to the share the client dealt it by the check dealt with it.
    if (backend_->pads_outputs() && host_.key_share_check(compute->key) == nullptr) return unchecked_key(compute->key);
    return std::nullopt;
  }
  if (auto refused = circuit_job_refusal(job.request)) return refused;
  if (backend_->pads_outputs()) {
    if (auto refused = active_circuit_job_refusal(job.request)) return refused;
  }
  const wire::KeyId& key = wire::request_key(job.request);
  if (host_.key_material(key) == nullptr) return jobs::unknown_key(key);
  return std::nullopt;
}

std::optional<node::Refusal> TwoPartyEngine::active_circuit_job_refusal(const wire::Request& request) {
  const auto* prefetch = std::get_if<wire::GcmPrefetchRequest>(&request);
  const auto* open = std::get_if<wire::GcmOpenRequest>(&request);
  if (prefetch != nullptr && prefetch->local_masks)
    return node::Refusal{wire::Status::BadRequest,
                         std::string("GCM nonces with local masks have no actively secure two-party form (each server "
                                     "would compute its masks from its own share, unchecked): ") +
                             (host_.paired_share(prefetch->key)
                                  ? "two servers of security = \"active\" serving while the third is down serve "
                                    "AES_K nonces (the KDC's router takes those meanwhile)"
                                  : "this cluster (security = \"active\") serves AES_K nonces; give the KDC's "
                                    "router gcm_masks = aes")};
  if ((prefetch != nullptr && !prefetch->output_pad) || (open != nullptr && !open->output_pad))
    return node::Refusal{wire::Status::BadRequest,
                         "this cluster (security = \"active\") answers GCM jobs only under the client's output pads, "
                         "which the request lacks: a client library that predates them"};
  const wire::KeyId* key = prefetch != nullptr ? &prefetch->key : open != nullptr ? &open->key : nullptr;
  if (const auto* krb = std::get_if<wire::KrbRequest>(&request)) key = &krb->key;
  if (key == nullptr) return std::nullopt;
  if (host_.key_material(*key) == nullptr) return jobs::unknown_key(*key);
  if (host_.key_share_check(*key) == nullptr) return unchecked_key(*key);
  // A shape seen for the first time has its circuit built in the background (seconds for some),
  // never on this thread: both servers start the build here, and the leader holds the job back
  // until it is built (admit_job).
  const std::optional<std::uint64_t> entries = backend_->circuit_pool_entries_if_built(request);
  if (entries && leader() && *entries > backend_->pool_capacity()) return too_large(*entries);
  return std::nullopt;
}

node::Refusal TwoPartyEngine::too_large(std::uint64_t entries) const {
  return node::Refusal{wire::Status::TooLarge, "the job needs " + std::to_string(entries) + " " +
                                                   backend_->pool_entry_name() + "; the pool holds " +
                                                   std::to_string(backend_->pool_capacity())};
}

node::Refusal TwoPartyEngine::unchecked_key(const wire::KeyId& key) {
  if (host_.paired_share(key))
    return node::Refusal{wire::Status::BadRequest,
                         wire::describe(key) + " has no checks of its halves for the pair serving now (the server "
                                               "it serves without deals them while all three serve, and had not "
                                               "yet): it is served again once three servers serve"};
  return node::Refusal{wire::Status::BadRequest,
                       wire::describe(key) + " is stored without the checks of its shares (imported by an older "
                                             "client, or converted from a three-server store): import it again, under "
                                             "a new kvno, to serve it with security = \"active\""};
}

std::uint64_t TwoPartyEngine::job_pool_entries(const Job& job) const {
  return job.circuit ? backend_->circuit_pool_entries(*job.circuit)
                     : backend_->pool_entries(job.request.key, job.request.blocks);
}

void TwoPartyEngine::admit(node::ClientJob client_job) {
  if (const auto* tag = std::get_if<wire::GcmTagRequest>(&client_job.request)) {
    answer_gcm_tag(client_job, *tag);
    return;
  }
  if (const auto* reopen = std::get_if<wire::GcmReopenRequest>(&client_job.request)) {
    answer_local_reopen(client_job, *reopen);
    return;
  }
  auto job = std::make_shared<Job>();
  job->key = client_job.key;
  job->client = client_key(client_job.key.client);
  job->digest = client_job.digest;
  if (auto* compute = std::get_if<wire::ComputeRequest>(&client_job.request)) {
    job->request = std::move(*compute);
  } else {
    job->request.id = client_job.key.request;
    job->request.key = std::visit(
        [](const auto& body) -> wire::KeyId {
          if constexpr (requires { body.key; }) return body.key;
          else return {};
        },
        client_job.request);
    job->request.blocks = 0;
    job->circuit = std::move(client_job.request);
  }
  admit_job(std::move(job));
}

void TwoPartyEngine::admit_job(std::shared_ptr<Job> job) {
  const node::JobKey key = job->key;
  const SecretBytes* share = host_.key_material(job->request.key);
  if (share == nullptr) {
    answer_error(key, jobs::unknown_key(job->request.key));
    return;
  }
  job->key_share = *share;
  if (const SecretBytes* check = host_.key_share_check(job->request.key)) job->share_check = *check;
  if (const auto* prefetch = job->circuit ? std::get_if<wire::GcmPrefetchRequest>(&*job->circuit) : nullptr;
      prefetch != nullptr && prefetch->local_masks) {
    job->mask_components = mask_components_of(job->request.key);
    if (job->mask_components.size() == 0) {
      answer_error(key, jobs::unknown_key(job->request.key));
      return;
    }
  }
  if (!leader()) {
    unannounced_.emplace(key, std::move(job));
    return;
  }
  const std::optional<std::uint64_t> built = job->circuit ? backend_->circuit_pool_entries_if_built(*job->circuit)
                                                           : std::optional(job_pool_entries(*job));
  if (!built) {
    awaiting_circuits_.push_back(std::move(job));
    return;
  }
  const std::uint64_t entries = *built;
  if (entries > backend_->pool_capacity() && backend_->wants_preprocessing()) {
    const node::Refusal refusal = too_large(entries);
    answer_error(key, refusal.status, refusal.detail);
    return;
  }
  // A job whose entries are not made or being made (with one batch more) waits here, in
  // arrival order, until production has come so far: a range handed out further ahead would
  // wait on its worker and be given up, and a busy answer would let smaller jobs asked again
  // meanwhile take every batch before it (a login's largest job would never be served).
  if (entries > 0 && backend_->admits_within_production() &&
      (!waiting_for_material_.empty() || !within_production(entries))) {
    schedule_preprocessing();
    waiting_for_material_.push_back({std::move(job), entries});
    return;
  }
  start_job(std::move(job), entries);
}

bool TwoPartyEngine::within_production(std::uint64_t entries) const {
  return fits_left_epoch(entries) || next_pool_ + entries <= next_produce_ + backend_->preprocess_batch();
}

bool TwoPartyEngine::fits_left_epoch(std::uint64_t entries) const {
  return entries > 0 && left_epoch_ && left_epoch_->end - left_epoch_->next >= entries;
}

void TwoPartyEngine::start_job(std::shared_ptr<Job> job, std::uint64_t entries) {
  job->number = next_job_++;
  if (fits_left_epoch(entries)) {
    job->pool_epoch = left_epoch_->epoch;
    job->pool_start = left_epoch_->next;
    left_epoch_->next += entries;
    log_.info("job takes AND material kept from the pool epoch left",
              {{"job", job->number}, {"entries", entries}, {"left", left_epoch_->end - left_epoch_->next}});
    if (left_epoch_->next == left_epoch_->end) left_epoch_.reset();
  } else {
    job->pool_epoch = pool_epoch_;
    job->pool_start = next_pool_;
    next_pool_ += entries;
  }
  ++client_jobs_running_;
  wire::TwoServerAnnounce announce;
  announce.job = job->number;
  announce.client = job->client;
  announce.request = job->key.request;
  announce.pool_epoch = job->pool_epoch;
  announce.pool_start = job->pool_start;
  announce.pool_entries = entries;
  unsent_.push_back(wire::encode_two_server(announce));
  queue_job(std::move(job));
}

void TwoPartyEngine::start_waiting_for_material(std::chrono::steady_clock::time_point now) {
  while (!waiting_for_material_.empty()) {
    auto& front = waiting_for_material_.front();
    // As long as a job waits on its worker for entries still being made: below the clients'
    // default timeout, so that a client hears busy rather than nothing.
    if (now - front.job->arrived > kAuthenticatedPoolWait) {
      answer_error(front.job->key, wire::Status::Busy,
                   "the job needs " + std::to_string(front.entries) + " " + backend_->pool_entry_name() +
                       ", not made in time: ask again shortly");
      waiting_for_material_.pop_front();
      continue;
    }
    if (!within_production(front.entries)) {
      schedule_preprocessing();
      return;
    }
    auto waiting = std::move(front);
    waiting_for_material_.pop_front();
    start_job(std::move(waiting.job), waiting.entries);
  }
}

bool TwoPartyEngine::abandon(const node::JobKey& key) {
  const auto awaiting = std::find_if(awaiting_circuits_.begin(), awaiting_circuits_.end(),
                                     [&](const auto& job) { return job->key == key; });
  if (awaiting != awaiting_circuits_.end()) {
    awaiting_circuits_.erase(awaiting);
    return true;
  }
  const auto waiting = std::find_if(waiting_for_material_.begin(), waiting_for_material_.end(),
                                    [&](const auto& held) { return held.job->key == key; });
  if (waiting != waiting_for_material_.end()) {
    waiting_for_material_.erase(waiting);
    return true;
  }
  return unannounced_.erase(key) != 0;
}

void TwoPartyEngine::admit_awaiting_circuits(std::chrono::steady_clock::time_point now) {
  std::deque<std::shared_ptr<Job>> waiting;
  waiting.swap(awaiting_circuits_);
  for (auto& job : waiting) {
    // Within the time the follower waits for the job's announcement, with room to spare.
    if (now - job->arrived > kUnannouncedExpiry / 2) {
      answer_error(job->key, wire::Status::Busy, "the circuit of this job's shape took too long to build");
      continue;
    }
    admit_job(std::move(job));
  }
}

void TwoPartyEngine::handle_peer_frame(std::vector<std::uint8_t> frame) {
  wire::TwoServerMessage message;
  try {
    message = wire::decode_two_server(frame);
  } catch (const FormatError& error) {
    log_.warn("malformed peer frame", {{"error", error.what()}});
    return;
  }
  if (auto* data = std::get_if<wire::TwoServerData>(&message)) {
    const std::uint64_t job = data->job;
    // The first frame of a preparation the leader started: the follower keeps what it brings.
    if (streams_.deliver(job, std::move(data->bytes)) && !leader() && (job & kPreparationJobBit) != 0)
      preparations_->post([this, job] { keep_preparation(job); });
  } else if (auto* abort = std::get_if<wire::TwoServerAbort>(&message)) {
    streams_.peer_aborted(abort->job, abort->reason);
  } else if (std::holds_alternative<wire::TwoServerStarted>(message)) {
    if (leader() && backend_->wants_preprocessing()) {
      log_.info("the other server started again: the pool starts afresh");
      new_pool_epoch();
    }
  } else if (auto* announce = std::get_if<wire::TwoServerAnnounce>(&message)) {
    if (leader()) {
      log_.warn("announcement from the follower ignored", {{"job", announce->job}});
      return;
    }
    announced_.emplace_back(*announce, std::chrono::steady_clock::now());
  }
}

void TwoPartyEngine::start_announced() {
  const auto now = std::chrono::steady_clock::now();
  while (!announced_.empty()) {
    const auto& [announce, when] = announced_.front();
    if (backend_->wants_preprocessing() && announce.pool_epoch != pool_epoch_ &&
        !backend_->holds_left_epoch(announce.pool_epoch)) {
      // The leader started afresh (or lost track of this server's pool): so does the pool.
      pool_epoch_ = announce.pool_epoch;
      backend_->reset_pool(pool_epoch_);
    }
    if (announce.kind == wire::TwoServerJobKind::LutPreprocessing) {
      if (!backend_->wants_preprocessing()) {
        streams_.send_abort(announce.job, "this server's protocol has no preprocessing");
      } else if ((announce.dealer_batch != 0) != (dealer_ != nullptr)) {
        streams_.send_abort(announce.job, dealer_ ? "server 2 has [lut] preprocessing = \"dealer\", server 1 not"
                                                  : "server 1 has [lut] preprocessing = \"dealer\", server 2 not");
      } else {
        auto job = std::make_shared<Job>();
        job->number = announce.job;
        job->kind = announce.kind;
        job->pool_epoch = announce.pool_epoch;
        job->pool_start = announce.pool_start;
        job->pool_entries = announce.pool_entries;
        if (dealer_) {
          dealer_->expect(job->number, announce.dealer_batch);
          dealt_jobs_->post([this, job] { run_preprocessing(*job); });
        } else {
          made_jobs_for_duty().post([this, job] { run_preprocessing(*job); });
        }
      }
      announced_.pop_front();
      continue;
    }
    node::JobKey key;
    std::copy(announce.client.begin(), announce.client.end(), key.client.begin());
    key.request = announce.request;
    auto it = unannounced_.find(key);
    if (it == unannounced_.end()) {
      if (now - when < settings_.limits.job_wait) return;
      streams_.send_abort(announce.job, "the follower never received the client's request");
      log_.warn("announced job without its request abandoned", {{"job", announce.job}});
      announced_.pop_front();
      continue;
    }
    auto job = std::move(it->second);
    unannounced_.erase(it);
    if (const std::uint64_t own = job_pool_entries(*job); own != announce.pool_entries) {
      const std::string why = "the servers disagree on the job's pool entries (server 1 announced " +
                              std::to_string(announce.pool_entries) + ", server 2 expects " + std::to_string(own) +
                              "): both servers must say the same protocol and security";
      streams_.send_abort(announce.job, why);
      answer_error(job->key, wire::Status::PeerFailure, why);
      announced_.pop_front();
      continue;
    }
    job->number = announce.job;
    job->pool_epoch = announce.pool_epoch;
    job->pool_start = announce.pool_start;
    announced_.pop_front();
    queue_job(std::move(job));
  }
}

void TwoPartyEngine::queue_job(std::shared_ptr<Job> job) {
  Worker& worker = *workers_[job->number % workers_.size()];
  {
    std::lock_guard lock(worker.mutex);
    worker.queue.push_back(std::move(job));
  }
  worker.ready.notify_one();
}

void TwoPartyEngine::worker_loop(Worker& worker) {
  name_this_thread("gc2 worker");
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(worker.mutex);
      worker.ready.wait(lock, [&] { return worker.stopping || !worker.queue.empty(); });
      if (worker.stopping) return;
      job = std::move(worker.queue.front());
      worker.queue.pop_front();
    }
    if (job->circuit)
      run_circuit_job(*job);
    else
      run_compute_job(*job);
    job->key_share.clear();
    job->share_check.clear();
    {
      std::lock_guard lock(results_mutex_);
      results_.push_back(std::move(job));
    }
    wakeup_.notify();
  }
}

void TwoPartyEngine::run_compute_job(Job& job) {
  std::vector<std::uint8_t> input(static_cast<std::size_t>(job.request.blocks) * 16);
  jobs::public_blocks(job.request, 0, job.request.blocks, input);
  ComputeTask task;
  task.job = job.number;
  task.key = job.request.key;
  task.decrypt = job.request.operation == wire::Operation::EcbDecrypt;
  task.key_share = job.key_share.span();
  task.input = input;
  task.blocks = job.request.blocks;
  task.pool_epoch = job.pool_epoch;
  task.pool_start = job.pool_start;
  task.output_pad = job.request.output_pad;
  task.share_check = job.share_check.span();
  try {
    auto stream = streams_.open(job.number);
    ComputeOutput output = backend_->compute(*stream, task);
    job.result = std::move(output.bytes);
    job.padded = std::move(output.padded);
  } catch (const VerificationError& error) {
    fail(job, wire::Status::VerificationFailed, error.what(), error.check());
  } catch (const PeerError& error) {
    fail(job, wire::Status::PeerFailure, error.what());
  } catch (const BackendBusy& error) {
    fail(job, wire::Status::Busy, error.what());
  } catch (const std::exception& error) {
    fail(job, wire::Status::Internal, error.what());
  }
}

void TwoPartyEngine::fail(Job& job, wire::Status status, const std::string& error, const std::string& check) {
  job.status = status;
  job.error = error;
  job.failed_check = check;
  // The other server learns which check failed here: one it can pin on this server's deviation
  // or not (job_streams.hpp).
  streams_.send_abort(job.number, status == wire::Status::VerificationFailed && !error.starts_with(kVerificationAbort)
                                      ? std::string(kVerificationAbort) + (check.empty() ? "unnamed" : check) + ": " + error
                                      : error);
}

void TwoPartyEngine::caught_deviation(const std::string& check, const std::string& where) {
  // A key share's check fails for the dealer of its checks as well as for the peer.
  if (check == kShareCheck) return host_.unattributed_check_failed(check, where);
  host_.deviation_caught(settings_.peers.front().party, check.empty() ? "unnamed" : check, where);
}

void TwoPartyEngine::collect_results() {
  std::vector<std::shared_ptr<Job>> done;
  std::vector<Preprocessed> preprocessed;
  {
    std::lock_guard lock(results_mutex_);
    done.swap(results_);
    preprocessed.swap(preprocessed_);
    if (preparation_finished_) preparation_in_flight_ = false;
    preparation_finished_ = false;
  }
  for (const auto& batch : preprocessed) {
    if (!batch.failed_check.empty()) caught_deviation(batch.failed_check, "preprocessing job " + std::to_string(batch.job));
    if (batch.epoch != pool_epoch_) continue;  // made for a pool since dropped
    preprocessing_in_flight_ = false;
    if (batch.ok) {
      log_.debug("pool entries made", {{"entries", batch.entries}, {"pool", backend_->describe_state()}});
    } else {
      // The other server may have lost its pool (a restart): start both afresh.
      log_.warn("preprocessing failed", {{"error", batch.error}});
      if (leader()) {
        new_pool_epoch(batch.start);
        preprocessing_paused_until_ = std::chrono::steady_clock::now() + kPreprocessingRetry;
      }
    }
  }
  for (auto& job : done) {
    if (leader() && client_jobs_running_ > 0) --client_jobs_running_;
    if (job->status != wire::Status::Ok) {
      ++jobs_failed_;
      if (job->status == wire::Status::VerificationFailed)
        caught_deviation(job->failed_check, "job " + std::to_string(job->number));
      // The other server may not hold the epoch left (it restarted since): no more jobs go there.
      if (leader() && left_epoch_ && job->pool_epoch == left_epoch_->epoch) left_epoch_.reset();
      // A job that failed on the other server's side may mean it lost its pool (a restart).
      if (leader() && job->status == wire::Status::PeerFailure && backend_->wants_preprocessing() &&
          !job->circuit)
        new_pool_epoch();
      log_.warn("job failed", {{"job", job->number}, {"error", job->error}});
      answer_error(job->key, job->status, job->error);
      continue;
    }
    if (job->circuit) {
      answer_circuit_job(*job);
      continue;
    }
    wire::Reply answer;
    answer.id = job->request.id;
    wire::ComputeResult result;
    result.blocks = job->request.blocks;
    result.x.assign(job->result.span().begin(), job->result.span().end());
    result.padded = std::move(job->padded);
    answer.body = std::move(result);
    host_.answer(job->key, std::move(answer));
    job->result.clear();
  }
}

void TwoPartyEngine::send_outgoing() {
  const int peer = settings_.peers.front().party;
  const auto now = std::chrono::steady_clock::now();
  while (!unsent_.empty()) {
    if (!host_.try_send(peer, unsent_.front())) return;
    unsent_.pop_front();
    last_send_progress_ = now;
  }
  while (const auto* frame = streams_.peek_outgoing()) {
    if (!host_.try_send(peer, *frame)) return;
    streams_.pop_outgoing();
    last_send_progress_ = now;
  }
}

void TwoPartyEngine::expire(std::chrono::steady_clock::time_point now) {
  streams_.expire(now);
  nonce_pool_->expire(now);
  for (auto it = unannounced_.begin(); it != unannounced_.end();) {
    if (now - it->second->arrived > kUnannouncedExpiry) {
      answer_error(it->first, wire::Status::PeerFailure,
                    "the leading server never announced this request");
      it = unannounced_.erase(it);
    } else {
      ++it;
    }
  }
  // Frames the peer has not taken for a whole peer timeout are dropped: their jobs have
  // failed on both sides by then (each side's stream times out).
  if ((!unsent_.empty() || streams_.has_outgoing()) && now - last_send_progress_ > settings_.limits.peer_timeout) {
    unsent_.clear();
    streams_.drop_outgoing();
  }
}

}  // namespace mpc::two_party_engine
