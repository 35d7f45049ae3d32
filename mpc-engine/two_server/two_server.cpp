#include "two_server/two_server.hpp"

#include <sodium.h>

#include <algorithm>

#include "common/error.hpp"
#include "server/batch_inputs.hpp"
#include "server/key_admin.hpp"
#include "two_server/two_server_job.hpp"

namespace mpc::two_server {
namespace {

constexpr std::size_t kMaxRequestsPerDrain = 256;
constexpr auto kUnannouncedExpiry = std::chrono::seconds(30);

wire::ClientKey client_key(const transport::PublicKey& key) {
  wire::ClientKey out{};
  std::copy(key.begin(), key.end(), out.begin());
  return out;
}

}  // namespace

TwoServer::TwoServer(settings::ServerSettings settings, const Logger& log)
    : settings_(std::move(settings)),
      log_(log),
      own_keys_(transport::read_secret_key_file(settings_.secret_key_file)),
      store_(settings_.storage_path, store::read_storage_key_file(settings_.storage_key_file)),
      backend_(make_backend(settings_, log_)),
      streams_([this] { wakeup_.notify(); }, settings_.limits.peer_timeout, kUnannouncedExpiry) {
  // Opening every record proves the storage key is the right one before serving; a store of
  // three-server shares is refused here rather than at the first job.
  for (const auto& stored : store_.list()) {
    auto share = store_.get(stored.key);
    if (share && share->size() != wire::material_bytes(stored.key.algorithm))
      throw Error(Component::Server, wire::describe(stored.key) + " is stored as a three-server share: convert the " +
                                         "store with mpc-server --convert-from-rss3 before serving " +
                                         settings::protocol_name(settings_.protocol));
  }
  for (const auto& key : settings_.compute_clients) context_.allow("clients", key, "compute");
  for (const auto& key : settings_.admin_clients) context_.allow("clients", key, "admin");
  transport::LinkOptions client_options;
  client_options.max_message_bytes =
      static_cast<std::int64_t>(settings_.limits.max_job_blocks) * 16 +
      static_cast<std::int64_t>(wire::material_bytes(wire::KeyAlgorithm::Aes256Gcm)) + 4096;
  clients_ = std::make_unique<transport::Listener>(context_, settings_.client_endpoint, own_keys_, "clients",
                                                   client_options);
  peers_ = std::make_unique<server::PeerLinks>(context_, settings_, own_keys_);
  circuits_ = dynamic_cast<Gc2Backend*>(backend_.get());
  if (circuits_ == nullptr) {
    own_circuits_ = std::make_unique<Gc2Backend>(settings_.party, log_);
    circuits_ = own_circuits_.get();
  }
  circuits_->set_preparation_budget(static_cast<std::size_t>(settings_.limits.prepared_circuits_mib) << 20);
  preparations_ = std::make_unique<PreprocessingThread>();
  randombytes_buf(&next_preparation_job_, sizeof next_preparation_job_);
  next_preparation_job_ = (next_preparation_job_ >> 2) | kPreparationJobBit;  // room to count up
  nonce_pool_ = std::make_unique<server::NoncePool>(settings_.limits.gcm_nonces_per_client,
                                                    settings_.limits.gcm_nonce_ttl);
  if (settings_.protocol == settings::Protocol::Lut2 &&
      settings_.lut.preprocessing == settings::LutPreprocessing::Dealer) {
    dealt_pool_ = dynamic_cast<Lut2Backend*>(backend_.get());
    if (dealt_pool_ == nullptr)
      throw Error(Component::Server, "[lut] preprocessing = \"dealer\" needs the lut2 back end");
    dealer_ = std::make_unique<DealerLink>(context_, settings_, own_keys_, log_);
    dealt_jobs_ = std::make_unique<PreprocessingThread>();
  }
  randombytes_buf(&next_job_, sizeof next_job_);
  next_job_ >>= 1;  // room to count up without wrapping
  if (settings_.party == 0 && backend_->wants_preprocessing()) new_pool_epoch();
  for (std::size_t i = 0; i < kWorkers; ++i) {
    auto worker = std::make_unique<Worker>();
    Worker* raw = worker.get();
    worker->thread = std::thread([this, raw] { worker_loop(*raw); });
    workers_.push_back(std::move(worker));
  }
  log_.info("serving", {{"party", settings_.party + 1},
                        {"protocol", settings::protocol_name(settings_.protocol)},
                        {"backend", backend_->name()},
                        {"clients", settings_.client_endpoint},
                        {"peers", settings_.peer_endpoint},
                        {"stored_keys", static_cast<std::uint64_t>(store_.count())}});
}

TwoServer::~TwoServer() {
  for (auto& worker : workers_) {
    {
      std::lock_guard lock(worker->mutex);
      worker->stopping = true;
    }
    worker->ready.notify_all();
  }
  for (auto& worker : workers_) worker->thread.join();
}

void TwoServer::run(const std::atomic<bool>& stop) {
  std::vector<void*> sockets{clients_->native(), peers_->listener_socket()};
  if (dealer_) sockets.push_back(dealer_->socket());
  const std::array<int, 1> descriptors{wakeup_.descriptor()};
  auto last_housekeeping = std::chrono::steady_clock::now();
  while (!stop.load()) {
    const bool backlog = !unsent_.empty() || streams_.has_outgoing();
    if (!backlog) last_send_progress_ = std::chrono::steady_clock::now();
    transport::wait_readable(sockets, descriptors,
                             backlog ? std::chrono::milliseconds(1) : std::chrono::milliseconds(50));
    wakeup_.clear();
    for (std::size_t i = 0; i < kMaxRequestsPerDrain; ++i) {
      auto message = clients_->receive(std::chrono::milliseconds(0));
      if (!message) break;
      handle_client_message(*message);
    }
    for (;;) {
      auto envelope = peers_->receive(std::chrono::milliseconds(0));
      if (!envelope) break;
      if (envelope->from_party >= 0) handle_peer_frame(std::move(envelope->data));
    }
    if (dealer_) handle_dealer();
    if (settings_.party != 0) start_announced();
    if (settings_.party == 0) schedule_preprocessing();
    collect_results();
    if (settings_.party == 0) schedule_preparation();
    // A dealt batch takes milliseconds: ask for the next one as soon as the last is stored,
    // not at the next wake-up.
    if (dealer_ && settings_.party == 0) schedule_preprocessing();
    send_outgoing();
    const auto now = std::chrono::steady_clock::now();
    if (now - last_housekeeping > std::chrono::seconds(1)) {
      expire(now);
      last_housekeeping = now;
    }
  }
  log_.info("stopping", {{"jobs", jobs_served_}, {"failed", jobs_failed_}, {"circuits", circuits_->describe_state()}});
}

void TwoServer::reply(const std::string& routing_id, wire::Reply reply) {
  if (!clients_->send(routing_id, wire::encode_reply(reply)))
    log_.debug("client gone before reply", {{"status", wire::status_name(reply.status)}});
}

void TwoServer::reply_error(const std::string& routing_id, const wire::RequestId& id, wire::Status status,
                            const std::string& detail) {
  reply(routing_id, server::error_reply(id, status, detail));
}

const SecretBytes* TwoServer::key_material(const wire::KeyId& key) {
  const std::string id = wire::describe(key);
  auto it = material_cache_.find(id);
  if (it != material_cache_.end()) return &it->second;
  auto share = store_.get(key);
  if (!share) return nullptr;
  return &material_cache_.emplace(id, std::move(*share)).first->second;
}

void TwoServer::handle_client_message(transport::ReceivedMessage& message) {
  wire::Request request;
  try {
    request = wire::decode_request(message.data);
  } catch (const FormatError& error) {
    log_.warn("malformed request", {{"error", error.what()}});
    reply_error(message.routing_id, server::salvage_request_id(message.data), wire::Status::BadRequest, error.what());
    return;
  }
  const wire::RequestId id = wire::request_id(request);
  try {
    if (auto* compute = std::get_if<wire::ComputeRequest>(&request)) {
      if (message.role != "admin" && message.role != "compute") {
        reply_error(message.routing_id, id, wire::Status::Unauthorized, "this client may not compute");
        return;
      }
      handle_compute(message, *compute);
      return;
    }
    if (std::holds_alternative<wire::GcmPrefetchRequest>(request) ||
        std::holds_alternative<wire::GcmOpenRequest>(request) || std::holds_alternative<wire::KrbRequest>(request) ||
        std::holds_alternative<wire::GcmTagRequest>(request)) {
      if (message.role != "admin" && message.role != "compute") {
        reply_error(message.routing_id, id, wire::Status::Unauthorized, "this client may not compute");
        return;
      }
      if (auto* tag = std::get_if<wire::GcmTagRequest>(&request))
        handle_gcm_tag(message, *tag);
      else
        handle_circuit_job(message, std::move(request));
      return;
    }
    handle_admin(message, request);
  } catch (const Error& error) {
    log_.error("request failed", {{"error", error.what()}});
    reply_error(message.routing_id, id, wire::Status::Internal, error.what());
  }
}

void TwoServer::handle_admin(transport::ReceivedMessage& message, wire::Request& request) {
  if (std::holds_alternative<wire::StatusRequest>(request)) {
    wire::Reply answer;
    answer.id = wire::request_id(request);
    wire::ServerStatus status;
    status.party = static_cast<std::uint8_t>(settings_.party);
    status.jobs = jobs_served_;
    status.stored_keys = static_cast<std::uint32_t>(store_.count());
    answer.body = status;
    reply(message.routing_id, std::move(answer));
    return;
  }
  if (auto* remove = std::get_if<wire::DeleteKeyRequest>(&request)) {
    material_cache_.erase(wire::describe(remove->key));
    circuits_->forget_key(remove->key);
  }
  if (auto* import = std::get_if<wire::ImportKeyRequest>(&request)) circuits_->key_rotated(import->key);
  const std::string sharing = std::string("one XOR share of the key material: this is a two-server cluster (") +
                              settings::protocol_name(settings_.protocol) + ")";
  if (auto admin = server::answer_key_admin(request, message.role, store_, own_keys_, 1, sharing, log_))
    reply(message.routing_id, std::move(*admin));
}

std::shared_ptr<TwoServer::Job> TwoServer::new_job(const transport::ReceivedMessage& message) {
  auto job = std::make_shared<Job>();
  job->routing_id = message.routing_id;
  job->client = client_key(message.sender);
  return job;
}

void TwoServer::refuse(const std::shared_ptr<Job>& job, const wire::RequestId& id, wire::Status status,
                       const std::string& detail) {
  reply_error(job->routing_id, id, status, detail);
  if (settings_.party != 0 && unannounced_.size() < settings_.limits.max_pending_jobs * 2ull) {
    job->refused = true;
    unannounced_[{job->client, id}] = job;
  }
}

void TwoServer::handle_compute(transport::ReceivedMessage& message, wire::ComputeRequest& request) {
  auto job = new_job(message);
  if (request.key.algorithm != wire::KeyAlgorithm::Aes128 && request.key.algorithm != wire::KeyAlgorithm::Aes256) {
    refuse(job, request.id, wire::Status::BadRequest, wire::describe(request.key) + " serves only the GCM or Kerberos requests");
    return;
  }
  if (request.blocks > settings_.limits.max_job_blocks) {
    refuse(job, request.id, wire::Status::TooLarge, "job of " + std::to_string(request.blocks) +
                                                        " blocks exceeds max_job_blocks " +
                                                        std::to_string(settings_.limits.max_job_blocks));
    return;
  }
  job->request = std::move(request);
  admit(std::move(job));
}

void TwoServer::admit(std::shared_ptr<Job> job) {
  const wire::RequestId id = job->request.id;
  if (unannounced_.size() + announced_.size() >= settings_.limits.max_pending_jobs) {
    refuse(job, id, wire::Status::Busy, "too many pending jobs");
    return;
  }
  const SecretBytes* share = key_material(job->request.key);
  if (share == nullptr) {
    refuse(job, id, wire::Status::UnknownKey, wire::describe(job->request.key) + " not found");
    return;
  }
  job->key_share = *share;
  if (settings_.party != 0) {
    if (!unannounced_.emplace(std::make_pair(job->client, id), job).second)
      reply_error(job->routing_id, id, wire::Status::BadRequest, "request id already in use");
    return;
  }
  const std::uint64_t entries = backend_->pool_entries(job->request.key, job->request.blocks);
  if (entries > backend_->pool_capacity() && backend_->wants_preprocessing()) {
    reply_error(job->routing_id, id, wire::Status::TooLarge,
                "the job needs " + std::to_string(entries) + " lookup-table entries; the pool holds " +
                    std::to_string(backend_->pool_capacity()) + " ([lut] pool_sboxes)");
    return;
  }
  job->number = next_job_++;
  job->pool_epoch = pool_epoch_;
  job->pool_start = next_pool_;
  next_pool_ += entries;
  ++client_jobs_running_;
  wire::TwoServerAnnounce announce;
  announce.job = job->number;
  announce.client = job->client;
  announce.request = id;
  announce.pool_epoch = job->pool_epoch;
  announce.pool_start = job->pool_start;
  announce.pool_entries = entries;
  unsent_.push_back(wire::encode_two_server(announce));
  queue_job(std::move(job));
}

void TwoServer::handle_peer_frame(std::vector<std::uint8_t> frame) {
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
    if (streams_.deliver(job, std::move(data->bytes)) && settings_.party != 0 && (job & kPreparationJobBit) != 0)
      preparations_->post([this, job] { keep_preparation(job); });
  } else if (auto* abort = std::get_if<wire::TwoServerAbort>(&message)) {
    streams_.peer_aborted(abort->job, abort->reason);
  } else if (auto* announce = std::get_if<wire::TwoServerAnnounce>(&message)) {
    if (settings_.party == 0) {
      log_.warn("announcement from the follower ignored", {{"job", announce->job}});
      return;
    }
    announced_.emplace_back(*announce, std::chrono::steady_clock::now());
  }
}

void TwoServer::start_announced() {
  const auto now = std::chrono::steady_clock::now();
  while (!announced_.empty()) {
    const auto& [announce, when] = announced_.front();
    if (backend_->wants_preprocessing() && announce.pool_epoch != pool_epoch_) {
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
          queue_job(std::move(job));
        }
      }
      announced_.pop_front();
      continue;
    }
    auto it = unannounced_.find({announce.client, announce.request});
    if (it == unannounced_.end()) {
      if (now - when < settings_.limits.job_wait) return;
      streams_.send_abort(announce.job, "the follower never received the client's request");
      log_.warn("announced job without its request abandoned", {{"job", announce.job}});
      announced_.pop_front();
      continue;
    }
    auto job = std::move(it->second);
    unannounced_.erase(it);
    if (job->refused) {
      streams_.send_abort(announce.job, "the follower refused the request");
      announced_.pop_front();
      continue;
    }
    if (backend_->pool_entries(job->request.key, job->request.blocks) != announce.pool_entries) {
      streams_.send_abort(announce.job, "pool entries disagree");
      reply_error(job->routing_id, job->request.id, wire::Status::PeerFailure,
                  "the servers disagree on the job's lookup-table entries");
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

void TwoServer::queue_job(std::shared_ptr<Job> job) {
  Worker& worker = *workers_[job->number % workers_.size()];
  {
    std::lock_guard lock(worker.mutex);
    worker.queue.push_back(std::move(job));
  }
  worker.ready.notify_one();
}

void TwoServer::worker_loop(Worker& worker) {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(worker.mutex);
      worker.ready.wait(lock, [&] { return worker.stopping || !worker.queue.empty(); });
      if (worker.stopping) return;
      job = std::move(worker.queue.front());
      worker.queue.pop_front();
    }
    if (job->kind == wire::TwoServerJobKind::LutPreprocessing) {
      run_preprocessing(*job);
      continue;
    }
    if (job->circuit)
      run_circuit_job(*job);
    else
      run_compute_job(*job);
    job->key_share.clear();
    {
      std::lock_guard lock(results_mutex_);
      results_.push_back(std::move(job));
    }
    wakeup_.notify();
  }
}

void TwoServer::run_compute_job(Job& job) {
  std::vector<std::uint8_t> input(static_cast<std::size_t>(job.request.blocks) * 16);
  server::public_blocks(job.request, 0, job.request.blocks, input);
  ComputeTask task;
  task.job = job.number;
  task.key = job.request.key;
  task.decrypt = job.request.operation == wire::Operation::EcbDecrypt;
  task.key_share = job.key_share.span();
  task.input = input;
  task.blocks = job.request.blocks;
  task.pool_epoch = job.pool_epoch;
  task.pool_start = job.pool_start;
  try {
    auto stream = streams_.open(job.number);
    job.result = backend_->compute(*stream, task);
  } catch (const PeerError& error) {
    fail(job, wire::Status::PeerFailure, error.what());
  } catch (const BackendBusy& error) {
    fail(job, wire::Status::Busy, error.what());
  } catch (const std::exception& error) {
    fail(job, wire::Status::Internal, error.what());
  }
}

void TwoServer::fail(Job& job, wire::Status status, const std::string& error) {
  job.status = status;
  job.error = error;
  streams_.send_abort(job.number, error);
}

void TwoServer::run_preprocessing(Job& job) {
  try {
    auto stream = streams_.open(job.number);
    if (dealer_)
      store_dealt_batch(*stream, job);
    else
      backend_->preprocess(*stream, job.pool_epoch, job.pool_start, job.pool_entries);
  } catch (const std::exception& error) {
    job.status = wire::Status::PeerFailure;
    job.error = error.what();
    streams_.send_abort(job.number, error.what());
  }
  std::lock_guard lock(results_mutex_);
  preprocessed_.push_back({job.status == wire::Status::Ok, job.pool_epoch, job.pool_entries, job.error});
  wakeup_.notify();
}

void TwoServer::new_pool_epoch() {
  const std::uint64_t previous = pool_epoch_;
  do randombytes_buf(&pool_epoch_, sizeof pool_epoch_);
  while (pool_epoch_ == 0 || pool_epoch_ == previous);
  backend_->reset_pool(pool_epoch_);
  next_pool_ = 0;
  next_produce_ = 0;
  preprocessing_in_flight_ = false;
  if (dealer_) dealer_->cancel_request();  // its batch would be numbered for the old pool
  log_.info("lookup-table pool restarted", {{"epoch", pool_epoch_}});
}

void TwoServer::schedule_preprocessing() {
  if (!backend_->wants_preprocessing() || preprocessing_in_flight_) return;
  const std::uint64_t batch = backend_->preprocess_batch();
  const std::uint64_t capacity = backend_->pool_capacity();
  if (next_produce_ + batch > next_pool_ + capacity) return;
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

void TwoServer::announce_preprocessing(std::uint64_t entries, std::uint64_t dealer_batch) {
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
    queue_job(std::move(job));
  }
}

void TwoServer::handle_dealer() {
  dealer_->tick(std::chrono::steady_clock::now());
  const auto grant = dealer_->receive();
  // The leader asked for this batch when the pool had room for it, and a new pool epoch since
  // would have cancelled the request: it still fits.
  if (grant && settings_.party == 0 && !preprocessing_in_flight_) announce_preprocessing(grant->count, grant->batch);
}

// Each server stores its shares of the dealer's batch; the follower then confirms the batch id
// it stored, so a batch that never reached it (or another one) fails the job on both sides and
// the leader starts a new pool epoch, as after a failed OT preprocessing job.
void TwoServer::store_dealt_batch(two_party::Channel& peer, const Job& job) {
  // The follower gives up well within the leader's stream timeout, so the leader hears why.
  const auto wait = settings_.party == 0 ? std::chrono::milliseconds(0) : settings_.limits.peer_timeout / 2;
  auto shares = dealer_->take(job.number, job.pool_entries, wait);
  dealt_pool_->store_dealt(job.pool_epoch, job.pool_start, std::move(shares.entries));
  std::array<std::uint8_t, 8> stored{};
  for (std::size_t i = 0; i < stored.size(); ++i) stored[i] = static_cast<std::uint8_t>(shares.batch >> (8 * i));
  if (settings_.party != 0) {
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

void TwoServer::collect_results() {
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
    if (batch.epoch != pool_epoch_) continue;  // made for a pool since dropped
    preprocessing_in_flight_ = false;
    if (batch.ok) {
      log_.debug("lookup-table entries made", {{"entries", batch.entries}, {"pool", backend_->describe_state()}});
    } else {
      // The other server may have lost its pool (a restart): start both afresh.
      log_.warn("lookup-table preprocessing failed", {{"error", batch.error}});
      if (settings_.party == 0) new_pool_epoch();
    }
  }
  for (auto& job : done) {
    if (settings_.party == 0 && client_jobs_running_ > 0) --client_jobs_running_;
    if (job->status != wire::Status::Ok) {
      ++jobs_failed_;
      // A job that failed on the other server's side may mean it lost its pool (a restart).
      if (settings_.party == 0 && job->status == wire::Status::PeerFailure && backend_->wants_preprocessing() &&
          !job->circuit)
        new_pool_epoch();
      log_.warn("job failed", {{"job", job->number}, {"error", job->error}});
      reply_error(job->routing_id, job->request.id, job->status, job->error);
      continue;
    }
    ++jobs_served_;
    if (job->circuit) {
      reply_circuit_job(*job);
      continue;
    }
    wire::Reply answer;
    answer.id = job->request.id;
    wire::ComputeResult result;
    result.blocks = job->request.blocks;
    result.x.assign(job->result.span().begin(), job->result.span().end());
    answer.body = std::move(result);
    reply(job->routing_id, std::move(answer));
    job->result.clear();
  }
}

void TwoServer::send_outgoing() {
  const int peer = settings_.peers.front().party;
  const auto now = std::chrono::steady_clock::now();
  while (!unsent_.empty()) {
    if (!peers_->try_send_to(peer, unsent_.front())) return;
    unsent_.pop_front();
    last_send_progress_ = now;
  }
  while (const auto* frame = streams_.peek_outgoing()) {
    if (!peers_->try_send_to(peer, *frame)) return;
    streams_.pop_outgoing();
    last_send_progress_ = now;
  }
}

void TwoServer::expire(std::chrono::steady_clock::time_point now) {
  streams_.expire(now);
  nonce_pool_->expire(now);
  for (auto it = unannounced_.begin(); it != unannounced_.end();) {
    if (now - it->second->arrived > kUnannouncedExpiry) {
      if (!it->second->refused)
        reply_error(it->second->routing_id, it->second->request.id, wire::Status::PeerFailure,
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

}  // namespace mpc::two_server
