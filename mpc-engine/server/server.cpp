#include "server/server.hpp"

#include <sodium.h>

#include <algorithm>
#include <variant>

#include "common/error.hpp"
#include "protocol/rss3/output.hpp"
#include "protocol/rss3/transpose.hpp"
#include "server/batch_exchange.hpp"
#include "server/batch_inputs.hpp"
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
      store_(settings_.storage_path, store::read_storage_key_file(settings_.storage_key_file)),
      evaluator_(rss3::make_cpu_evaluator(rss3::best_simd_level())) {
  run_self_tests(circuits_, rss3::best_simd_level(), log_);
  // Opening every record proves the storage key is the right one before serving.
  (void)store_.list();
  for (const auto& key : settings_.compute_clients) context_.allow("clients", key, "compute");
  for (const auto& key : settings_.admin_clients) context_.allow("clients", key, "admin");
  transport::LinkOptions client_options;
  client_options.max_message_bytes = static_cast<std::int64_t>(settings_.limits.max_job_blocks) * 16 + 4096;
  clients_ = std::make_unique<transport::Listener>(context_, settings_.client_endpoint, own_keys_, "clients",
                                                   client_options);
  peers_ = std::make_unique<PeerLinks>(context_, settings_, own_keys_);
  if (settings_.party == 0) {
    randombytes_buf(&epoch_, sizeof epoch_);
    if (epoch_ == 0) epoch_ = 1;  // 0 means "none seen" at followers
  }
  log_.info("serving", {{"party", settings_.party + 1},
                        {"clients", settings_.client_endpoint},
                        {"peers", settings_.peer_endpoint},
                        {"evaluator", evaluator_->name()},
                        {"stored_keys", static_cast<std::uint64_t>(store_.count())}});
}

Server::~Server() {
  for (auto& [key, job] : jobs_) job.key_share.clear();
}

void Server::run(const std::atomic<bool>& stop) {
  std::array<void*, 2> sockets{clients_->native(), peers_->listener_socket()};
  auto last_housekeeping = std::chrono::steady_clock::now();
  while (!stop.load()) {
    const bool work_ready = (settings_.party == 0 && !queue_.empty()) || !batches_.empty();
    transport::wait_readable(sockets, std::chrono::milliseconds(work_ready ? 0 : 100));
    drain_client_requests();
    drain_peer_messages();
    if (settings_.party == 0) {
      if (auto header = form_batch()) lead_batch(std::move(*header));
    } else if (!batches_.empty()) {
      wire::BatchHeader header = std::move(batches_.front());
      batches_.pop_front();
      // After a leader restart only its newest epoch matters: skip what it announced before.
      const bool superseded = std::any_of(batches_.begin(), batches_.end(),
                                          [&](const wire::BatchHeader& later) { return later.epoch != header.epoch; });
      if (!superseded && accept_batch_nonce(header)) run_batch(header);
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_housekeeping > std::chrono::seconds(1)) {
      expire_jobs();
      last_housekeeping = now;
    }
  }
  log_.info("stopping", {{"batches", batches_run_}, {"jobs", jobs_served_}});
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
    if (envelope->from_party < 0) continue;
    try {
      auto message = wire::decode_peer_message(envelope->data);
      if (auto* batch = std::get_if<wire::BatchHeader>(&message)) {
        if (envelope->from_party == 0 && settings_.party != 0) batches_.push_back(std::move(*batch));
      } else {
        // A neighbour can start a batch before this server has read its header: keep the
        // message; the batch's exchange takes it, or drops it once the batch is past.
        early_messages_.keep(std::move(*envelope));
      }
    } catch (const FormatError& error) {
      log_.warn("malformed peer message", {{"from", envelope->from_party + 1}, {"error", error.what()}});
    }
  }
}

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

void Server::lead_batch(wire::BatchHeader header) {
  const auto frame = wire::encode_batch(header);
  for (int party = 1; party < 3; ++party) {
    if (!peers_->send_to(party, frame)) {
      const std::string detail = "party " + std::to_string(party + 1) + " is unreachable";
      wire::AbortNotice notice{header.epoch, header.sequence, static_cast<std::uint16_t>(wire::Status::PeerFailure),
                               detail};
      const auto abort_frame = wire::encode_abort(notice);
      for (int other = 1; other < 3; ++other)
        if (other != party) peers_->send_to(other, abort_frame);
      log_.warn("batch not started", {{"sequence", header.sequence}, {"error", detail}});
      fail_batch_jobs(header, wire::Status::PeerFailure, detail);
      return;
    }
  }
  run_batch(header);
}

bool Server::accept_batch_nonce(const wire::BatchHeader& header) {
  if (header.epoch == last_epoch_seen_ && header.sequence <= last_sequence_seen_) {
    log_.warn("replayed batch id refused", {{"sequence", header.sequence}});
    return false;
  }
  last_epoch_seen_ = header.epoch;
  last_sequence_seen_ = header.sequence;
  return true;
}

void Server::wait_for_jobs(const wire::BatchHeader& header) {
  const auto deadline = std::chrono::steady_clock::now() + settings_.limits.job_wait;
  auto all_present = [&] {
    return std::all_of(header.slices.begin(), header.slices.end(), [&](const wire::BatchSlice& slice) {
      return jobs_.count(JobKey{slice.client, slice.request}) != 0;
    });
  };
  while (!all_present()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    auto message = clients_->receive(left);
    if (message) handle_client_message(*message);
  }
}

void Server::fail_batch_jobs(const wire::BatchHeader& header, wire::Status status, const std::string& detail) {
  for (const auto& slice : header.slices) {
    auto it = jobs_.find(JobKey{slice.client, slice.request});
    if (it == jobs_.end()) continue;
    if (!it->second.answered) reply_error(it->second.routing_id, slice.request, status, detail);
    jobs_.erase(it);
  }
}

void Server::run_batch(const wire::BatchHeader& header) {
  const auto started = std::chrono::steady_clock::now();
  if (settings_.party != 0) wait_for_jobs(header);
  const circuits::Program& program = circuits_.program(header.circuit);
  const std::size_t key_rows = CircuitSet::key_rows(header.circuit);
  const wire::KeyAlgorithm algorithm = algorithm_of(header.circuit);
  const bool decrypt = is_decrypt(header.circuit);

  std::size_t instances = 0;
  for (const auto& slice : header.slices) instances += slice.blocks;
  if (instances == 0 || instances > settings_.limits.max_batch_blocks) {
    log_.warn("batch refused", {{"sequence", header.sequence}, {"instances", static_cast<std::uint64_t>(instances)}});
    const auto frame = wire::encode_abort({header.epoch, header.sequence,
                                           static_cast<std::uint16_t>(wire::Status::TooLarge), "batch size refused"});
    for (int party = 0; party < 3; ++party)
      if (party != settings_.party) peers_->send_to(party, frame);
    fail_batch_jobs(header, wire::Status::TooLarge, "batch size refused by party " + std::to_string(settings_.party + 1));
    return;
  }

  // Inputs: expanded round-key shares broadcast over each slice, then the public block as (0, c).
  rss3::ShareMatrix& inputs = inputs_;
  inputs.reset(program.num_inputs, instances);
  std::vector<std::uint8_t>& blocks = public_blocks_;
  blocks.assign(instances * 16, 0);
  std::size_t offset = 0;
  for (const auto& slice : header.slices) {
    auto it = jobs_.find(JobKey{slice.client, slice.request});
    const bool usable = it != jobs_.end() && !it->second.answered && it->second.request.key.algorithm == algorithm &&
                        (it->second.request.operation == wire::Operation::EcbDecrypt) == decrypt &&
                        static_cast<std::uint64_t>(slice.first_block) + slice.blocks <= it->second.request.blocks &&
                        it->second.key_share.size() == 2 * wire::material_bytes(algorithm);
    if (usable) {
      const Job& job = it->second;
      const std::size_t half = job.key_share.size() / 2;
      broadcast_bits(inputs.x, inputs.words_per_row, 0, job.key_share.span().first(half), offset, slice.blocks);
      broadcast_bits(inputs.a, inputs.words_per_row, 0, job.key_share.span().subspan(half), offset, slice.blocks);
      public_blocks(job.request, slice.first_block, slice.blocks, std::span(blocks).subspan(offset * 16, slice.blocks * 16ull));
    } else if (it != jobs_.end() && !it->second.answered) {
      reply_error(it->second.routing_id, slice.request, wire::Status::BadRequest,
                  "job does not match the batch the leader scheduled");
      it->second.answered = true;
    }
    offset += slice.blocks;
  }
  rss3::slice(blocks, 16, instances, inputs.a, inputs.words_per_row, key_rows);

  rss3::CorrelatedRandomness randomness(prf_keys_.own, prf_keys_.previous, {header.epoch, header.sequence});
  BatchExchange exchange(*peers_, settings_.party, header.epoch, header.sequence, settings_.limits.peer_timeout,
                         batches_, early_messages_, log_);
  rss3::ShareMatrix& outputs = outputs_;
  rss3::EvaluationStats stats;
  try {
    stats = evaluator_->evaluate(program, inputs, outputs, randomness, exchange);
  } catch (const PeerError& error) {
    inputs.wipe();
    const auto frame = wire::encode_abort(
        {header.epoch, header.sequence, static_cast<std::uint16_t>(wire::Status::PeerFailure), error.what()});
    for (int party = 0; party < 3; ++party)
      if (party != settings_.party) peers_->send_to(party, frame);
    log_.warn("batch failed", {{"sequence", header.sequence}, {"error", error.what()}});
    fail_batch_jobs(header, wire::Status::PeerFailure, error.what());
    return;
  }
  inputs.wipe();

  rss3::ByteShare result;
  result.x.resize(instances * 16);
  result.a.resize(instances * 16);
  rss3::unslice(outputs.x, outputs.words_per_row, 0, 16, instances, result.x);
  rss3::unslice(outputs.a, outputs.words_per_row, 0, 16, instances, result.a);
  outputs.wipe();
  rss3::mask_output_share(randomness, 0, result);

  offset = 0;
  for (const auto& slice : header.slices) {
    auto it = jobs_.find(JobKey{slice.client, slice.request});
    if (it != jobs_.end() && !it->second.answered) {
      Job& job = it->second;
      if (job.masked_x.empty()) {
        job.masked_x.resize(static_cast<std::size_t>(job.request.blocks) * 16);
        job.masked_a.resize(static_cast<std::size_t>(job.request.blocks) * 16);
      }
      std::copy_n(result.x.begin() + static_cast<std::ptrdiff_t>(offset * 16), slice.blocks * 16ull,
                  job.masked_x.begin() + static_cast<std::ptrdiff_t>(slice.first_block) * 16);
      std::copy_n(result.a.begin() + static_cast<std::ptrdiff_t>(offset * 16), slice.blocks * 16ull,
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
  }
  ++batches_run_;
  payload_bytes_sent_ += stats.bytes_sent;
  layer_messages_sent_ += stats.layers_exchanged;
  and_gates_evaluated_ += program.and_gates * instances;
  const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
  log_.debug("batch done", {{"sequence", header.sequence},
                            {"instances", static_cast<std::uint64_t>(instances)},
                            {"layers", stats.layers_exchanged},
                            {"bytes_sent", stats.bytes_sent},
                            {"micros", static_cast<std::int64_t>(elapsed.count())}});
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
