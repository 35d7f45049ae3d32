#include "server/server.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <variant>

#include "common/error.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "server/batch_inputs.hpp"
#include "server/layer_messages.hpp"
#include "wire/peer_messages.hpp"
#include "server/self_test.hpp"

namespace mpc::server {
namespace {

constexpr auto kFollowerJobExpiry = std::chrono::seconds(30);
constexpr std::size_t kMaxRequestsPerDrain = 4096;

std::array<transport::PublicKey, 3> party_public_keys(const settings::ServerSettings& settings,
                                                      const transport::PublicKey& own) {
  std::array<transport::PublicKey, 3> keys{};
  keys[static_cast<std::size_t>(settings.party)] = own;
  for (const auto& peer : settings.peers) keys[static_cast<std::size_t>(peer.party)] = peer.public_key;
  return keys;
}

bool is_decrypt(wire::CircuitId id) {
  switch (id) {
    case wire::CircuitId::Aes128DecryptAnd32:
    case wire::CircuitId::Aes128DecryptDepth4:
    case wire::CircuitId::Aes256DecryptAnd32:
    case wire::CircuitId::Aes256DecryptDepth4: return true;
    default: return false;
  }
}

wire::KeyAlgorithm algorithm_of(wire::CircuitId id) {
  return static_cast<std::uint8_t>(id) >= 5 ? wire::KeyAlgorithm::Aes256 : wire::KeyAlgorithm::Aes128;
}

wire::RequestId salvage_request_id(std::span<const std::uint8_t> frame) {
  wire::RequestId id{};
  if (frame.size() >= 18) std::copy_n(frame.begin() + 2, 16, id.begin());
  return id;
}

}  // namespace

Server::Server(settings::ServerSettings settings, const Logger& log)
    : settings_(std::move(settings)),
      log_(log),
      own_keys_(transport::read_secret_key_file(settings_.secret_key_file)),
      prf_keys_(derive_prf_keys(settings_.party, own_keys_, party_public_keys(settings_, own_keys_.public_key))),
      store_(settings_.storage_path, store::read_storage_key_file(settings_.storage_key_file)) {
  run_self_tests(circuits_, [this] { return make_evaluator(); }, log_);
  // Opening every record proves the storage key is the right one before serving.
  (void)store_.list();
  for (const auto& key : settings_.compute_clients) context_.allow("clients", key, "compute");
  for (const auto& key : settings_.admin_clients) context_.allow("clients", key, "admin");
  transport::LinkOptions client_options;
  client_options.max_message_bytes = static_cast<std::int64_t>(settings_.limits.max_job_blocks) * 16 + 4096;
  clients_ = std::make_unique<transport::Listener>(context_, settings_.client_endpoint, own_keys_, "clients",
                                                   client_options);
  peers_ = std::make_unique<PeerLinks>(context_, settings_, own_keys_);
  inline_evaluator_ = make_evaluator();
  for (std::size_t i = 0; i < kBatchesInFlight; ++i)
    workers_.push_back(std::make_unique<BatchWorker>(context_, settings_, own_keys_, prf_keys_,
                                                     make_evaluator(), batch_finished_, log_));
  if (settings_.party == 0) {
    randombytes_buf(&epoch_, sizeof epoch_);
    if (epoch_ == 0) epoch_ = 1;  // 0 means "none seen" at followers
  }
  log_.info("serving", {{"party", settings_.party + 1},
                        {"clients", settings_.client_endpoint},
                        {"peers", settings_.peer_endpoint},
                        {"evaluator", make_evaluator()->name()},
                        {"batches_in_flight", static_cast<std::uint64_t>(kBatchesInFlight)},
                        {"stored_keys", static_cast<std::uint64_t>(store_.count())}});
}

std::unique_ptr<rss3::Evaluator> Server::make_evaluator() const {
  const bool gpu = settings_.backend == settings::EvaluatorBackend::Cuda ||
                   (settings_.backend == settings::EvaluatorBackend::Auto && cuda::cuda_device_available());
  return gpu ? cuda::make_cuda_evaluator(0) : rss3::make_cpu_evaluator(rss3::best_simd_level());
}

Server::~Server() {
  workers_.clear();  // joins the workers before the sockets they use go away
  for (auto& [key, job] : jobs_) job.key_share.clear();
}

void Server::run(const std::atomic<bool>& stop) {
  std::array<void*, 2> sockets{clients_->native(), peers_->listener_socket()};
  const std::array<int, 1> descriptors{batch_finished_.descriptor()};
  auto last_housekeeping = std::chrono::steady_clock::now();
  while (!stop.load()) {
    transport::wait_readable(sockets, descriptors, idle_wait());
    batch_finished_.clear();
    drain_client_requests();
    drain_peer_messages();
    collect_results();
    if (settings_.party == 0) {
      while (BatchWorker* worker = idle_worker()) {
        auto header = form_batch();
        if (!header) break;
        lead_batch(std::move(*header), *worker);
      }
    } else {
      start_announced_batches();
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_housekeeping > std::chrono::seconds(1)) {
      expire_jobs();
      last_housekeeping = now;
    }
  }
  log_.info("stopping", {{"batches", batches_run_}, {"jobs", jobs_served_}});
}

BatchWorker* Server::idle_worker() {
  for (auto& worker : workers_)
    if (worker->idle()) return worker.get();
  return nullptr;
}

// How long the loop may sleep on its sockets: not at all when a batch can start now,
// until a waited-for job's deadline, else until a socket or a finished batch wakes it.
std::chrono::milliseconds Server::idle_wait() {
  constexpr std::chrono::milliseconds kLongest{100};
  if (idle_worker() == nullptr) return kLongest;
  if (settings_.party == 0) return queue_.empty() ? kLongest : std::chrono::milliseconds(0);
  if (announced_.empty()) return kLongest;
  if (!front_wait_deadline_) return std::chrono::milliseconds(0);
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*front_wait_deadline_ -
                                                                          std::chrono::steady_clock::now());
  return std::clamp(left + std::chrono::milliseconds(1), std::chrono::milliseconds(0), kLongest);
}

void Server::drain_client_requests() {
  for (std::size_t i = 0; i < kMaxRequestsPerDrain; ++i) {
    auto message = clients_->receive(std::chrono::milliseconds(0));
    if (!message) return;
    handle_client_message(*message);
  }
}

void Server::drain_peer_messages() {
  for (;;) {
    auto envelope = peers_->receive(std::chrono::milliseconds(0));
    if (!envelope) return;
    if (envelope->from_party >= 0) route_peer_message(std::move(*envelope));
  }
}

void Server::route_peer_message(PeerEnvelope envelope) {
  if (const auto tag = batch_tag_of(envelope.data)) {
    for (auto& worker : workers_) {
      const auto running = worker->running();
      if (running && running->first == tag->epoch && running->second == tag->sequence) {
        worker->deliver(std::move(envelope));
        return;
      }
    }
    early_messages_.keep(std::move(envelope));
    return;
  }
  try {
    auto message = wire::decode_peer_message(envelope.data);
    if (auto* batch = std::get_if<wire::BatchHeader>(&message)) {
      if (envelope.from_party == 0 && settings_.party != 0) announced_.push_back(std::move(*batch));
    }
  } catch (const FormatError& error) {
    log_.warn("malformed peer message", {{"from", envelope.from_party + 1}, {"error", error.what()}});
  }
}

// LayerExchange for a batch run on the main thread: sends over the main thread's link to
// the next party and reads the peer socket itself, routing everything else as usual.
class Server::InlineExchange final : public rss3::LayerExchange {
 public:
  InlineExchange(Server& server, const wire::BatchHeader& header, std::vector<PeerEnvelope> early)
      : server_(server), tag_{header.epoch, header.sequence} {
    for (auto& envelope : early) pending_.push_back(std::move(envelope));
  }

  void exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing, std::span<std::uint8_t> incoming) override {
    const int next = rss3::next_party(server_.settings_.party);
    const int previous = rss3::previous_party(server_.settings_.party);
    build_layer_frame(frame_, tag_, layer, outgoing);
    if (!server_.peers_->send_to(next, frame_))
      throw PeerError(Component::Server, "party " + std::to_string(next + 1) + " is unreachable");
    if (take_layer_message(pending_, previous, layer, incoming)) return;
    const auto timeout = server_.settings_.limits.peer_timeout;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        throw PeerError(Component::Server, "no layer " + std::to_string(layer) + " message from party " +
                                               std::to_string(previous + 1) + " within " +
                                               std::to_string(timeout.count()) + " ms");
      auto envelope = server_.peers_->receive(left);
      if (!envelope || envelope->from_party < 0) continue;
      const auto tag = batch_tag_of(envelope->data);
      if (tag && *tag == tag_) {
        pending_.push_back(std::move(*envelope));
        if (take_layer_message(pending_, previous, layer, incoming)) return;
      } else {
        server_.route_peer_message(std::move(*envelope));
      }
    }
  }

 private:
  Server& server_;
  BatchTag tag_;
  std::deque<PeerEnvelope> pending_;
  std::vector<std::uint8_t> frame_;
};

void Server::reply(const std::string& routing_id, wire::Reply reply) {
  if (!clients_->send(routing_id, wire::encode_reply(reply)))
    log_.debug("client gone before reply", {{"status", wire::status_name(reply.status)}});
}

void Server::reply_error(const std::string& routing_id, const wire::RequestId& id, wire::Status status,
                         const std::string& detail) {
  wire::Reply answer;
  answer.id = id;
  answer.status = status;
  answer.error = detail.substr(0, 1024);
  reply(routing_id, std::move(answer));
}

void Server::handle_client_message(transport::ReceivedMessage& message) {
  wire::Request request;
  try {
    request = wire::decode_request(message.data);
  } catch (const FormatError& error) {
    log_.warn("malformed request", {{"error", error.what()}});
    reply_error(message.routing_id, salvage_request_id(message.data), wire::Status::BadRequest, error.what());
    return;
  }
  const wire::RequestId id = wire::request_id(request);
  const bool admin = message.role == "admin";
  try {
    if (auto* compute = std::get_if<wire::ComputeRequest>(&request)) {
      if (!admin && message.role != "compute") {
        reply_error(message.routing_id, id, wire::Status::Unauthorized, "this client may not compute");
        return;
      }
      handle_compute(message, *compute);
      return;
    }
    if (std::holds_alternative<wire::StatusRequest>(request)) {
      wire::Reply answer;
      answer.id = id;
      wire::ServerStatus status;
      status.party = static_cast<std::uint8_t>(settings_.party);
      status.epoch = settings_.party == 0 ? epoch_ : last_epoch_seen_;
      status.batches = batches_run_;
      status.jobs = jobs_served_;
      status.stored_keys = static_cast<std::uint32_t>(store_.count());
      status.payload_bytes_sent = payload_bytes_sent_;
      status.layer_messages_sent = layer_messages_sent_;
      status.and_gates_evaluated = and_gates_evaluated_;
      answer.body = status;
      reply(message.routing_id, std::move(answer));
      return;
    }
    if (!admin) {
      reply_error(message.routing_id, id, wire::Status::Unauthorized, "key administration needs an admin client key");
      return;
    }
    wire::Reply answer;
    answer.id = id;
    if (auto* import = std::get_if<wire::ImportKeyRequest>(&request)) {
      const bool stored = store_.put(import->key, import->share);
      import->share.clear();
      if (!stored) {
        reply_error(message.routing_id, id, wire::Status::KeyExists, wire::describe(import->key) + " already exists");
        return;
      }
      log_.info("key imported", {{"key", wire::describe(import->key)}});
    } else if (auto* list = std::get_if<wire::ListKeysRequest>(&request)) {
      wire::KeyList keys;
      for (const auto& stored : store_.list(list->name_prefix)) keys.keys.push_back({stored.key, stored.created_unix});
      answer.body = std::move(keys);
    } else if (auto* remove = std::get_if<wire::DeleteKeyRequest>(&request)) {
      if (!store_.remove(remove->key)) {
        reply_error(message.routing_id, id, wire::Status::UnknownKey, wire::describe(remove->key) + " not found");
        return;
      }
      log_.info("key deleted", {{"key", wire::describe(remove->key)}});
    }
    reply(message.routing_id, std::move(answer));
  } catch (const Error& error) {
    log_.error("request failed", {{"error", error.what()}});
    reply_error(message.routing_id, id, wire::Status::Internal, error.what());
  }
}

void Server::handle_compute(transport::ReceivedMessage& message, wire::ComputeRequest& request) {
  JobKey key{message.sender, request.id};
  if (jobs_.count(key) != 0) {
    reply_error(message.routing_id, request.id, wire::Status::BadRequest, "request id already in use");
    return;
  }
  Job job;
  job.routing_id = message.routing_id;
  job.arrived = std::chrono::steady_clock::now();
  auto refuse = [&](wire::Status status, const std::string& detail) {
    reply_error(message.routing_id, request.id, status, detail);
    // A follower keeps a marker so that a batch naming this job does not wait for it.
    if (settings_.party != 0 && jobs_.size() < settings_.limits.max_pending_jobs * 2ull) {
      job.answered = true;
      job.request = std::move(request);
      jobs_.emplace(key, std::move(job));
    }
  };
  if (request.blocks > settings_.limits.max_job_blocks) {
    refuse(wire::Status::TooLarge, "job of " + std::to_string(request.blocks) + " blocks exceeds max_job_blocks " +
                                       std::to_string(settings_.limits.max_job_blocks));
    return;
  }
  if (jobs_.size() >= settings_.limits.max_pending_jobs) {
    refuse(wire::Status::Busy, "too many pending jobs");
    return;
  }
  auto share = store_.get(request.key);
  if (!share) {
    refuse(wire::Status::UnknownKey, wire::describe(request.key) + " not found");
    return;
  }
  job.key_share = std::move(*share);
  job.request = std::move(request);
  jobs_.emplace(key, std::move(job));
  if (settings_.party == 0) queue_.push_back(key);
}

std::optional<wire::BatchHeader> Server::form_batch() {
  while (!queue_.empty()) {
    auto it = jobs_.find(queue_.front());
    if (it != jobs_.end() && it->second.blocks_scheduled < it->second.request.blocks) break;
    queue_.pop_front();
  }
  if (queue_.empty()) return std::nullopt;
  const Job& first = jobs_.at(queue_.front());
  const wire::KeyAlgorithm algorithm = first.request.key.algorithm;
  const bool decrypt = first.request.operation == wire::Operation::EcbDecrypt;

  wire::BatchHeader header;
  std::uint32_t total = 0;
  for (const JobKey& key : queue_) {
    if (total == settings_.limits.max_batch_blocks) break;
    auto it = jobs_.find(key);
    if (it == jobs_.end()) continue;
    Job& job = it->second;
    if (job.request.key.algorithm != algorithm || (job.request.operation == wire::Operation::EcbDecrypt) != decrypt)
      continue;
    const std::uint32_t left = job.request.blocks - job.blocks_scheduled;
    if (left == 0) continue;
    const std::uint32_t take = std::min(left, settings_.limits.max_batch_blocks - total);
    header.slices.push_back({key.client, key.request, job.blocks_scheduled, take});
    job.blocks_scheduled += take;
    total += take;
  }
  if (sequence_ == UINT32_MAX) {  // never reuse a PRF id: a new epoch starts a new id space
    randombytes_buf(&epoch_, sizeof epoch_);
    sequence_ = 0;
  }
  header.epoch = epoch_;
  header.sequence = ++sequence_;
  header.circuit = CircuitSet::choose(algorithm, decrypt, total, settings_.limits);
  return header;
}

void Server::lead_batch(wire::BatchHeader header, BatchWorker& worker) {
  const auto frame = wire::encode_batch(header);
  for (int party = 1; party < 3; ++party) {
    if (!peers_->send_to(party, frame)) {
      const std::string detail = "party " + std::to_string(party + 1) + " is unreachable";
      log_.warn("batch not started", {{"sequence", header.sequence}, {"error", detail}});
      abort_batch(header, wire::Status::PeerFailure, detail);
      return;
    }
  }
  start_batch(header, worker);
}

void Server::start_announced_batches() {
  while (!announced_.empty()) {
    BatchWorker* worker = idle_worker();
    if (worker == nullptr) return;
    const wire::BatchHeader& front = announced_.front();
    // After a leader restart only its newest epoch matters: skip what it announced before.
    const bool superseded = std::any_of(announced_.begin() + 1, announced_.end(),
                                        [&](const wire::BatchHeader& later) { return later.epoch != front.epoch; });
    if (superseded || !accept_batch_nonce(front)) {
      announced_.pop_front();
      front_wait_deadline_.reset();
      continue;
    }
    if (!jobs_present(front)) {
      // The client's copy of a job may still be on its way: wait a little, then run
      // without it (its slice evaluates zeros) so the other parties are not held up.
      const auto now = std::chrono::steady_clock::now();
      if (!front_wait_deadline_) front_wait_deadline_ = now + settings_.limits.job_wait;
      if (now < *front_wait_deadline_) return;
    }
    wire::BatchHeader header = std::move(announced_.front());
    announced_.pop_front();
    front_wait_deadline_.reset();
    last_epoch_seen_ = header.epoch;
    last_sequence_seen_ = header.sequence;
    start_batch(header, *worker);
  }
}

bool Server::accept_batch_nonce(const wire::BatchHeader& header) {
  if (header.epoch == last_epoch_seen_ && header.sequence <= last_sequence_seen_) {
    log_.warn("replayed batch id refused", {{"sequence", header.sequence}});
    return false;
  }
  return true;
}

bool Server::jobs_present(const wire::BatchHeader& header) const {
  return std::all_of(header.slices.begin(), header.slices.end(), [&](const wire::BatchSlice& slice) {
    return jobs_.count(JobKey{slice.client, slice.request}) != 0;
  });
}

void Server::abort_batch(const wire::BatchHeader& header, wire::Status status, const std::string& detail) {
  const auto frame =
      wire::encode_abort({header.epoch, header.sequence, static_cast<std::uint16_t>(status), detail.substr(0, 1024)});
  for (int party = 0; party < 3; ++party)
    if (party != settings_.party) peers_->send_to(party, frame);
  fail_batch_jobs(header, status, detail);
}

void Server::fail_batch_jobs(const wire::BatchHeader& header, wire::Status status, const std::string& detail) {
  for (const auto& slice : header.slices) {
    auto it = jobs_.find(JobKey{slice.client, slice.request});
    if (it == jobs_.end()) continue;
    if (!it->second.answered) reply_error(it->second.routing_id, slice.request, status, detail);
    jobs_.erase(it);
  }
}

void Server::start_batch(const wire::BatchHeader& header, BatchWorker& worker) {
  std::size_t instances = 0;
  for (const auto& slice : header.slices) instances += slice.blocks;
  if (instances == 0 || instances > settings_.limits.max_batch_blocks) {
    log_.warn("batch refused", {{"sequence", header.sequence}, {"instances", static_cast<std::uint64_t>(instances)}});
    abort_batch(header, wire::Status::TooLarge,
                "batch size refused by party " + std::to_string(settings_.party + 1));
    return;
  }
  const wire::KeyAlgorithm algorithm = algorithm_of(header.circuit);
  const bool decrypt = is_decrypt(header.circuit);

  BatchTask task;
  task.header = header;
  task.program = &circuits_.program(header.circuit);
  task.key_rows = CircuitSet::key_rows(header.circuit);
  task.instances = instances;
  for (const auto& slice : header.slices) {
    SliceInput input;
    input.blocks = slice.blocks;
    auto it = jobs_.find(JobKey{slice.client, slice.request});
    const bool usable = it != jobs_.end() && !it->second.answered && it->second.request.key.algorithm == algorithm &&
                        (it->second.request.operation == wire::Operation::EcbDecrypt) == decrypt &&
                        static_cast<std::uint64_t>(slice.first_block) + slice.blocks <= it->second.request.blocks &&
                        it->second.key_share.size() == 2 * wire::material_bytes(algorithm);
    if (usable) {
      input.key_share = it->second.key_share;
      input.public_blocks.resize(static_cast<std::size_t>(slice.blocks) * 16);
      public_blocks(it->second.request, slice.first_block, slice.blocks, input.public_blocks);
    } else if (it != jobs_.end() && !it->second.answered) {
      reply_error(it->second.routing_id, slice.request, wire::Status::BadRequest,
                  "job does not match the batch the leader scheduled");
      it->second.answered = true;
    }
    task.slices.push_back(std::move(input));
  }
  const BatchTag tag{header.epoch, header.sequence};
  if (instances <= settings_.limits.latency_batch_blocks) {
    InlineExchange exchange(*this, header, early_messages_.take(tag));
    BatchResult result =
        evaluate_batch(task, *inline_evaluator_, prf_keys_, exchange, inline_inputs_, inline_outputs_, log_);
    for (auto& slice : task.slices) slice.key_share.clear();
    apply_result(result);
    return;
  }
  worker.start(std::move(task));
  for (auto& envelope : early_messages_.take(tag)) worker.deliver(std::move(envelope));
}

void Server::collect_results() {
  for (auto& worker : workers_)
    if (auto result = worker->take_result()) apply_result(*result);
}

void Server::apply_result(BatchResult& result) {
  const wire::BatchHeader& header = result.header;
  if (!result.succeeded) {
    log_.warn("batch failed", {{"sequence", header.sequence}, {"error", result.error}});
    abort_batch(header, wire::Status::PeerFailure, result.error);
    return;
  }
  std::size_t offset = 0;
  std::size_t instances = 0;
  for (const auto& slice : header.slices) {
    auto it = jobs_.find(JobKey{slice.client, slice.request});
    if (it != jobs_.end() && !it->second.answered) {
      Job& job = it->second;
      if (job.masked_x.empty()) {
        job.masked_x.resize(static_cast<std::size_t>(job.request.blocks) * 16);
        job.masked_a.resize(static_cast<std::size_t>(job.request.blocks) * 16);
      }
      std::copy_n(result.masked.x.begin() + static_cast<std::ptrdiff_t>(offset * 16), slice.blocks * 16ull,
                  job.masked_x.begin() + static_cast<std::ptrdiff_t>(slice.first_block) * 16);
      std::copy_n(result.masked.a.begin() + static_cast<std::ptrdiff_t>(offset * 16), slice.blocks * 16ull,
                  job.masked_a.begin() + static_cast<std::ptrdiff_t>(slice.first_block) * 16);
      job.blocks_done += slice.blocks;
      if (job.blocks_done == job.request.blocks) {
        wire::Reply answer;
        answer.id = slice.request;
        answer.body = wire::ComputeResult{job.request.blocks, std::move(job.masked_x), std::move(job.masked_a)};
        reply(job.routing_id, std::move(answer));
        jobs_.erase(it);
        ++jobs_served_;
      }
    }
    offset += slice.blocks;
    instances += slice.blocks;
  }
  ++batches_run_;
  payload_bytes_sent_ += result.stats.bytes_sent;
  layer_messages_sent_ += result.stats.layers_exchanged;
  and_gates_evaluated_ += circuits_.program(header.circuit).and_gates * instances;
  log_.debug("batch done", {{"sequence", header.sequence},
                            {"instances", static_cast<std::uint64_t>(instances)},
                            {"layers", result.stats.layers_exchanged},
                            {"bytes_sent", result.stats.bytes_sent},
                            {"micros", static_cast<std::int64_t>(result.elapsed.count())}});
}

void Server::expire_jobs() {
  if (settings_.party == 0) return;  // the leader schedules every job it accepts
  const auto now = std::chrono::steady_clock::now();
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (now - it->second.arrived > kFollowerJobExpiry) {
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace mpc::server
