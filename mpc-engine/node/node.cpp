#include "node/node.hpp"

#include <algorithm>
#include <variant>

#include "common/error.hpp"
#include "node/key_admin.hpp"
#include "wire/krb_record_mask.hpp"
#include "wire/sealed_share.hpp"

namespace mpc::node {
namespace {

constexpr std::size_t kMaxRequestsPerDrain = 4096;
// How long the shell's thread may wait to write an answer on a client's data link: a client
// that stops reading loses its link rather than holding up everyone else's answers.
constexpr std::chrono::milliseconds kClientReplyLimit{250};
// How long tombstones and notes about requests this server never received are kept.
constexpr auto kLedgerLifetime = std::chrono::seconds(30);

bool is_job(const wire::Request& request) {
  return std::holds_alternative<wire::ComputeRequest>(request) ||
         std::holds_alternative<wire::GcmPrefetchRequest>(request) ||
         std::holds_alternative<wire::GcmTagRequest>(request) ||
         std::holds_alternative<wire::GcmOpenRequest>(request) || std::holds_alternative<wire::KrbRequest>(request) ||
         std::holds_alternative<wire::GcmReopenRequest>(request) ||
         std::holds_alternative<wire::GenerateKeyRequest>(request);
}

// Answered by each server from its own copy at once, compared afterwards (request_agreement.hpp).
bool answered_at_once(const wire::Request& request) {
  return std::holds_alternative<wire::GcmTagRequest>(request) || std::holds_alternative<wire::GcmReopenRequest>(request);
}

// Notes and hellos (peer_messages.hpp) are the shell's; every other peer frame is an engine's.
bool is_shell_frame(const std::vector<std::uint8_t>& frame) {
  return frame.size() >= 2 && frame[0] == wire::kPeerProtocolVersion &&
         (frame[1] == static_cast<std::uint8_t>(wire::PeerMessageType::Notes) ||
          frame[1] == static_cast<std::uint8_t>(wire::PeerMessageType::Hello) ||
          frame[1] == static_cast<std::uint8_t>(wire::PeerMessageType::PairChecks));
}

Serving all_parties(const settings::ServerSettings& settings) {
  Serving serving;
  serving.parties.push_back(settings.party);
  for (const auto& peer : settings.peers) serving.parties.push_back(peer.party);
  std::sort(serving.parties.begin(), serving.parties.end());
  serving.leader = 0;
  return serving;
}

// Every stored share must have the form the engine computes with: a store written for
// another kind of cluster is refused before serving, not at its first job.
void check_store_form(store::ShareStore& store, const Engine& engine, const settings::ServerSettings& settings) {
  for (const auto& stored : store.list()) {
    auto share = store.get(stored.key);
    const std::size_t material = engine.share_copies() * wire::material_bytes(stored.key.algorithm);
    if (!share || share->size() == material) continue;
    // With its checks, of this release's form or the one before.
    if (engine.share_copies() == 1 && (share->size() == material + wire::share_check_bytes(stored.key.algorithm) ||
                                       share->size() == material + wire::kEarlierShareCheckBytes))
      continue;
    if (engine.share_copies() == 1)
      throw Error(Component::Server, wire::describe(stored.key) + " is stored as a three-server share: convert the " +
                                         "store with mpc-server --convert-from-rss3 before serving " +
                                         settings::protocol_name(settings.protocol));
    throw Error(Component::Server, wire::describe(stored.key) + " is not stored as a three-server share (" +
                                       std::to_string(share->size()) + " bytes): this store belongs to " +
                                       "another kind of cluster");
  }
}

}  // namespace

Node::Node(settings::ServerSettings settings, const Logger& log, const EngineFactory& make_engine,
           EngineFactory make_pair_engine)
    : settings_(std::move(settings)),
      log_(log),
      own_keys_(transport::read_secret_key_file(settings_.secret_key_file)),
      store_(settings_.storage_path, store::read_storage_key_file(settings_.storage_key_file)),
      epochs_(store::epoch_ledger_path(settings_.storage_path)),
      key_cache_(store_, settings_.protocol == settings::Protocol::Rss3 ? 2 : 1),
      serving_(all_parties(settings_)),
      make_pair_engine_(std::move(make_pair_engine)),
      ledger_(2 * static_cast<std::size_t>(settings_.limits.max_pending_jobs), kLedgerLifetime) {
  // Opening every record proves the storage key is the right one before serving.
  (void)store_.list();
  // The engine checks the store and runs its self-tests before any socket is bound: a server
  // that must not serve never takes its ports.
  transport::LinkOptions client_options;
  // The largest frames: a job's blocks, a sealed replicated share of an aes256-gcm key, a GCM
  // request's kGcmHashPowers blocks of AAD and text (and small fields).
  const std::int64_t largest_body = std::max(
      {static_cast<std::int64_t>(settings_.limits.max_job_blocks) * 16,
       static_cast<std::int64_t>(2 * wire::material_bytes(wire::KeyAlgorithm::Aes256Gcm) + wire::kSealedShareOverhead),
       static_cast<std::int64_t>(wire::kGcmHashPowers * 16)});
  client_options.max_message_bytes = largest_body + 4096;
  if (settings_.protocol == settings::Protocol::Rss3 && !settings_.data_endpoint.empty())
    client_links_ = std::make_unique<ClientLinks>(settings_.compute_clients, settings_.enrol_clients, settings_.admin_clients,
                                                  static_cast<std::uint32_t>(client_options.max_message_bytes), log_);
  engine_ = make_engine(
      EngineResources{settings_, log_, own_keys_, context_, store_, epochs_, *this, nullptr, client_links_.get()});
  check_store_form(store_, *engine_, settings_);
  if (settings_.protocol == settings::Protocol::Rss3) {
    const MembershipTiming timing{settings_.limits.heartbeat, settings_.limits.peer_down, settings_.limits.rejoin};
    const bool two_party = settings_.degraded_service == settings::DegradedService::TwoParty && make_pair_engine_;
    membership_.emplace(settings_.party, timing, two_party, std::chrono::steady_clock::now());
    pair_checks_.emplace(settings_.party, own_keys_, store_, log_);
    load_exclusion();
  }
  mode_since_unix_ms_ = unix_ms_now();
  // A key in several lists gets the last role allowed: the widest.
  for (const auto& key : settings_.compute_clients) context_.allow("clients", key, "compute");
  for (const auto& key : settings_.enrol_clients) context_.allow("clients", key, "enrol");
  for (const auto& key : settings_.admin_clients) context_.allow("clients", key, "admin");
  clients_ = std::make_unique<transport::Listener>(context_, settings_.client_endpoint, own_keys_, "clients",
                                                   client_options);
  peers_ = std::make_unique<PeerLinks>(context_, settings_, own_keys_, log_);
  if (!settings_.metrics_listen.empty()) {
    metrics_ = std::make_unique<MetricsEndpoint>(settings_.metrics_listen, log_);
    log_.info("metrics served", {{"listen", metrics_->bound()}});
  }
  if (membership_) peers_->check_liveness_with([this](int party) { return peer_alive(party); });
  build_pairs();
  log_.info("serving", {{"party", settings_.party + 1},
                        {"engine", engine_->name()},
                        {"clients", settings_.client_endpoint},
                        {"peers", settings_.peer_endpoint},
                        {"stored_keys", static_cast<std::uint64_t>(store_.count())}});
}

Node::~Node() {
  pair_ = nullptr;
  // Each pair engine's workers may wait out a peer timeout: both at once.
  std::vector<std::thread> stopping;
  for (auto& service : pairs_)
    if (service) stopping.emplace_back([service = std::move(service)]() mutable { service.reset(); });
  for (auto& thread : stopping) thread.join();
  engine_.reset();
}

void Node::run(const std::atomic<bool>& stop) {
  auto last_housekeeping = std::chrono::steady_clock::now();
  while (!stop.load()) {
    std::vector<void*> sockets{clients_->native(), peers_->listener_socket()};
    std::vector<int> descriptors;
    std::vector<Engine*> engines = standing_pairs();
    engines.push_back(&active());
    for (const Engine* engine : engines) {
      for (void* socket : engine->sockets()) sockets.push_back(socket);
      for (const int descriptor : engine->descriptors()) descriptors.push_back(descriptor);
    }
    if (client_links_)
      for (const int descriptor : client_links_->descriptors()) descriptors.push_back(descriptor);
    if (metrics_)
      for (const int descriptor : metrics_->descriptors()) descriptors.push_back(descriptor);
    // Only what the poll found ready is read: a receive on an idle ZeroMQ socket costs system
    // calls of its own, and most turns of this loop come for one client's data link.
    std::vector<int> readable;  // a client's link is read only when it has bytes
    bool clients_ready = false;
    bool peers_ready = false;
    const auto wait = client_links_ && client_links_->buffered() ? std::chrono::milliseconds(0) : idle_wait();
    for (const std::size_t index : transport::wait_readable(sockets, descriptors, wait)) {
      if (index >= sockets.size()) readable.push_back(descriptors[index - sockets.size()]);
      clients_ready = clients_ready || index == 0;
      peers_ready = peers_ready || index == 1;
    }
    for (std::size_t i = 0; clients_ready && i < kMaxRequestsPerDrain; ++i) {
      auto message = clients_->receive(std::chrono::milliseconds(0));
      if (!message) break;
      if (ClientLinks::is_link_id(message->routing_id)) continue;  // not ZeroMQ's: its answer would go astray
      handle_client_message(*message);
    }
    if (client_links_)
      client_links_->receive(readable, kMaxRequestsPerDrain, [this](transport::ReceivedMessage& message) {
        handle_client_message(message);
      });
    if (metrics_) metrics_->serve(readable, [this] { return metrics_text(); }, std::chrono::steady_clock::now());
    flush_notes(std::chrono::steady_clock::now());
    while (peers_ready) {
      auto envelope = peers_->receive(std::chrono::milliseconds(0));
      if (!envelope) break;
      if (envelope->from_party < 0 || shuns(envelope->from_party)) continue;
      // In two-party service the third server's three-party frames have no engine to go to.
      if (!take_shell_frame(*envelope) && !pair_) engine_->take_peer_frame(std::move(*envelope));
    }
    while (!notes_in_.empty()) {
      auto [from, notes] = std::move(notes_in_.front());
      notes_in_.pop_front();
      handle_notes(from, notes);
    }
    const auto now = std::chrono::steady_clock::now();
    tend_membership(now);
    tend_pair_checks(now);
    pass_deadlines(now);
    remind_leader(now);
    active().step(now);
    for (Engine* standing : standing_pairs()) standing->step(now);
    if (pair_ != nullptr) engine_->finish_running();
    flush_notes(now);
    if (now - last_housekeeping > std::chrono::seconds(1)) {
      ledger_.expire(now);
      last_housekeeping = now;
    }
  }
  log_.info("stopping", {{"jobs", jobs_served_}});
}

std::chrono::milliseconds Node::idle_wait() const {
  std::chrono::milliseconds wait = active().idle_wait();
  for (const Engine* standing : standing_pairs()) wait = std::min(wait, standing->idle_wait());
  if (membership_) wait = std::min(wait, settings_.limits.heartbeat);
  for (const auto* due : {&deadlines_, &reminders_}) {
    if (due->empty()) continue;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(due->front().first -
                                                                            std::chrono::steady_clock::now());
    wait = std::min(wait, std::max(left + std::chrono::milliseconds(1), std::chrono::milliseconds(0)));
  }
  if (const auto due = outgoing_notes_.next_due()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(*due, std::chrono::steady_clock::now()) - std::chrono::steady_clock::now());
    wait = std::min(wait, left + std::chrono::milliseconds(1));
  }
  return wait;
}

const SecretBytes* Node::key_material(const wire::KeyId& key) { return key_cache_.get(key); }

const SecretBytes* Node::key_share_check(const wire::KeyId& key) { return key_cache_.share_check(key); }

bool Node::take_shell_frame(PeerEnvelope& envelope) {
  if (membership_) membership_->heard(envelope.from_party, std::chrono::steady_clock::now());
  if (auto inner = wire::unwrap_degraded(envelope.data)) {
    take_pair_frame(envelope.from_party, *inner);
    return true;
  }
  if (!is_shell_frame(envelope.data)) return false;
  try {
    auto message = wire::decode_peer_message(envelope.data);
    if (auto* notes = std::get_if<std::vector<wire::RequestNote>>(&message))
      notes_in_.emplace_back(envelope.from_party, std::move(*notes));
    if (auto* hello = std::get_if<wire::Hello>(&message); hello && membership_) {
      const auto now = std::chrono::steady_clock::now();
      membership_->hello(envelope.from_party, *hello, now);
      follow_peers_readmission(now);
      follow_peers_exclusion(now);
    }
    if (auto* deals = std::get_if<std::vector<wire::PairCheckDeal>>(&message); deals && pair_checks_)
      pair_checks_->take(envelope.from_party, std::move(*deals));
  } catch (const FormatError& error) {
    log_.warn("malformed peer message", {{"from", envelope.from_party + 1}, {"error", error.what()}});
  }
  return true;
}

void Node::send_reply(const std::string& routing_id, const wire::Reply& reply) {
  if (client_links_ && ClientLinks::is_link_id(routing_id)) {
    if (!client_links_->send(routing_id, wire::encode_reply(reply),
                             std::chrono::steady_clock::now() + kClientReplyLimit))
      log_.debug("client gone before reply", {{"status", wire::status_name(reply.status)}});
    return;
  }
  if (!clients_->send(routing_id, wire::encode_reply(reply)))
    log_.debug("client gone before reply", {{"status", wire::status_name(reply.status)}});
}

void Node::answer(const JobKey& key, wire::Reply reply) {
  auto it = live_.find(key);
  if (it == live_.end() || it->second.held) return;  // answered or given up already
  if (reply.status == wire::Status::Ok) ++jobs_served_;
  if (!it->second.local) note_answer(it->second.kind, reply.status);
  reply.status = failure_status(reply.status);
  job_metrics_.answered(it->second.kind, reply.status, std::chrono::steady_clock::now() - it->second.arrived);
  count_refusal(reply.status, key, reply.error);
  send_reply(it->second.routing_id, reply);
  if (it->second.local) {
    // A GCM tag's id stays spent: its nonce is gone here. The others' notes on it, which
    // come after this answer, are checked against the copy answered.
    Tombstone spent{wire::Status::BadRequest, "request id already in use", true};
    if (const auto& own = it->second.words[static_cast<std::size_t>(settings_.party)]) spent.answered_copy = own->digest;
    live_.erase(it);
    ledger_.bury(key, std::move(spent), std::chrono::steady_clock::now());
    return;
  }
  // A failure is remembered, so that a mode switch passes it on (pass_on_refusals).
  if (reply.status != wire::Status::Ok)
    ledger_.bury(key, Tombstone{reply.status, reply.error, true}, std::chrono::steady_clock::now());
  live_.erase(it);
}

void Node::forget(const JobKey& key) {
  auto it = live_.find(key);
  if (it != live_.end() && !it->second.held) live_.erase(it);
}

void Node::count_refusal(wire::Status status, const JobKey& key, const std::string& detail) {
  if (status == wire::Status::VerificationFailed) {
    ++verification_failures_;
    log_.error("request refused: a server's messages failed verification",
               {{"request", describe_request(key)}, {"detail", detail}});
    return;
  }
  if (status != wire::Status::RequestMismatch) return;
  ++request_mismatches_;
  log_.warn("request refused: the servers' copies differ", {{"request", describe_request(key)}, {"detail", detail}});
}

void Node::handle_client_message(transport::ReceivedMessage& message) {
  wire::Request request;
  try {
    request = wire::decode_request(message.data);
  } catch (const FormatError& error) {
    log_.warn("malformed request", {{"error", error.what()}});
    send_reply(message.routing_id,
               error_reply(salvage_request_id(message.data), wire::Status::BadRequest, error.what()));
    return;
  }
  const wire::RequestId id = wire::request_id(request);
  try {
    if (is_job(request)) {
      if (std::holds_alternative<wire::GenerateKeyRequest>(request) && message.role != "admin") {
        send_reply(message.routing_id,
                   error_reply(id, wire::Status::Unauthorized, "generating a key needs an admin client key"));
        return;
      }
      if (message.role != "admin" && message.role != "compute") {
        send_reply(message.routing_id, error_reply(id, wire::Status::Unauthorized, "this client may not compute"));
        return;
      }
      handle_job(message, std::move(request));
      return;
    }
    handle_admin(message, request);
  } catch (const Error& error) {
    log_.error("request failed", {{"error", error.what()}});
    send_reply(message.routing_id, error_reply(id, wire::Status::Internal, error.what()));
  }
}

wire::ServerStatus Node::status() {
  wire::ServerStatus status;
  status.party = static_cast<std::uint8_t>(settings_.party);
  status.jobs = jobs_served_;
  status.stored_keys = static_cast<std::uint32_t>(store_.count());
  status.request_mismatches = request_mismatches_;
  status.verification_failures = verification_failures_;
  engine_->fill_status(status);
  if (membership_) {
    const ModeChange serving = serving_mode();
    status.mode = serving.mode;
    status.missing_party = serving.missing < 0 ? wire::kNoParty : static_cast<std::uint8_t>(serving.missing);
  }
  status.mode_since_unix_ms = mode_since_unix_ms_;
  status.mode_switches = mode_switches_;
  if (exclusion_) {
    status.excluded_party = static_cast<std::uint8_t>(exclusion_->party);
    status.excluded_since_unix_ms = exclusion_->since_unix_ms;
    status.exclusion_reason = exclusion_->reason;
  }
  status.exclusions = exclusions_;
  if (membership_) {
    status.distrusts = membership_->distrusts();
    status.three_party_suspended = membership_->three_party_failed();
    status.failed_pairs = membership_->failed_pairs_known(std::chrono::steady_clock::now());
  }
  status.dispute_reason = dispute_reason_;
  status.disputes = disputes_;
  return status;
}

std::string Node::metrics_text() {
  MetricsSnapshot snapshot;
  snapshot.status = status();
  snapshot.protocol = settings::protocol_name(settings_.protocol);
  // As configured: gc2 and rss3 take "active" (lut2 refuses it), and the pair serving while a
  // server is down is as its servers say (mpc_cluster_mode shows when it serves).
  snapshot.security = settings_.security == settings::Security::Active ? "active" : "passive";
  snapshot.three_servers = membership_.has_value();
  if (membership_) {
    const auto now = std::chrono::steady_clock::now();
    for (int party = 0; party < 3; ++party)
      if (party != settings_.party)
        if (const auto heard = membership_->last_heard(party))
          snapshot.peer_heard_age_s[static_cast<std::size_t>(party)] =
              std::chrono::duration<double>(now - *heard).count();
  }
  if (client_links_) snapshot.client_links = client_links_->size();
  const Engine::Stock stock = active().stock();
  snapshot.gcm_nonces = stock.gcm_nonces;
  snapshot.prepared_garblings = stock.prepared_garblings;
  snapshot.prepared_bytes = stock.prepared_bytes;
  snapshot.lut_entries_ahead = stock.lut_entries_ahead;
  for (std::size_t missing = 0; missing < pairs_.size(); ++missing)
    if (pairs_[missing])
      if (const auto ahead = pairs_[missing]->engine->stock().lut_entries_ahead)
        snapshot.pair_entries_ahead[static_cast<int>(missing)] = *ahead;
  snapshot.activity = engine_->activity();
  snapshot.client_handshakes_refused = context_.refused_handshakes("clients");
  snapshot.peer_handshakes_refused = context_.refused_handshakes("peers");
  snapshot.jobs = &job_metrics_;
  snapshot.cpu_seconds_by_thread = cpu_seconds_by_thread();
  return render_metrics(snapshot);
}

void Node::handle_admin(transport::ReceivedMessage& message, wire::Request& request) {
  const wire::RequestId id = wire::request_id(request);
  if (std::holds_alternative<wire::StatusRequest>(request)) {
    wire::Reply answer;
    answer.id = id;
    answer.body = status();
    send_reply(message.routing_id, answer);
    return;
  }
  if (const auto* exclusion = std::get_if<wire::ExclusionRequest>(&request)) {
    send_reply(message.routing_id, answer_exclusion(*exclusion, message.role));
    return;
  }
  // Every server must know every key: with one down, a change would reach two of three.
  if ((message.role == "admin" || message.role == "enrol") &&
      (std::holds_alternative<wire::DeleteKeyRequest>(request) || std::holds_alternative<wire::ImportKeyRequest>(request))) {
    if (auto refusal = key_change_refusal()) {
      send_reply(message.routing_id, error_reply(id, wire::Status::PeerFailure, *refusal));
      return;
    }
  }
  if (auto* remove = std::get_if<wire::DeleteKeyRequest>(&request)) {
    for (auto& service : pairs_)
      if (service) service->engine->key_changed(remove->key, KeyChange::Deleted);
    key_cache_.forget(remove->key);
    engine_->key_changed(remove->key, KeyChange::Deleted);
  }
  if (auto* import = std::get_if<wire::ImportKeyRequest>(&request)) {
    key_cache_.forget(import->key);
    for (auto& service : pairs_)
      if (service) service->engine->key_changed(import->key, KeyChange::Stored);
    engine_->key_changed(import->key, KeyChange::Stored);
  }
  if (auto answer = answer_key_admin(request, message.role, store_, own_keys_, engine_->share_copies(),
                                     engine_->sharing(), settings_.ticket_key_import, log_)) {
    if (const auto* import = std::get_if<wire::ImportKeyRequest>(&request); import && answer->status == wire::Status::Ok)
      key_stored(import->key);
    send_reply(message.routing_id, *answer);
  }
}

std::optional<Refusal> Node::store_generated(const wire::KeyId& key, const SecretBytes& share) {
  if (auto refusal = generation_refusal(key, store_)) return refusal;
  if (share.size() != engine_->share_copies() * wire::material_bytes(key.algorithm))
    return Refusal{wire::Status::Internal, "a generated share of " + std::to_string(share.size()) + " bytes"};
  if (!store_.put(key, share))
    return Refusal{wire::Status::KeyExists, wire::describe(key) + " already exists"};
  key_cache_.forget(key);
  for (auto& service : pairs_)
    if (service) service->engine->key_changed(key, KeyChange::Stored);
  engine_->key_changed(key, KeyChange::Stored);
  key_stored(key);
  log_.info("key generated", {{"key", wire::describe(key)}});
  return std::nullopt;
}

bool Node::answer_known(const transport::ReceivedMessage& message, const JobKey& key) {
  if (live_.count(key) != 0) {
    send_reply(message.routing_id, error_reply(key.request, wire::Status::BadRequest, "request id already in use"));
    return true;
  }
  Tombstone* tombstone = ledger_.tombstone(key);
  if (tombstone == nullptr) return false;
  if (tombstone->answered_here) {
    send_reply(message.routing_id, error_reply(key.request, wire::Status::BadRequest, "request id already in use"));
  } else {
    // Given up before this copy came: nothing will compute it, so it is answered at once.
    tombstone->answered_here = true;
    count_refusal(tombstone->status, key, tombstone->detail);
    send_reply(message.routing_id, error_reply(key.request, tombstone->status, tombstone->detail));
  }
  return true;
}

void Node::handle_job(transport::ReceivedMessage& message, wire::Request request) {
  const JobKey key{message.sender, wire::request_id(request)};
  if (answer_known(message, key)) return;
  const bool local = answered_at_once(request);
  const JobKind kind = job_kind(request);
  const wire::RequestDigest digest = wire::request_digest(message.data, request);
  ClientJob job{key, std::move(request), digest};
  if (const auto excluded = excluded_self_refusal()) {
    send_reply(message.routing_id, error_reply(key.request, excluded->status, excluded->detail));
    ledger_.bury(key, Tombstone{excluded->status, "excluded", true}, std::chrono::steady_clock::now());
    job_metrics_.refused(kind, excluded->status);
    return;
  }
  if (membership_ && membership_->awaiting_return(std::chrono::steady_clock::now())) {
    // The other two serve without this server until it has been back for rejoin_ms.
    send_reply(message.routing_id,
               error_reply(key.request, wire::Status::Regrouping,
                           "server " + std::to_string(settings_.party + 1) +
                               " is rejoining: the other two serve without it for now"));
    ledger_.bury(key, Tombstone{wire::Status::Regrouping, "rejoining", true}, std::chrono::steady_clock::now());
    job_metrics_.refused(kind, wire::Status::Regrouping);
    return;
  }
  if (live_.size() >= settings_.limits.max_pending_jobs) {
    refuse(message, key, kind, local, {wire::Status::Busy, "too many pending jobs"});
    return;
  }
  if (const auto* generate = std::get_if<wire::GenerateKeyRequest>(&job.request)) {
    // As for an import: every server must come to hold its share, and no id is taken twice.
    std::optional<Refusal> refusal;
    if (auto why = key_change_refusal()) refusal = Refusal{wire::Status::PeerFailure, *why};
    else refusal = generation_refusal(generate->key, store_);
    if (refusal) {
      refuse(message, key, kind, local, *refusal);
      return;
    }
  }
  const auto* krb = std::get_if<wire::KrbRequest>(&job.request);
  if (krb != nullptr && krb->record_mask) {
    // Each server checks its own seeds against the hashes all of them compare, so two servers
    // holding one seed hold the same one. (A request without a mask is the engine's refusal.)
    const int servers = settings_.protocol == settings::Protocol::Rss3 ? 3 : 2;
    if (const auto why = wire::record_mask_refusal(*krb->record_mask, settings_.party, servers)) {
      refuse(message, key, kind, local, Refusal{wire::Status::BadRequest, *why});
      return;
    }
  }
  if (auto refusal = active().check(job)) {
    // Each service keeps its own nonces: a server coming back, not yet taken in, does not
    // know the nonces the other two hand out meanwhile. Its refusal must not stop their answer.
    if (refusal->status == wire::Status::UnknownNonce && regrouping())
      refusal->status = wire::Status::Regrouping;
    refuse(message, key, kind, local, *refusal);
    return;
  }
  if (pair_ == nullptr)
    for (Engine* standing : standing_pairs()) standing->anticipate(job.request);
  const auto now = std::chrono::steady_clock::now();
  const PartyWord own{job.digest, wire::Status::Ok, {}};
  Live live;
  live.routing_id = message.routing_id;
  live.words = ledger_.take_early(key);
  live.words[static_cast<std::size_t>(settings_.party)] = own;
  live.local = local;
  live.arrived = now;
  live.kind = kind;
  live.held = std::move(job);
  Live& held = live_.emplace(key, std::move(live)).first->second;
  if (local) {
    answer_tag_now(key, held, now);
    return;
  }
  if (!leader()) {
    tell(serving_.leader, key, own);
    hand_over(held);
    // A pair's follower gives up a job its leader never announces by itself (two_party_engine).
    if (pair_ == nullptr) reminders_.emplace_back(now + kLeaderReminder, key);
    return;
  }
  deadlines_.emplace_back(now + settings_.limits.job_wait, key);
  settle(key);
}

// A GCM tag is answered at once from this server's copy, without waiting for the others'
// notes (request_agreement.hpp says why that gives a client no more than one tag per nonce).
// Only what is already known stops it: a copy that differs from one a peer reported, or a
// peer's refusal. The digest goes to the others for the record.
void Node::answer_tag_now(const JobKey& key, Live& live, std::chrono::steady_clock::time_point now) {
  tell_others_for_record(key, *live.words[static_cast<std::size_t>(settings_.party)], now);
  std::vector<int> heard;
  for (int party : serving_.parties)
    if (live.words[static_cast<std::size_t>(party)]) heard.push_back(party);
  const Verdict verdict = judge(live.words, heard);
  if (verdict.consensus == Consensus::Differ || verdict.consensus == Consensus::Refused) {
    give_up(key, verdict.status, verdict.detail, false);
    return;
  }
  hand_over(live);
}

void Node::refuse(const transport::ReceivedMessage& message, const JobKey& key, JobKind kind, bool local,
                  const Refusal& refusal) {
  send_reply(message.routing_id, error_reply(key.request, refusal.status, refusal.detail));
  job_metrics_.refused(kind, refusal.status);
  // The others must not compute what this server will not: the leader gives a request up
  // everywhere, a follower tells the leader, which does. A tag's refusal, which stops no
  // one's answer, goes to everyone for the record.
  const PartyWord word{{}, refusal.status, refusal.detail};
  if (local) {
    tell_others_for_record(key, word, std::chrono::steady_clock::now());
  } else if (leader()) {
    for (int party : serving_.parties)
      if (party != settings_.party)
        tell(party, key,
             PartyWord{{}, refusal.status,
                       "party " + std::to_string(settings_.party + 1) + " refused the request: " + refusal.detail});
  } else {
    tell(serving_.leader, key, word);
  }
  ledger_.bury(key, Tombstone{refusal.status, refusal.detail, true}, std::chrono::steady_clock::now());
}

void Node::tell(int party, const JobKey& key, const PartyWord& word) { outgoing_notes_.add(party, make_note(key, word)); }

void Node::tell_others_for_record(const JobKey& key, const PartyWord& word, std::chrono::steady_clock::time_point now) {
  for (int party : serving_.parties)
    if (party != settings_.party) outgoing_notes_.add_record(party, make_note(key, word), now);
}

void Node::check_answered_tag(Tombstone& tombstone, const JobKey& key, int from, const PartyWord& word) {
  if (word.status != wire::Status::Ok || word.digest == *tombstone.answered_copy || tombstone.mismatch_counted) return;
  tombstone.mismatch_counted = true;
  ++request_mismatches_;
  log_.warn("GCM job answered on differing copies",
            {{"request", describe_request(key)},
             {"detail", "party " + std::to_string(from + 1) + "'s copy of the request differs from party " +
                            std::to_string(settings_.party + 1) + "'s: their replies combine into noise"}});
}

void Node::hand_over(Live& live) {
  ClientJob job = std::move(*live.held);
  live.held.reset();
  active().admit(std::move(job));
}

void Node::settle(const JobKey& key) {
  auto it = live_.find(key);
  if (it == live_.end() || !it->second.held) return;
  const Verdict verdict = judge(it->second.words, serving_.parties);
  switch (verdict.consensus) {
    case Consensus::Waiting: return;
    case Consensus::Agreed: hand_over(it->second); return;
    case Consensus::Differ:
    case Consensus::Refused:
      give_up(key, verdict.status, verdict.detail, leader());
      return;
  }
}

void Node::give_up(const JobKey& key, wire::Status given, const std::string& detail, bool tell_followers) {
  const wire::Status status = failure_status(given);
  bool held = false;
  if (auto it = live_.find(key); it != live_.end()) {
    held = true;
    if (!it->second.local) note_answer(it->second.kind, given);
    count_refusal(status, key, detail);
    job_metrics_.answered(it->second.kind, status, std::chrono::steady_clock::now() - it->second.arrived);
    send_reply(it->second.routing_id, error_reply(key.request, status, detail));
    live_.erase(it);
  }
  ledger_.bury(key, Tombstone{status, detail, held}, std::chrono::steady_clock::now());
  if (tell_followers)
    for (int party : serving_.parties)
      if (party != settings_.party) tell(party, key, PartyWord{{}, status, detail});
}

void Node::handle_notes(int from, const std::vector<wire::RequestNote>& notes) {
  if (from < 0 || from >= 3 || from == settings_.party ||
      std::find(serving_.parties.begin(), serving_.parties.end(), from) == serving_.parties.end())
    return;
  const auto now = std::chrono::steady_clock::now();
  for (const auto& note : notes) {
    const JobKey key{note.client, note.request};
    PartyWord word{note.digest, note.status, note.detail};
    if (auto it = live_.find(key); it != live_.end()) {
      Live& live = it->second;
      if (live.held) {
        auto& slot = live.words[static_cast<std::size_t>(from)];
        if (!slot) slot = std::move(word);
        settle(key);
      } else if (!leader() && from == serving_.leader && word.status != wire::Status::Ok) {
        // The leader gave up a request this follower had already handed over.
        (void)active().abandon(key);
        live.held.reset();
        count_refusal(word.status, key, word.detail);
        job_metrics_.answered(live.kind, word.status, now - live.arrived);
        send_reply(live.routing_id, error_reply(key.request, word.status, word.detail));
        live_.erase(it);
        ledger_.bury(key, Tombstone{word.status, word.detail, true}, now);
      }
      continue;
    }
    if (Tombstone* tombstone = ledger_.tombstone(key)) {
      if (tombstone->answered_copy) {
        check_answered_tag(*tombstone, key, from, word);
        continue;
      }
      // A follower's copy that came after the leader gave the request up: tell it again, so it
      // answers that copy at once.
      if (leader() && word.status == wire::Status::Ok) tell(from, key, PartyWord{{}, tombstone->status, tombstone->detail});
      continue;
    }
    if (!leader() && from == serving_.leader && word.status != wire::Status::Ok) {
      ledger_.bury(key, Tombstone{word.status, word.detail, false}, now);
      continue;
    }
    const bool first = !ledger_.has_early(key);
    ledger_.keep_early(key, from, std::move(word), now);
    // The leader gives up on a request it has no copy of by job_wait after the first note.
    if (leader() && first) deadlines_.emplace_back(now + settings_.limits.job_wait, key);
  }
}

void Node::pass_deadlines(std::chrono::steady_clock::time_point now) {
  while (!deadlines_.empty() && deadlines_.front().first <= now) {
    const JobKey key = deadlines_.front().second;
    deadlines_.pop_front();
    auto it = live_.find(key);
    if (it == live_.end() || !it->second.held) {
      // The leader heard of a request it never received. The followers that hold it are heard
      // (their notes came); the client's copy to the leader is what is late, most often its
      // session still coming up after a restart: the job is worth sending again.
      if (leader() && it == live_.end() && ledger_.has_early(key))
        give_up(key, wire::Status::Regrouping,
                "party " + std::to_string(settings_.party + 1) + " did not receive the request within " +
                    std::to_string(settings_.limits.job_wait.count()) + " ms; nothing was computed: send it again",
                true);
      continue;
    }
    const Live& live = it->second;
    std::vector<int> spoken;
    std::string silent;
    bool silent_still_heard = membership_.has_value();
    for (int party : serving_.parties) {
      if (live.words[static_cast<std::size_t>(party)]) {
        spoken.push_back(party);
      } else {
        silent += (silent.empty() ? " " : " and ") + std::to_string(party + 1);
        silent_still_heard = silent_still_heard && membership_->hears(party, now);
      }
    }
    const bool tell_followers = leader();
    // Copies that differ already among those that came are a mismatch, silence or not.
    if (const Verdict partial = judge(live.words, spoken); partial.consensus == Consensus::Differ) {
      give_up(key, partial.status, partial.detail, tell_followers);
      continue;
    }
    // A peer late but still heard (its session intact, heard within peer_down) is most often
    // one starved of CPU for a moment: the job is worth sending again. One not heard is down.
    const std::string late = "party" + silent + " did not confirm holding the request within " +
                             std::to_string(settings_.limits.job_wait.count()) + " ms; nothing was computed";
    if (silent_still_heard)
      give_up(key, wire::Status::Regrouping, late + "; it is still heard: send the request again", tell_followers);
    else
      give_up(key, wire::Status::PeerFailure, late, tell_followers);
  }
}

void Node::remind_leader(std::chrono::steady_clock::time_point now) {
  while (!reminders_.empty() && reminders_.front().first <= now) {
    const JobKey key = reminders_.front().second;
    reminders_.pop_front();
    if (leader()) continue;
    const auto it = live_.find(key);
    if (it == live_.end() || it->second.held || it->second.local || active().computing(key)) continue;
    const auto& own = it->second.words[static_cast<std::size_t>(settings_.party)];
    if (!own) continue;
    tell(serving_.leader, key, *own);
    reminders_.emplace_back(now + kLeaderReminder, key);
  }
}

void Node::flush_notes(std::chrono::steady_clock::time_point now) {
  if (outgoing_notes_.empty()) return;
  for (int party : serving_.parties) {
    if (party == settings_.party || !outgoing_notes_.due(party, now)) continue;
    for (const auto& frame : outgoing_notes_.take_frames(party))
      if (!peers_->send_to(party, frame)) log_.debug("notes not sent: peer unreachable", {{"party", party + 1}});
  }
}

}  // namespace mpc::node
