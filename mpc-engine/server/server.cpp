#include "server/server.hpp"

#include "server/key_admin.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <variant>

#include "common/error.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "protocol/rss3/ghash.hpp"
#include "protocol/rss3/output.hpp"
#include "server/batch_inputs.hpp"
#include "server/krb_jobs.hpp"
#include "server/layer_messages.hpp"
#include "server/self_test.hpp"
#include "wire/peer_messages.hpp"

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

bool is_tag_check(wire::CircuitId id) {
  return id == wire::CircuitId::Aes256EncryptEqAnd32 || id == wire::CircuitId::Aes256EncryptEqDepth4;
}

bool is_aes256_encrypt(wire::CircuitId id) {
  return id == wire::CircuitId::Aes256EncryptAnd32 || id == wire::CircuitId::Aes256EncryptDepth4;
}

// Jobs of one family run the same kind of circuit; Kerberos jobs share one family and are
// told apart by their circuit (KrbCircuitKey).
enum class Family : std::uint8_t {
  Aes128Encrypt,
  Aes128Decrypt,
  Aes256Encrypt,
  Aes256Decrypt,
  GcmPrefetch,
  GcmOpen,
  Krb,
};

// Jobs of one group run the same circuit, so the leader may put them in one batch: the
// family, and for the Kerberos circuits the circuit id, data length and combine shape.
struct BatchGroup {
  Family family = Family::Aes128Encrypt;
  KrbCircuitKey krb_circuit;  // Kerberos circuits only
  bool operator==(const BatchGroup&) const = default;
};

bool is_krb_family(Family family) { return family == Family::Krb; }

BatchGroup group_of(const Job& job) {
  switch (job.kind) {
    case JobKind::GcmPrefetch: return {Family::GcmPrefetch, {}};
    case JobKind::GcmOpen: return {Family::GcmOpen, {}};
    case JobKind::Krb: return {Family::Krb, job.krb_circuit};
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

std::size_t round_key_bytes(wire::KeyAlgorithm algorithm) {
  return algorithm == wire::KeyAlgorithm::Aes128 ? 11 * 16 : 15 * 16;
}

// x || a of the expanded round keys out of a stored share (x || a of the whole material).
SecretBytes round_key_share(const SecretBytes& share, wire::KeyAlgorithm algorithm) {
  const std::size_t half = share.size() / 2;
  const std::size_t bytes = round_key_bytes(algorithm);
  SecretBytes out(2 * bytes);
  std::memcpy(out.data(), share.data(), bytes);
  std::memcpy(out.data() + bytes, share.data() + half, bytes);
  return out;
}

// This party's share of GHASH_H(aad, text) from its share of an Aes256Gcm key's material.
rss3::ByteShare gcm_hash_share(const SecretBytes& share, std::span<const std::uint8_t> aad,
                               std::span<const std::uint8_t> text) {
  const std::size_t half = share.size() / 2;
  const std::size_t count = rss3::ghash_blocks(aad.size(), text.size());
  if (count > wire::kGcmHashPowers)
    throw Error(Component::Server, "GCM input of " + std::to_string(count) + " GHASH blocks exceeds the " +
                                       std::to_string(wire::kGcmHashPowers) + " stored hash key powers");
  std::vector<rss3::ByteShare> powers(count);
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t at = wire::kGcmRoundKeyBytes + 16 * k;
    powers[k].x.assign(share.data() + at, share.data() + at + 16);
    powers[k].a.assign(share.data() + half + at, share.data() + half + at + 16);
  }
  rss3::ByteShare out;
  try {
    out = rss3::ghash_share(powers, aad, text);
  } catch (...) {
    for (auto& power : powers) power.wipe();
    throw;
  }
  for (auto& power : powers) power.wipe();
  return out;
}

std::string nonce_hex(const wire::GcmNonce& nonce) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t byte : nonce) {
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 15]);
  }
  return out;
}

}  // namespace

Server::Server(settings::ServerSettings settings, const Logger& log)
    : settings_(std::move(settings)),
      log_(log),
      own_keys_(transport::read_secret_key_file(settings_.secret_key_file)),
      prf_keys_(derive_prf_keys(settings_.party, own_keys_, party_public_keys(settings_, own_keys_.public_key))),
      store_(settings_.storage_path, store::read_storage_key_file(settings_.storage_key_file)),
      ledger_(2 * static_cast<std::size_t>(settings_.limits.max_pending_jobs), kFollowerJobExpiry),
      nonce_pool_(settings_.limits.gcm_nonces_per_client, settings_.limits.gcm_nonce_ttl) {
  run_self_tests(circuits_, [this] { return make_evaluator(); }, log_);
  // Opening every record proves the storage key is the right one before serving.
  (void)store_.list();
  for (const auto& key : settings_.compute_clients) context_.allow("clients", key, "compute");
  for (const auto& key : settings_.admin_clients) context_.allow("clients", key, "admin");
  transport::LinkOptions client_options;
  // The largest frames: a job's blocks, an aes256-gcm key share, a GCM request's
  // kGcmHashPowers blocks of AAD and text (and small fields).
  const std::int64_t largest_body =
      std::max({static_cast<std::int64_t>(settings_.limits.max_job_blocks) * 16,
                static_cast<std::int64_t>(2 * wire::material_bytes(wire::KeyAlgorithm::Aes256Gcm)),
                static_cast<std::int64_t>(wire::kGcmHashPowers * 16)});
  client_options.max_message_bytes = largest_body + 4096;
  clients_ = std::make_unique<transport::Listener>(context_, settings_.client_endpoint, own_keys_, "clients",
                                                   client_options);
  peers_ = std::make_unique<PeerLinks>(context_, settings_, own_keys_);
  inline_evaluator_ = make_evaluator();
  for (std::size_t i = 0; i < kBatchesInFlight; ++i)
    workers_.push_back(std::make_unique<BatchWorker>(context_, settings_, own_keys_, prf_keys_,
                                                     make_evaluator(), batch_finished_, log_));
  // A one-instance circuit gains nothing from a GPU (a launch per layer) and would hold a
  // device workspace per worker: Kerberos batches always run on the CPU evaluator.
  for (std::size_t i = 0; i < kKrbBatchesInFlight; ++i)
    krb_workers_.push_back(std::make_unique<BatchWorker>(context_, settings_, own_keys_, prf_keys_,
                                                         rss3::make_cpu_evaluator(rss3::best_simd_level()),
                                                         batch_finished_, log_));
  if (settings_.party == 0) new_epoch();
  log_.info("serving", {{"party", settings_.party + 1},
                        {"clients", settings_.client_endpoint},
                        {"peers", settings_.peer_endpoint},
                        {"evaluator", make_evaluator()->name()},
                        {"batches_in_flight", static_cast<std::uint64_t>(kBatchesInFlight)},
                        {"krb_batches_in_flight", static_cast<std::uint64_t>(kKrbBatchesInFlight)},
                        {"stored_keys", static_cast<std::uint64_t>(store_.count())}});
}

std::unique_ptr<rss3::Evaluator> Server::make_evaluator() const {
  const bool gpu = settings_.backend == settings::EvaluatorBackend::Cuda ||
                   (settings_.backend == settings::EvaluatorBackend::Auto && cuda::cuda_device_available());
  return gpu ? cuda::make_cuda_evaluator(0) : rss3::make_cpu_evaluator(rss3::best_simd_level());
}

Server::~Server() {
  workers_.clear();  // joins the workers before the sockets they use go away
  krb_workers_.clear();
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
    flush_notes();
    drain_peer_messages();
    while (!notes_in_.empty()) {
      auto [from, notes] = std::move(notes_in_.front());
      notes_in_.pop_front();
      handle_notes(from, notes);
    }
    pass_agreement_deadlines();
    collect_results();
    if (settings_.party == 0) {
      for (;;) {
        auto header = form_batch(idle_worker(true) != nullptr, idle_worker(false) != nullptr);
        if (!header) break;
        lead_batch(std::move(*header));
      }
    } else {
      start_announced_batches();
    }
    flush_notes();
    const auto now = std::chrono::steady_clock::now();
    if (now - last_housekeeping > std::chrono::seconds(1)) {
      expire_jobs();
      nonce_pool_.expire(now);
      ledger_.expire(now);
      last_housekeeping = now;
    }
  }
  log_.info("stopping", {{"batches", batches_run_}, {"jobs", jobs_served_}});
}

BatchWorker* Server::idle_worker(bool krb) {
  for (auto& worker : krb ? krb_workers_ : workers_)
    if (worker->idle()) return worker.get();
  return nullptr;
}

// How long the loop may sleep on its sockets: not at all when a batch can start now, until
// the next request waiting for agreement is due, else until a socket or a finished batch
// wakes it.
std::chrono::milliseconds Server::idle_wait() {
  constexpr std::chrono::milliseconds kLongest{100};
  if (settings_.party != 0 && !announced_.empty() &&
      idle_worker(wire::is_krb_circuit(announced_.front().circuit)) != nullptr)
    return std::chrono::milliseconds(0);
  if (agreement_deadlines_.empty()) return kLongest;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(agreement_deadlines_.front().first -
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
    for (auto* pool : {&krb_workers_, &workers_})
      for (auto& worker : *pool) {
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
    } else if (auto* notes = std::get_if<std::vector<wire::RequestNote>>(&message)) {
      // Handled by the main loop, never inside a batch that the main thread is evaluating.
      notes_in_.emplace_back(envelope.from_party, std::move(*notes));
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
  reply(routing_id, error_reply(id, status, detail));
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
    const bool job = std::holds_alternative<wire::ComputeRequest>(request) ||
                     std::holds_alternative<wire::GcmPrefetchRequest>(request) ||
                     std::holds_alternative<wire::GcmTagRequest>(request) ||
                     std::holds_alternative<wire::GcmOpenRequest>(request) ||
                     std::holds_alternative<wire::KrbRequest>(request);
    if (job) {
      if (!admin && message.role != "compute") {
        reply_error(message.routing_id, id, wire::Status::Unauthorized, "this client may not compute");
        return;
      }
      const wire::RequestDigest digest = wire::request_digest(message.data);
      if (auto* compute = std::get_if<wire::ComputeRequest>(&request)) handle_compute(message, *compute, digest);
      if (auto* prefetch = std::get_if<wire::GcmPrefetchRequest>(&request))
        handle_gcm_prefetch(message, *prefetch, digest);
      if (auto* tag = std::get_if<wire::GcmTagRequest>(&request)) handle_gcm_tag(message, *tag, digest);
      if (auto* open = std::get_if<wire::GcmOpenRequest>(&request)) handle_gcm_open(message, *open, digest);
      if (auto* krb = std::get_if<wire::KrbRequest>(&request)) handle_krb(message, *krb, digest);
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
      status.request_mismatches = request_mismatches_;
      answer.body = status;
      reply(message.routing_id, std::move(answer));
      return;
    }
    if (auto* remove = std::get_if<wire::DeleteKeyRequest>(&request)) forget_key_material(remove->key);
    if (auto answer = answer_key_admin(request, message.role, store_, own_keys_, 2,
                                       "a replicated share (x then a): this is a three-server cluster (rss3)", log_))
      reply(message.routing_id, std::move(*answer));
  } catch (const Error& error) {
    log_.error("request failed", {{"error", error.what()}});
    reply_error(message.routing_id, id, wire::Status::Internal, error.what());
  }
}

void Server::handle_compute(transport::ReceivedMessage& message, wire::ComputeRequest& request,
                            const wire::RequestDigest& digest) {
  if (request.key.algorithm != wire::KeyAlgorithm::Aes128 && request.key.algorithm != wire::KeyAlgorithm::Aes256) {
    refuse_job(message, request.id, wire::Status::BadRequest,
                wire::describe(request.key) + " serves only the GCM requests");
    return;
  }
  Job job;
  job.kind = JobKind::Compute;
  job.key = request.key;
  job.instances = request.blocks;
  const wire::RequestId id = request.id;
  job.request = std::move(request);
  admit_job(message, id, std::move(job), digest,
            [](Job& admitted, const SecretBytes& share) { admitted.key_share = share; });
}

void Server::handle_gcm_prefetch(transport::ReceivedMessage& message, const wire::GcmPrefetchRequest& request,
                                 const wire::RequestDigest& digest) {
  if (request.key.algorithm != wire::KeyAlgorithm::Aes256Gcm) {
    refuse_job(message, request.id, wire::Status::BadRequest,
                "GCM prefetch needs an aes256-gcm key, not " + wire::describe(request.key));
    return;
  }
  if (request.count == 0 || request.count > wire::kMaxGcmPrefetchCount ||
      request.blocks_per_nonce > wire::kMaxGcmBlocksPerNonce) {
    refuse_job(message, request.id, wire::Status::BadRequest, "GCM prefetch size out of range");
    return;
  }
  // A nonce never spans batches, so its instances must fit in one.
  const std::uint64_t per_nonce = 1 + static_cast<std::uint64_t>(request.blocks_per_nonce);
  if (per_nonce > settings_.limits.max_batch_blocks) {
    refuse_job(message, request.id, wire::Status::TooLarge,
                std::to_string(request.blocks_per_nonce) + " blocks per nonce exceed max_batch_blocks " +
                    std::to_string(settings_.limits.max_batch_blocks) + " - 1");
    return;
  }
  // More nonces than the pool keeps per client would evict this very prefetch's first ones.
  if (request.count > settings_.limits.gcm_nonces_per_client) {
    refuse_job(message, request.id, wire::Status::TooLarge,
                "prefetch of " + std::to_string(request.count) + " nonces exceeds gcm_nonces_per_client " +
                    std::to_string(settings_.limits.gcm_nonces_per_client));
    return;
  }
  const std::uint64_t instances = per_nonce * request.count;
  if (instances > settings_.limits.max_job_blocks) {
    refuse_job(message, request.id, wire::Status::TooLarge,
                "prefetch of " + std::to_string(request.count) + " nonces x (1 + " +
                    std::to_string(request.blocks_per_nonce) + ") blocks exceeds max_job_blocks " +
                    std::to_string(settings_.limits.max_job_blocks));
    return;
  }
  Job job;
  job.kind = JobKind::GcmPrefetch;
  job.key = request.key;
  job.instances = static_cast<std::uint32_t>(instances);
  job.blocks_per_nonce = request.blocks_per_nonce;
  job.nonce_count = request.count;
  admit_job(message, request.id, std::move(job), digest, [](Job& admitted, const SecretBytes& share) {
    admitted.key_share = round_key_share(share, admitted.key.algorithm);
    const std::size_t keystream_bytes =
        static_cast<std::size_t>(admitted.nonce_count) * admitted.blocks_per_nonce * 16;
    admitted.masked_x.resize(keystream_bytes);
    admitted.masked_a.resize(keystream_bytes);
    admitted.nonces.resize(static_cast<std::size_t>(admitted.nonce_count) * wire::kGcmNonceBytes);
    admitted.nonce_shares.resize(static_cast<std::size_t>(admitted.nonce_count) * 32);
  });
}

const SecretBytes* Server::key_material(const wire::KeyId& key) {
  constexpr std::size_t kOpenKeys = 16;
  for (std::size_t i = 0; i < open_material_.size(); ++i) {
    if (open_material_[i].first == key) {
      std::rotate(open_material_.begin(), open_material_.begin() + static_cast<std::ptrdiff_t>(i),
                  open_material_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      return &open_material_.front().second;
    }
  }
  auto stored = store_.get(key);
  if (!stored) return nullptr;
  if (open_material_.size() == kOpenKeys) open_material_.pop_back();
  open_material_.emplace(open_material_.begin(), key, std::move(*stored));
  return &open_material_.front().second;
}

void Server::forget_key_material(const wire::KeyId& key) {
  std::erase_if(open_material_, [&](const auto& entry) { return entry.first == key; });
}

void Server::handle_gcm_tag(transport::ReceivedMessage& message, wire::GcmTagRequest& request,
                            const wire::RequestDigest& digest) {
  const JobKey key{message.sender, request.id};
  if (answer_known_request(message, key)) return;
  auto refuse = [&](wire::Status status, const std::string& detail) {
    reply_error(message.routing_id, request.id, status, detail);
    // Every other party answers the same: a tag is all or nothing.
    for (int party = 0; party < 3; ++party)
      if (party != settings_.party) outgoing_notes_.add(party, make_note(key, PartyWord{digest, status, detail}));
    ledger_.bury(key, Tombstone{status, detail, true, {}}, std::chrono::steady_clock::now());
  };
  if (request.key.algorithm != wire::KeyAlgorithm::Aes256Gcm) {
    refuse(wire::Status::BadRequest, "GCM tag needs an aes256-gcm key, not " + wire::describe(request.key));
    return;
  }
  if (rss3::ghash_blocks(request.aad.size(), request.text.size()) > wire::kGcmHashPowers) {
    refuse(wire::Status::BadRequest, "GCM tag input too long");
    return;
  }
  const SecretBytes* share = key_material(request.key);
  if (share == nullptr) {
    refuse(wire::Status::UnknownKey, wire::describe(request.key) + " not found");
    return;
  }
  if (share->size() != 2 * wire::material_bytes(request.key.algorithm)) {
    refuse(wire::Status::Internal, "stored share of " + wire::describe(request.key) + " has the wrong size");
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (!nonce_pool_.holds(message.sender, request.key, request.nonce, now)) {
    refuse(wire::Status::UnknownNonce, "nonce " + nonce_hex(request.nonce) +
                                           " is not one this client prefetched under " + wire::describe(request.key) +
                                           " on party " + std::to_string(settings_.party + 1) +
                                           ", or it was used, expired or evicted");
    return;
  }
  if (pending_tags_.size() >= settings_.limits.max_pending_jobs) {
    refuse(wire::Status::Busy, "too many pending tags");
    return;
  }
  PendingTag pending;
  pending.routing_id = message.routing_id;
  pending.words = ledger_.take_early(key);
  pending.words[static_cast<std::size_t>(settings_.party)] = PartyWord{digest, wire::Status::Ok, {}};
  pending.request = std::move(request);
  pending_tags_.emplace(key, std::move(pending));
  for (int party = 0; party < 3; ++party)
    if (party != settings_.party) outgoing_notes_.add(party, make_note(key, PartyWord{digest, wire::Status::Ok, {}}));
  agreement_deadlines_.emplace_back(now + settings_.limits.job_wait, key);
  settle_tag(key);
}

void Server::settle_tag(const JobKey& key) {
  auto it = pending_tags_.find(key);
  if (it == pending_tags_.end()) return;
  const Verdict verdict = judge(it->second.words, {0, 1, 2});
  if (verdict.consensus == Consensus::Waiting) return;
  if (verdict.consensus == Consensus::Agreed) {
    answer_tag(key);
    return;
  }
  count_refusal(verdict.status, key, verdict.detail);
  reply_error(it->second.routing_id, key.request, verdict.status, verdict.detail);
  pending_tags_.erase(it);
  ledger_.bury(key, Tombstone{verdict.status, verdict.detail, true, {}}, std::chrono::steady_clock::now());
}

void Server::answer_tag(const JobKey& key) {
  auto it = pending_tags_.find(key);
  const std::string routing_id = it->second.routing_id;
  const wire::GcmTagRequest request = std::move(it->second.request);
  const wire::RequestDigest digest = it->second.words[static_cast<std::size_t>(settings_.party)]->digest;
  pending_tags_.erase(it);
  const auto now = std::chrono::steady_clock::now();
  // Whatever happens below, this request id is spent.
  ledger_.bury(key, Tombstone{wire::Status::BadRequest, "request id already in use", true, {}}, now);
  const SecretBytes* share = key_material(request.key);
  if (share == nullptr || share->size() != 2 * wire::material_bytes(request.key.algorithm)) {
    reply_error(routing_id, request.id, wire::Status::UnknownKey, wire::describe(request.key) + " not found");
    return;
  }
  // GHASH first: a request that cannot be hashed must not use up the nonce.
  rss3::ByteShare tag = gcm_hash_share(*share, request.aad, request.text);
  const auto pooled = nonce_pool_.take(key.client, request.key, request.nonce, now);
  if (!pooled) {
    tag.wipe();
    reply_error(routing_id, request.id, wire::Status::UnknownNonce,
                "nonce " + nonce_hex(request.nonce) + " expired on party " + std::to_string(settings_.party + 1) +
                    " while the servers compared their copies of the request");
    return;
  }
  for (std::size_t i = 0; i < 16; ++i) {
    tag.x[i] ^= pooled->x[i];
    tag.a[i] ^= pooled->a[i];
  }
  // Re-randomise before opening, as for every output (rss3/output.hpp). The bare share
  // would be (GHASH share ^ pool share): its components are the stored shares of H^1..H^L
  // combined by coefficients the client chose, hidden only by this one pool share. The
  // masks use this nonce as their id (one tag per nonce, so no id is used twice) under keys
  // bound to the request's digest: a party that computed on another copy than its
  // neighbour uses masks its neighbour never uses, so its reply is uniform noise to the
  // client even if the copies' comparison above were bypassed.
  TagMaskKeys keys(prf_keys_, digest);
  rss3::CorrelatedRandomness masks(keys.own, keys.previous,
                                   {gcm_nonce_epoch(request.nonce), gcm_nonce_counter(request.nonce)});
  rss3::mask_output_share(masks, 0, tag);
  wire::GcmTagResult result;
  std::copy_n(tag.x.begin(), 16, result.x.begin());
  std::copy_n(tag.a.begin(), 16, result.a.begin());
  tag.wipe();
  wire::Reply answer;
  answer.id = request.id;
  answer.body = result;
  reply(routing_id, std::move(answer));
  ++jobs_served_;
}

void Server::handle_gcm_open(transport::ReceivedMessage& message, const wire::GcmOpenRequest& request,
                             const wire::RequestDigest& digest) {
  if (request.key.algorithm != wire::KeyAlgorithm::Aes256Gcm) {
    refuse_job(message, request.id, wire::Status::BadRequest,
                "GCM open needs an aes256-gcm key, not " + wire::describe(request.key));
    return;
  }
  if (rss3::ghash_blocks(request.aad.size(), request.text.size()) > wire::kGcmHashPowers) {
    refuse_job(message, request.id, wire::Status::BadRequest, "GCM open input too long");
    return;
  }
  const std::size_t text_blocks = (request.text.size() + 15) / 16;
  Job job;
  job.kind = JobKind::GcmOpen;
  job.key = request.key;
  job.instances = static_cast<std::uint32_t>(1 + text_blocks);
  job.nonce = request.nonce;
  admit_job(message, request.id, std::move(job), digest,
            [&request, text_blocks](Job& admitted, const SecretBytes& share) {
    admitted.key_share = round_key_share(share, admitted.key.algorithm);
    // Instance 0 compares AES_K(N || 1) with GHASH_H(aad, text) ^ tag: equal iff the tag is
    // right. The tag is public, so it joins the share as the constant sharing (0, tag).
    rss3::ByteShare check = gcm_hash_share(share, request.aad, request.text);
    admitted.tag_check.resize(32);
    for (std::size_t i = 0; i < 16; ++i) {
      admitted.tag_check[i] = check.x[i];
      admitted.tag_check[16 + i] = static_cast<std::uint8_t>(check.a[i] ^ request.tag[i]);
    }
    check.wipe();
    admitted.masked_x.resize(text_blocks * 16);
    admitted.masked_a.resize(text_blocks * 16);
  });
}

void Server::handle_krb(transport::ReceivedMessage& message, wire::KrbRequest& request,
                        const wire::RequestDigest& digest) {
  // The decoder has checked the request's form, usage and combine already; planning checks
  // again and names any problem all the same.
  KrbJobPlan plan;
  try {
    plan = plan_krb_job(request);
  } catch (const Error& error) {
    refuse_job(message, request.id, wire::Status::BadRequest, error.what());
    return;
  }
  Job job;
  job.kind = JobKind::Krb;
  job.key = request.key;
  job.instances = 1;
  job.krb_circuit = plan.circuit;
  job.krb_data = std::move(plan.public_record);
  job.krb_result_bytes = plan.result_bytes;
  const KrbSecretRange secret = plan.secret;
  admit_job(message, request.id, std::move(job), digest, [secret](Job& admitted, const SecretBytes& share) {
    admitted.key_share = krb_secret_rows(share, admitted.key.algorithm, secret);
  });
}

bool Server::answer_known_request(const transport::ReceivedMessage& message, const JobKey& key) {
  if (jobs_.count(key) != 0 || pending_tags_.count(key) != 0) {
    reply_error(message.routing_id, key.request, wire::Status::BadRequest, "request id already in use");
    return true;
  }
  Tombstone* tombstone = ledger_.tombstone(key);
  if (tombstone == nullptr) return false;
  if (tombstone->answered_here) {
    reply_error(message.routing_id, key.request, wire::Status::BadRequest, "request id already in use");
  } else {
    // Given up before this copy came: no batch will compute it, so it is answered at once.
    tombstone->answered_here = true;
    count_refusal(tombstone->status, key, tombstone->detail);
    reply_error(message.routing_id, key.request, tombstone->status, tombstone->detail);
  }
  return true;
}

void Server::admit_job(transport::ReceivedMessage& message, const wire::RequestId& id, Job job,
                       const wire::RequestDigest& digest,
                       const std::function<void(Job&, const SecretBytes&)>& prepare) {
  const JobKey key{message.sender, id};
  if (answer_known_request(message, key)) return;
  job.routing_id = message.routing_id;
  job.arrived = std::chrono::steady_clock::now();
  auto refuse = [&](wire::Status status, const std::string& detail) { refuse_job(message, id, status, detail); };
  if (job.instances > settings_.limits.max_job_blocks) {
    refuse(wire::Status::TooLarge, "job of " + std::to_string(job.instances) + " blocks exceeds max_job_blocks " +
                                       std::to_string(settings_.limits.max_job_blocks));
    return;
  }
  if (jobs_.size() >= settings_.limits.max_pending_jobs) {
    refuse(wire::Status::Busy, "too many pending jobs");
    return;
  }
  const SecretBytes* share = key_material(job.key);
  if (share == nullptr) {
    refuse(wire::Status::UnknownKey, wire::describe(job.key) + " not found");
    return;
  }
  if (share->size() != 2 * wire::material_bytes(job.key.algorithm)) {
    refuse(wire::Status::Internal, "stored share of " + wire::describe(job.key) + " has the wrong size");
    return;
  }
  prepare(job, *share);
  job.words = ledger_.take_early(key);
  job.words[static_cast<std::size_t>(settings_.party)] = PartyWord{digest, wire::Status::Ok, {}};
  jobs_.emplace(key, std::move(job));
  if (settings_.party == 0) {
    queue_.push_back(key);
    agreement_deadlines_.emplace_back(std::chrono::steady_clock::now() + settings_.limits.job_wait, key);
    settle_job(key);
  } else {
    outgoing_notes_.add(0, make_note(key, PartyWord{digest, wire::Status::Ok, {}}));
  }
}

void Server::refuse_job(transport::ReceivedMessage& message, const wire::RequestId& id, wire::Status status,
                        const std::string& detail) {
  const JobKey key{message.sender, id};
  if (answer_known_request(message, key)) return;
  reply_error(message.routing_id, id, status, detail);
  // The others must not compute what this server will not: the leader gives the request up
  // everywhere, a follower tells the leader, which does.
  if (settings_.party == 0) {
    give_up(key, status, "party 1 refused the request: " + detail);
  } else {
    outgoing_notes_.add(0, make_note(key, PartyWord{{}, status, detail}));
    ledger_.bury(key, Tombstone{status, detail, true, {}}, std::chrono::steady_clock::now());
  }
}

void Server::count_refusal(wire::Status status, const JobKey& key, const std::string& detail) {
  if (status != wire::Status::RequestMismatch) return;
  ++request_mismatches_;
  log_.warn("request refused: the servers' copies differ",
            {{"request", describe_request(key)}, {"detail", detail}});
}

void Server::handle_notes(int from, const std::vector<wire::RequestNote>& notes) {
  if (from < 0 || from >= 3 || from == settings_.party) return;
  const bool leader = settings_.party == 0;
  const auto now = std::chrono::steady_clock::now();
  for (const auto& note : notes) {
    const JobKey key{note.client, note.request};
    PartyWord word{note.digest, note.status, note.detail};
    if (auto tag = pending_tags_.find(key); tag != pending_tags_.end()) {
      auto& slot = tag->second.words[static_cast<std::size_t>(from)];
      if (!slot) slot = std::move(word);
      settle_tag(key);
      continue;
    }
    if (auto job = jobs_.find(key); job != jobs_.end()) {
      if (leader) {
        auto& slot = job->second.words[static_cast<std::size_t>(from)];
        if (!slot) slot = std::move(word);
        settle_job(key);
      } else if (from == 0 && word.status != wire::Status::Ok) {
        drop_job(key, word);
      }
      continue;
    }
    if (Tombstone* tombstone = ledger_.tombstone(key)) {
      // A follower's copy that came after the leader gave the request up: tell it again, so
      // it answers that copy at once.
      if (leader && word.status == wire::Status::Ok)
        outgoing_notes_.add(from, make_note(key, PartyWord{{}, tombstone->status, tombstone->detail}));
      continue;
    }
    if (!leader && from == 0 && word.status != wire::Status::Ok) {
      ledger_.bury(key, Tombstone{word.status, word.detail, false, {}}, now);
      continue;
    }
    const bool first = !ledger_.has_early(key);
    ledger_.keep_early(key, from, std::move(word), now);
    // The leader gives up on a request it has no copy of by job_wait after the first note.
    if (leader && first) agreement_deadlines_.emplace_back(now + settings_.limits.job_wait, key);
  }
}

void Server::settle_job(const JobKey& key) {
  auto it = jobs_.find(key);
  if (it == jobs_.end() || it->second.agreed) return;
  const Verdict verdict = judge(it->second.words, {0, 1, 2});
  switch (verdict.consensus) {
    case Consensus::Waiting: return;
    case Consensus::Agreed: it->second.agreed = true; return;
    case Consensus::Differ:
    case Consensus::Refused: give_up(key, verdict.status, verdict.detail); return;
  }
}

void Server::give_up(const JobKey& key, wire::Status status, const std::string& detail) {
  bool held = false;
  if (auto it = jobs_.find(key); it != jobs_.end()) {
    held = true;
    count_refusal(status, key, detail);
    reply_error(it->second.routing_id, key.request, status, detail);
    jobs_.erase(it);
  }
  if (auto tag = pending_tags_.find(key); tag != pending_tags_.end()) {
    held = true;
    count_refusal(status, key, detail);
    reply_error(tag->second.routing_id, key.request, status, detail);
    pending_tags_.erase(tag);
  }
  ledger_.bury(key, Tombstone{status, detail, held, {}}, std::chrono::steady_clock::now());
  for (int party = 1; party < 3; ++party) outgoing_notes_.add(party, make_note(key, PartyWord{{}, status, detail}));
}

void Server::drop_job(const JobKey& key, const PartyWord& word) {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return;
  count_refusal(word.status, key, word.detail);
  reply_error(it->second.routing_id, key.request, word.status, word.detail);
  jobs_.erase(it);
  ledger_.bury(key, Tombstone{word.status, word.detail, true, {}}, std::chrono::steady_clock::now());
}

void Server::pass_agreement_deadlines() {
  const auto now = std::chrono::steady_clock::now();
  while (!agreement_deadlines_.empty() && agreement_deadlines_.front().first <= now) {
    const JobKey key = agreement_deadlines_.front().second;
    agreement_deadlines_.pop_front();
    const CopyWords* words = nullptr;
    if (auto job = jobs_.find(key); job != jobs_.end() && !job->second.agreed) words = &job->second.words;
    auto tag = pending_tags_.find(key);
    if (tag != pending_tags_.end()) words = &tag->second.words;
    if (words == nullptr) {
      // The leader heard of a request it never received.
      if (settings_.party == 0 && ledger_.has_early(key) && jobs_.count(key) == 0)
        give_up(key, wire::Status::PeerFailure, "party 1 did not receive the request within " +
                                                    std::to_string(settings_.limits.job_wait.count()) + " ms");
      continue;
    }
    std::vector<int> silent;
    std::vector<int> spoken;
    for (int party = 0; party < 3; ++party)
      ((*words)[static_cast<std::size_t>(party)] ? spoken : silent).push_back(party + 1);
    for (int& party : spoken) --party;
    // Copies that differ already among those that came are a mismatch, silence or not.
    if (const Verdict partial = judge(*words, spoken); partial.consensus == Consensus::Differ) {
      if (tag != pending_tags_.end()) {
        count_refusal(partial.status, key, partial.detail);
        reply_error(tag->second.routing_id, key.request, partial.status, partial.detail);
        pending_tags_.erase(tag);
        ledger_.bury(key, Tombstone{partial.status, partial.detail, true, {}}, now);
      } else {
        give_up(key, partial.status, partial.detail);
      }
      continue;
    }
    std::string detail = "party";
    for (std::size_t i = 0; i < silent.size(); ++i) detail += (i == 0 ? " " : " and ") + std::to_string(silent[i]);
    detail += " did not confirm holding the request within " + std::to_string(settings_.limits.job_wait.count()) +
              " ms; nothing was computed";
    if (tag != pending_tags_.end()) {
      reply_error(tag->second.routing_id, key.request, wire::Status::PeerFailure, detail);
      pending_tags_.erase(tag);
      ledger_.bury(key, Tombstone{wire::Status::PeerFailure, detail, true, {}}, now);
    } else {
      give_up(key, wire::Status::PeerFailure, detail);
    }
  }
}

void Server::flush_notes() {
  if (outgoing_notes_.empty()) return;
  for (int party = 0; party < 3; ++party) {
    if (party == settings_.party) continue;
    for (const auto& frame : outgoing_notes_.take_frames(party))
      if (!peers_->send_to(party, frame)) log_.debug("notes not sent: peer unreachable", {{"party", party + 1}});
  }
}

void Server::new_epoch() {
  const std::uint64_t previous = epoch_;
  // 0 means "none seen" at followers; a new epoch must differ from the one it replaces.
  do {
    randombytes_buf(&epoch_, sizeof epoch_);
  } while (epoch_ == 0 || epoch_ == previous);
  sequence_ = 0;
  nonce_counter_.restart();
}

std::optional<wire::BatchHeader> Server::form_batch(bool krb_worker_idle, bool other_worker_idle) {
  while (!queue_.empty()) {
    auto it = jobs_.find(queue_.front());
    if (it != jobs_.end() && it->second.blocks_scheduled < it->second.instances) break;
    queue_.pop_front();
  }
  // The oldest job with instances left whose pool has an idle worker names the batch's group.
  const Job* first = nullptr;
  for (const JobKey& key : queue_) {
    auto it = jobs_.find(key);
    if (it == jobs_.end() || !it->second.agreed || it->second.blocks_scheduled >= it->second.instances) continue;
    if (is_krb_family(group_of(it->second).family) ? krb_worker_idle : other_worker_idle) {
      first = &it->second;
      break;
    }
  }
  if (first == nullptr) return std::nullopt;
  const BatchGroup group = group_of(*first);
  const std::uint32_t most = is_krb_family(group.family)
                                 ? std::min(settings_.limits.max_batch_blocks,
                                            max_krb_batch_jobs(static_cast<std::uint32_t>(first->krb_data.size())))
                                 : settings_.limits.max_batch_blocks;

  wire::BatchHeader header;
  std::uint32_t total = 0;
  std::uint32_t nonces = 0;
  for (const JobKey& key : queue_) {
    if (total == most) break;
    auto it = jobs_.find(key);
    if (it == jobs_.end()) continue;
    Job& job = it->second;
    if (!job.agreed || group_of(job) != group) continue;
    const std::uint32_t left = job.instances - job.blocks_scheduled;
    if (left == 0) continue;
    std::uint32_t take = std::min(left, most - total);
    std::uint32_t slice_nonces = 0;
    if (job.kind == JobKind::GcmPrefetch) {
      // Whole nonces only: every party must see all instances of a nonce in one batch.
      const std::uint32_t per_nonce = 1 + job.blocks_per_nonce;
      slice_nonces = take / per_nonce;
      if (slice_nonces == 0) continue;
      take = slice_nonces * per_nonce;
    }
    const wire::RequestDigest& digest = job.words[0]->digest;
    header.slices.push_back({key.client, key.request, digest, job.blocks_scheduled, take, 0, slice_nonces});
    job.blocks_scheduled += take;
    total += take;
    nonces += slice_nonces;
  }
  // Never reuse a PRF id or a nonce: a new epoch starts new id and nonce spaces. (Batches
  // of the old epoch that followers have not started yet are then dropped by them and fail
  // here by timeout; that happens once per 2^32 batches or nonces.)
  if (sequence_ == UINT32_MAX || !nonce_counter_.fits(nonces)) new_epoch();
  for (auto& slice : header.slices)
    if (slice.nonces != 0) slice.first_nonce = nonce_counter_.take(slice.nonces);
  header.epoch = epoch_;
  header.sequence = ++sequence_;
  switch (group.family) {
    case Family::GcmPrefetch:
    case Family::GcmOpen: header.circuit = gcm_circuit(group.family, settings_.limits); break;
    case Family::Krb:
      header.circuit = group.krb_circuit.id;
      header.data_bytes = group.krb_circuit.data_bytes;
      header.krb_combine = group.krb_circuit.combine;
      header.krb_evaluation = settings_.krb_evaluation == settings::KrbEvaluation::Garbled
                                  ? wire::KrbEvaluation::Garbled
                                  : wire::KrbEvaluation::Layered;
      break;
    default: {
      header.circuit = CircuitSet::choose(first->key.algorithm, first->request.operation == wire::Operation::EcbDecrypt,
                                          total, settings_.limits);
    }
  }
  return header;
}

void Server::lead_batch(wire::BatchHeader header) {
  const auto frame = wire::encode_batch(header);
  for (int party = 1; party < 3; ++party) {
    if (!peers_->send_to(party, frame)) {
      const std::string detail = "party " + std::to_string(party + 1) + " is unreachable";
      log_.warn("batch not started", {{"sequence", header.sequence}, {"error", detail}});
      abort_batch(header, wire::Status::PeerFailure, detail);
      return;
    }
  }
  start_batch(header, *idle_worker(wire::is_krb_circuit(header.circuit)));
}

void Server::start_announced_batches() {
  while (!announced_.empty()) {
    const wire::BatchHeader& front = announced_.front();
    BatchWorker* worker = idle_worker(wire::is_krb_circuit(front.circuit));
    if (worker == nullptr) return;
    // After a leader restart only its newest epoch matters: skip what it announced before.
    const bool superseded = std::any_of(announced_.begin() + 1, announced_.end(),
                                        [&](const wire::BatchHeader& later) { return later.epoch != front.epoch; });
    if (superseded || !accept_batch_nonce(front)) {
      announced_.pop_front();
      continue;
    }
    wire::BatchHeader header = std::move(announced_.front());
    announced_.pop_front();
    last_epoch_seen_ = header.epoch;
    last_sequence_seen_ = header.sequence;
    // The leader schedules a job only after this server's note said it holds the same copy,
    // so a copy missing or differing here means the leader did not wait for that note (or
    // this server lost the job): nobody may compute the batch.
    wire::Status status = wire::Status::Ok;
    if (const auto problem = copies_match(header, status)) {
      log_.warn("batch refused", {{"sequence", header.sequence}, {"error", *problem}});
      abort_batch(header, status, *problem);
      continue;
    }
    if (!accept_gcm_nonces(header)) {
      abort_batch(header, wire::Status::PeerFailure,
                  "party " + std::to_string(settings_.party + 1) + " refused the batch's GCM nonces");
      continue;
    }
    start_batch(header, *worker);
  }
}

std::optional<std::string> Server::copies_match(const wire::BatchHeader& header, wire::Status& status) const {
  const std::string party = "party " + std::to_string(settings_.party + 1);
  for (const auto& slice : header.slices) {
    const JobKey key{slice.client, slice.request};
    auto it = jobs_.find(key);
    if (it == jobs_.end()) {
      status = wire::Status::PeerFailure;
      return party + " holds no copy of request " + describe_request(key) + " named by the batch";
    }
    const auto& own = it->second.words[static_cast<std::size_t>(settings_.party)];
    if (!own || own->digest != slice.digest) {
      status = wire::Status::RequestMismatch;
      return party + "'s copy of request " + describe_request(key) + " differs from the leader's";
    }
  }
  return std::nullopt;
}

bool Server::accept_gcm_nonces(const wire::BatchHeader& header) {
  std::vector<NonceRange> ranges;
  for (const auto& slice : header.slices)
    if (slice.nonces != 0) ranges.push_back({slice.first_nonce, slice.nonces});
  if (ranges.empty()) return true;
  if (nonce_guard_.accept(header.epoch, ranges)) return true;
  log_.warn("GCM nonces already used refused", {{"sequence", header.sequence},
                                                {"first_nonce", static_cast<std::uint64_t>(ranges.front().first)}});
  return false;
}

bool Server::accept_batch_nonce(const wire::BatchHeader& header) {
  if (header.epoch == last_epoch_seen_ && header.sequence <= last_sequence_seen_) {
    log_.warn("replayed batch id refused", {{"sequence", header.sequence}});
    return false;
  }
  return true;
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
    count_refusal(status, it->first, detail);
    reply_error(it->second.routing_id, slice.request, status, detail);
    jobs_.erase(it);
  }
}

bool Server::slice_input(const wire::BatchHeader& header, const BatchTask& task, const wire::BatchSlice& slice,
                         const Job& job, SliceInput& input) const {
  const wire::CircuitId circuit = header.circuit;
  const bool krb_circuit = wire::is_krb_circuit(circuit);
  if (static_cast<std::uint64_t>(slice.first_block) + slice.blocks > job.instances) return false;
  if (job.key_share.size() != 2 * task.key_rows / 8) return false;
  const std::size_t bytes = static_cast<std::size_t>(slice.blocks) * 16;
  switch (job.kind) {
    case JobKind::Compute:
      if (krb_circuit || slice.nonces != 0 || is_tag_check(circuit) || job.key.algorithm != algorithm_of(circuit) ||
          (job.request.operation == wire::Operation::EcbDecrypt) != is_decrypt(circuit))
        return false;
      input.public_records.resize(bytes);
      public_blocks(job.request, slice.first_block, slice.blocks, input.public_records);
      break;
    case JobKind::GcmPrefetch: {
      const std::uint64_t per_nonce = 1 + static_cast<std::uint64_t>(job.blocks_per_nonce);
      if (!is_aes256_encrypt(circuit) || slice.nonces == 0 ||
          static_cast<std::uint64_t>(slice.nonces) * per_nonce != slice.blocks)
        return false;
      input.public_records.resize(bytes);
      prefetch_blocks(header.epoch, slice.first_nonce, slice.nonces, static_cast<std::uint32_t>(per_nonce),
                      input.public_records);
      input.keep_every = static_cast<std::uint32_t>(per_nonce);
      break;
    }
    case JobKind::GcmOpen:
      if (!is_tag_check(circuit) || slice.nonces != 0 || job.tag_check.size() != 32) return false;
      input.public_records.resize(bytes);
      open_blocks(job.nonce, slice.first_block, slice.blocks, input.public_records);
      // Shares of zero everywhere but instance 0: the other instances only make keystream.
      input.secret_records.resize(2 * bytes);
      std::fill(input.secret_records.data(), input.secret_records.data() + 2 * bytes, std::uint8_t{0});
      if (slice.first_block == 0) {
        std::memcpy(input.secret_records.data(), job.tag_check.data(), 16);
        std::memcpy(input.secret_records.data() + bytes, job.tag_check.data() + 16, 16);
      }
      break;
    case JobKind::Krb:
      // One instance; the circuit must be the one this job's request needs.
      if (slice.first_block != 0 || slice.blocks != 1 || slice.nonces != 0) return false;
      if (KrbCircuitKey{circuit, header.data_bytes, header.krb_combine} != job.krb_circuit) return false;
      if (job.krb_data.size() != task.public_bytes) return false;
      input.public_records = job.krb_data;
      break;
  }
  input.key_share = job.key_share;
  return true;
}

bool Server::prepare_task(const wire::BatchHeader& header, BatchTask& task, std::string& error) {
  if (wire::is_krb_circuit(header.circuit)) {
    // The worker takes the program from the cache, compiling it there if needed.
    try {
      const KrbBatchLayout layout = krb_batch_layout(header.circuit, header.data_bytes, header.krb_combine);
      task.key_rows = layout.key_rows;
      task.public_bytes = layout.public_bytes;
      task.secret_bytes = 0;
      task.krb_circuits =
          header.krb_evaluation == wire::KrbEvaluation::Garbled ? &krb_garbled_circuits_ : &krb_circuits_;
      return true;
    } catch (const Error& failure) {
      error = failure.what();
      return false;
    }
  }
  // The fixed circuits live as long as the server: a pointer that owns nothing.
  task.program = std::shared_ptr<const circuits::Program>(std::shared_ptr<const circuits::Program>(),
                                                          &circuits_.program(header.circuit));
  task.key_rows = CircuitSet::key_rows(header.circuit);
  task.public_bytes = 16;
  task.secret_bytes = is_tag_check(header.circuit) ? 16 : 0;
  return true;
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

  if (wire::is_krb_circuit(header.circuit) &&
      (instances > max_krb_batch_jobs(header.data_bytes) ||
       static_cast<std::uint64_t>(instances) * header.data_bytes > kMaxKrbBatchDataBytes)) {
    log_.warn("batch refused", {{"sequence", header.sequence},
                                {"instances", static_cast<std::uint64_t>(instances)},
                                {"data_bytes", static_cast<std::uint64_t>(header.data_bytes)}});
    abort_batch(header, wire::Status::TooLarge,
                "Kerberos batch size refused by party " + std::to_string(settings_.party + 1));
    return;
  }

  BatchTask task;
  task.header = header;
  task.instances = instances;
  std::string error;
  if (!prepare_task(header, task, error)) {
    log_.error("batch circuit not built", {{"sequence", header.sequence}, {"error", error}});
    abort_batch(header, wire::Status::Internal,
                "party " + std::to_string(settings_.party + 1) + " cannot build the batch's circuit: " + error);
    return;
  }
  for (const auto& slice : header.slices) {
    SliceInput input;
    input.blocks = slice.blocks;
    auto it = jobs_.find(JobKey{slice.client, slice.request});
    if (it == jobs_.end() || !slice_input(header, task, slice, it->second, input)) {
      const std::string detail = "party " + std::to_string(settings_.party + 1) + ": request " +
                                 describe_request(JobKey{slice.client, slice.request}) +
                                 " does not fit the batch the leader scheduled";
      log_.warn("batch refused", {{"sequence", header.sequence}, {"error", detail}});
      abort_batch(header, wire::Status::BadRequest, detail);
      return;
    }
    task.slices.push_back(std::move(input));
  }
  const BatchTag tag{header.epoch, header.sequence};
  // Kerberos circuits are deep (hundreds to thousands of layers): on the main thread one
  // would hold up every reply and the layer messages of the other batch in flight.
  if (!wire::is_krb_circuit(header.circuit) && instances <= settings_.limits.latency_batch_blocks) {
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
  for (auto* pool : {&krb_workers_, &workers_})
    for (auto& worker : *pool)
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
  for (std::size_t index = 0; index < header.slices.size(); ++index) {
    const auto& slice = header.slices[index];
    auto it = jobs_.find(JobKey{slice.client, slice.request});
    if (it != jobs_.end()) {
      try {
        add_slice_result(it->second, header, slice, result, index, offset);
        if (it->second.blocks_done == it->second.instances) complete_job(it);
      } catch (const Error& error) {
        log_.error("batch result does not fit its job", {{"sequence", header.sequence}, {"error", error.what()}});
        reply_error(it->second.routing_id, slice.request, wire::Status::Internal, error.what());
        jobs_.erase(it);
      }
    }
    offset += slice.blocks;
  }
  ++batches_run_;
  payload_bytes_sent_ += result.stats.bytes_sent;
  layer_messages_sent_ += result.stats.layers_exchanged;
  and_gates_evaluated_ += result.and_gates * offset;
  log_.debug("batch done", {{"sequence", header.sequence},
                            {"circuit", static_cast<std::uint64_t>(header.circuit)},
                            {"data_bytes", static_cast<std::uint64_t>(header.data_bytes)},
                            {"and_gates", static_cast<std::uint64_t>(result.and_gates)},
                            {"and_depth", static_cast<std::uint64_t>(result.and_depth)},
                            {"evaluation", header.krb_evaluation == wire::KrbEvaluation::Garbled ? "garbled" : "layered"},
                            {"instances", static_cast<std::uint64_t>(offset)},
                            {"layers", result.stats.layers_exchanged},
                            {"bytes_sent", result.stats.bytes_sent},
                            {"micros", static_cast<std::int64_t>(result.elapsed.count())}});
}

void Server::add_slice_result(Job& job, const wire::BatchHeader& header, const wire::BatchSlice& slice,
                              const BatchResult& result, std::size_t slice_index, std::size_t offset) {
  const std::size_t record = result.record_bytes;
  const auto masked_x = [&](std::size_t instance) { return result.masked.x.data() + (offset + instance) * record; };
  const auto masked_a = [&](std::size_t instance) { return result.masked.a.data() + (offset + instance) * record; };
  // The AES circuits give one 16-byte block per instance (and the tag check one bit after it).
  if (job.kind != JobKind::Krb && record != (job.kind == JobKind::GcmOpen ? 17u : 16u))
    throw Error(Component::Server, "output records of " + std::to_string(record) + " bytes for an AES job");
  switch (job.kind) {
    case JobKind::Compute: {
      if (job.masked_x.empty()) {
        job.masked_x.resize(static_cast<std::size_t>(job.instances) * 16);
        job.masked_a.resize(static_cast<std::size_t>(job.instances) * 16);
      }
      const std::size_t at = static_cast<std::size_t>(slice.first_block) * 16;
      std::memcpy(job.masked_x.data() + at, masked_x(0), slice.blocks * 16ull);
      std::memcpy(job.masked_a.data() + at, masked_a(0), slice.blocks * 16ull);
      break;
    }
    case JobKind::GcmPrefetch: {
      // Instance 0 of each nonce (AES_K(N || 1)) stays with this server; the client gets the
      // nonce and its keystream only.
      const std::size_t per_nonce = 1 + static_cast<std::size_t>(job.blocks_per_nonce);
      const std::size_t first = slice.first_block / per_nonce;
      const SecretBytes& kept = result.kept[slice_index];
      if (kept.size() != static_cast<std::size_t>(slice.nonces) * 32)
        throw Error(Component::Server, "GCM prefetch slice kept " + std::to_string(kept.size()) + " bytes for " +
                                           std::to_string(slice.nonces) + " nonces");
      for (std::size_t k = 0; k < slice.nonces; ++k) {
        const std::size_t q = first + k;
        const auto nonce = make_gcm_nonce(header.epoch, slice.first_nonce + static_cast<std::uint32_t>(k));
        std::memcpy(job.nonces.data() + q * wire::kGcmNonceBytes, nonce.data(), wire::kGcmNonceBytes);
        std::memcpy(job.nonce_shares.data() + q * 32, kept.data() + k * 32, 32);
        const std::size_t bytes = static_cast<std::size_t>(job.blocks_per_nonce) * 16;
        std::memcpy(job.masked_x.data() + q * bytes, masked_x(k * per_nonce + 1), bytes);
        std::memcpy(job.masked_a.data() + q * bytes, masked_a(k * per_nonce + 1), bytes);
      }
      break;
    }
    case JobKind::GcmOpen:
      // Only the verdict of instance 0 and the outputs of the others are answered: the output
      // of instance 0 is AES_K(N || 1), the verdicts of the others mean nothing.
      for (std::size_t t = 0; t < slice.blocks; ++t) {
        const std::size_t instance = slice.first_block + t;
        if (instance == 0) {
          // The verdict is output 128: bit 0 of the record's last byte.
          job.verdict_x = static_cast<std::uint8_t>(masked_x(t)[16] & 1);
          job.verdict_a = static_cast<std::uint8_t>(masked_a(t)[16] & 1);
        } else {
          std::memcpy(job.masked_x.data() + (instance - 1) * 16, masked_x(t), 16);
          std::memcpy(job.masked_a.data() + (instance - 1) * 16, masked_a(t), 16);
        }
      }
      break;
    case JobKind::Krb: {
      // The output record is the result: ciphertext || MAC, plaintext || verdict byte, MAC
      // or PRF block (krb_jobs.hpp).
      const std::size_t bytes = job.krb_result_bytes;
      if (record != bytes || slice.blocks != 1)
        throw Error(Component::Server, "Kerberos output record of " + std::to_string(record) + " bytes, expected " +
                                           std::to_string(bytes));
      job.masked_x.assign(masked_x(0), masked_x(0) + bytes);
      job.masked_a.assign(masked_a(0), masked_a(0) + bytes);
      break;
    }
  }
  job.blocks_done += slice.blocks;
}

void Server::complete_job(std::map<JobKey, Job>::iterator it) {
  Job& job = it->second;
  wire::Reply answer;
  answer.id = it->first.request;
  switch (job.kind) {
    case JobKind::Compute:
      answer.body = wire::ComputeResult{job.instances, std::move(job.masked_x), std::move(job.masked_a)};
      break;
    case JobKind::GcmPrefetch: {
      const auto now = std::chrono::steady_clock::now();
      for (std::size_t q = 0; q < job.nonce_count; ++q) {
        wire::GcmNonce nonce{};
        std::memcpy(nonce.data(), job.nonces.data() + q * wire::kGcmNonceBytes, wire::kGcmNonceBytes);
        NonceShare share;
        std::memcpy(share.x.data(), job.nonce_shares.data() + q * 32, 16);
        std::memcpy(share.a.data(), job.nonce_shares.data() + q * 32 + 16, 16);
        if (!nonce_pool_.put(it->first.client, job.key, nonce, share, now))
          log_.warn("GCM nonce computed twice, dropped", {{"nonce", nonce_hex(nonce)}});
      }
      job.nonce_shares.clear();
      answer.body = wire::GcmPrefetchResult{job.nonce_count, job.blocks_per_nonce, std::move(job.nonces),
                                            std::move(job.masked_x), std::move(job.masked_a)};
      break;
    }
    case JobKind::GcmOpen:
      answer.body = wire::GcmOpenResult{job.instances - 1, std::move(job.masked_x), std::move(job.masked_a),
                                        job.verdict_x, job.verdict_a};
      break;
    case JobKind::Krb:
      job.key_share.clear();
      answer.body = wire::KrbResult{std::move(job.masked_x), std::move(job.masked_a)};
      break;
  }
  reply(job.routing_id, std::move(answer));
  jobs_.erase(it);
  ++jobs_served_;
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
