#include "engines/three_party/three_party_engine.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <thread>
#include <variant>

#include "common/error.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "engines/three_party/batch_follower.hpp"
#include "engines/three_party/batch_leader.hpp"
#include "engines/three_party/layer_messages.hpp"
#include "engines/three_party/self_test.hpp"
#include "node/key_admin.hpp"
#include "node/request_agreement.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::three_party_engine {
namespace {

// A follower's job that no batch named in this long is dropped (the leader is gone).
constexpr auto kFollowerJobExpiry = std::chrono::seconds(30);
// How long a batch on the shell's thread waits on the peer socket before the shell gets a
// word in (heartbeats, a server gone away).
constexpr std::chrono::milliseconds kKeepAliveSlice{20};
// How long a batch on the shell's thread looks for the next layer on its data link before it
// sleeps in poll: the neighbours send each layer at about the same moment, and a wake-up from
// poll costs more than the wait (the single-block latency of docs/benchmarks.md shows it). It
// yields between looks, so a busy core loses little.
constexpr std::chrono::microseconds kShellLaneSpin{200};

std::array<transport::PublicKey, 3> party_public_keys(const settings::ServerSettings& settings,
                                                      const transport::PublicKey& own) {
  std::array<transport::PublicKey, 3> keys{};
  keys[static_cast<std::size_t>(settings.party)] = own;
  for (const auto& peer : settings.peers) keys[static_cast<std::size_t>(peer.party)] = peer.public_key;
  return keys;
}

std::unique_ptr<BatchRole> make_role(const settings::ServerSettings& settings, const Logger& log,
                                     store::EpochLedger& epochs) {
  if (settings.party == 0) return std::make_unique<BatchLeader>(settings, log);
  return std::make_unique<BatchFollower>(settings, log, epochs);
}

// A follower's refusal of a batch for its epoch (batch_follower.cpp) comes as a regrouping
// abort; for a batch without messages (local masks) it is the leader's only word of it.
bool regrouping_abort(const std::vector<std::uint8_t>& frame) {
  if (frame.size() < 2 || frame[1] != static_cast<std::uint8_t>(wire::PeerMessageType::Abort)) return false;
  try {
    const auto message = wire::decode_peer_message(frame);
    const auto* abort = std::get_if<wire::AbortNotice>(&message);
    return abort != nullptr && abort->reason == static_cast<std::uint16_t>(wire::Status::Regrouping);
  } catch (const FormatError&) {
    return false;
  }
}

}  // namespace

ThreePartyEngine::ThreePartyEngine(const node::EngineResources& resources)
    : settings_(resources.settings),
      log_(resources.log),
      host_(resources.host),
      prf_keys_(derive_prf_keys(settings_.party, resources.own_keys,
                                party_public_keys(settings_, resources.own_keys.public_key))),
      own_garbled_circuits_(resources.garbled_krb_circuits != nullptr ? std::size_t{0}
                                                                        : jobs::KrbCircuitCache::kDefaultBudgetOps,
                            [](const jobs::KrbCircuitKey& key) {
                              return jobs::build_krb_circuit(key, circuits::CircuitCost::FewestAnds);
                            }),
      krb_garbled_circuits_(resources.garbled_krb_circuits != nullptr ? resources.garbled_krb_circuits
                                                                      : &own_garbled_circuits_),
      // Twice the leader's budget: the evaluator also keeps commitments, and entries the leader
      // forgot stay until they expire here.
      prepared_garblings_(std::size_t{settings_.limits.prepared_circuits_mib} << 21, kPreparedGarblingLife),
      role_(make_role(settings_, log_, resources.epochs)),
      nonce_pool_(settings_.limits.gcm_nonces_per_client, settings_.limits.gcm_nonce_ttl),
      tagged_nonces_(settings_.limits.tagged_nonces_kept, settings_.limits.tagged_nonce_ttl) {
  const auto cpu = [] { return rss3::make_cpu_evaluator(rss3::best_simd_level()); };
  run_self_tests(circuits_, cpu, log_);
  if (uses_gpu()) run_self_tests(circuits_, [] { return cuda::make_cuda_evaluator(0); }, log_);
  // Latency-bound batches stay on the CPU: a one-block job spends its time in round trips,
  // where a GPU only adds launches and copies.
  inline_evaluator_ = cpu();
  if (!settings_.data_endpoint.empty())
    data_plane_ =
        std::make_unique<DataPlane>(settings_, resources.own_keys, batch_frames_, resources.client_links, log_);
  shell_lane_out_ = make_shell_lane(host_, settings_, resources.own_keys, log_);
  const std::size_t workers = settings_.limits.workers != 0 ? settings_.limits.workers : default_workers();
  std::uint32_t lane = kShellLane + 1;
  for (std::size_t i = 0; i < workers; ++i)
    workers_.push_back(std::make_unique<BatchWorker>(
        settings_, make_worker_lane(host_, resources.context, settings_, resources.own_keys, lane++, log_), prf_keys_, cpu(),
        uses_gpu() ? cuda::make_cuda_evaluator(0) : nullptr, batch_finished_, log_, prepared_garblings_,
        batch_frames_.buffers()));
  // A one-instance circuit gains nothing from a GPU (a launch per layer) and would hold a
  // device workspace per worker: Kerberos batches always run on the CPU evaluator.
  for (std::size_t i = 0; i < kKrbBatchesInFlight; ++i)
    krb_workers_.push_back(std::make_unique<BatchWorker>(
        settings_, make_worker_lane(host_, resources.context, settings_, resources.own_keys, lane++, log_), prf_keys_, cpu(),
        nullptr, batch_finished_, log_, prepared_garblings_,
        batch_frames_.buffers()));
  if (settings_.security == settings::Security::Active)
    preparation_worker_ = std::make_unique<BatchWorker>(
        settings_, make_worker_lane(host_, resources.context, settings_, resources.own_keys, lane++, log_), prf_keys_, cpu(),
        nullptr, batch_finished_, log_, prepared_garblings_, batch_frames_.buffers(), WorkerPriority::Background);
}

ThreePartyEngine::~ThreePartyEngine() {
  data_plane_.reset();  // its threads hand frames to the workers
  workers_.clear();     // joins the workers before the sockets they use go away
  krb_workers_.clear();
  preparation_worker_.reset();
  for (auto& [key, job] : jobs_) job.key_share.clear();
}

std::size_t default_workers() {
  // The cores this process may run on (taskset, a cgroup's cpuset), not all the machine's.
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const std::size_t cores = ::sched_getaffinity(0, sizeof allowed, &allowed) == 0
                                ? static_cast<std::size_t>(CPU_COUNT(&allowed))
                                : std::thread::hardware_concurrency();
  return std::max<std::size_t>(2, cores);
}

std::unique_ptr<node::Engine> make_three_party_engine(const node::EngineResources& resources) {
  return std::make_unique<ThreePartyEngine>(resources);
}

bool ThreePartyEngine::uses_gpu() const {
  return settings_.backend == settings::EvaluatorBackend::Cuda ||
         (settings_.backend == settings::EvaluatorBackend::Auto && cuda::cuda_device_available());
}

std::string ThreePartyEngine::name() const {
  return "rss3 (" + std::string(inline_evaluator_->name()) + (uses_gpu() ? ", large batches on the GPU" : "") +
         "), " + std::to_string(workers_.size()) + " + " +
         std::to_string(kKrbBatchesInFlight) + " batches in flight" +
         (data_plane_ ? ", data links on " + data_plane_->bound_endpoint() : std::string());
}

void ThreePartyEngine::fill_status(wire::ServerStatus& status) const {
  status.epoch = role_->epoch();
  status.batches = batches_run_;
  status.payload_bytes_sent = payload_bytes_sent_;
  status.layer_messages_sent = layer_messages_sent_;
  status.and_gates_evaluated = and_gates_evaluated_;
}

node::Engine::Stock ThreePartyEngine::stock() const {
  return {nonce_pool_.size(), prepared_garblings_.size(), prepared_garblings_.bytes()};
}

node::Engine::Activity ThreePartyEngine::activity() const {
  Activity activity;
  activity.aborts = aborts_;
  activity.payload_bytes_received = payload_bytes_received_;
  if (data_plane_) {
    const DataPlane::Refusals refused = data_plane_->refusals();
    activity.links_refused_at_limit = refused.at_limit;
    activity.links_refused_handshake = refused.handshake;
    activity.links_refused_busy = refused.busy;
  }
  return activity;
}

BatchWorker* ThreePartyEngine::idle_worker(WorkerPool pool) const {
  if (pool == WorkerPool::Preparation)
    return preparation_worker_ && preparation_worker_->idle() ? preparation_worker_.get() : nullptr;
  for (auto& worker : pool == WorkerPool::Krb ? krb_workers_ : workers_)
    if (worker->idle()) return worker.get();
  return nullptr;
}

bool ThreePartyEngine::pool_idle(WorkerPool pool) const {
  if (pool == WorkerPool::Preparation) return !preparation_worker_ || preparation_worker_->idle();
  for (auto& worker : pool == WorkerPool::Krb ? krb_workers_ : workers_)
    if (!worker->idle()) return false;
  return true;
}

bool runs_without_worker(const wire::BatchHeader& header) { return header.circuit == wire::CircuitId::GcmLocalMasks; }

WorkerPool pool_of(const wire::BatchHeader& header) {
  // A key's material is a circuit as large as a Kerberos one.
  if (header.circuit == wire::CircuitId::GcmKeyMaterial) return WorkerPool::Krb;
  if (!wire::is_krb_circuit(header.circuit)) return WorkerPool::Fixed;
  return header.krb_evaluation == wire::KrbEvaluation::PrepareTwice ? WorkerPool::Preparation : WorkerPool::Krb;
}

bool ThreePartyEngine::send_to(int party, const std::vector<std::uint8_t>& frame) {
  return host_.peers().send_to(party, frame);
}

std::vector<int> ThreePartyEngine::descriptors() const {
  if (shell_lane_in_ && !shell_lane_in_->closed()) return {batch_finished_.descriptor(), shell_lane_in_->descriptor()};
  return {batch_finished_.descriptor()};
}

void ThreePartyEngine::read_shell_lane(const BatchTag* running, std::deque<node::PeerEnvelope>* pending) {
  if (data_plane_) shell_lane_in_ = data_plane_->shell_lane(std::move(shell_lane_in_));
  if (!shell_lane_in_) return;
  const int previous = rss3::previous_party(settings_.party);
  try {
    std::vector<std::uint8_t> frame;
    while (shell_lane_in_->receive(frame, std::chrono::steady_clock::now())) {
      node::PeerEnvelope envelope{previous, std::move(frame)};
      frame = {};
      const auto tag = batch_tag_of(envelope.data);
      if (running != nullptr && tag && *tag == *running)
        pending->push_back(std::move(envelope));
      else
        batch_frames_.route(std::move(envelope));
    }
    shell_lane_stalls_.check(*shell_lane_in_, std::chrono::steady_clock::now());
  } catch (const PeerError& error) {
    log_.info("data link closed", {{"from", previous + 1},
                                   {"lane", static_cast<std::uint64_t>(kShellLane)},
                                   {"error", error.what()}});
    shell_lane_in_.reset();
  }
}

void ThreePartyEngine::step(std::chrono::steady_clock::time_point now) {
  batch_finished_.clear();
  read_shell_lane(nullptr, nullptr);
  collect_results();
  role_->schedule(*this);
  if (now - last_expiry_ > std::chrono::seconds(1)) {
    expire_jobs(now);
    nonce_pool_.expire(now);
    tagged_nonces_.expire(now);
    last_expiry_ = now;
  }
}

std::chrono::milliseconds ThreePartyEngine::idle_wait() const {
  constexpr std::chrono::milliseconds kLongest{100};
  if (role_->ready(*this)) return std::chrono::milliseconds(0);
  if (const auto at = role_->wake_at()) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(*at - std::chrono::steady_clock::now());
    return std::clamp(left, std::chrono::milliseconds(0), kLongest);
  }
  return kLongest;
}

void ThreePartyEngine::take_peer_frame(node::PeerEnvelope envelope) { route_peer_message(std::move(envelope)); }

// A peer message that is not for the batch the caller waits on: to the worker running its
// batch, kept until its batch starts, or (a header) to the role.
void ThreePartyEngine::route_peer_message(node::PeerEnvelope envelope) {
  if (const auto tag = batch_tag_of(envelope.data)) {
    if (envelope.from_party > 0 && regrouping_abort(envelope.data)) role_->epoch_refused(tag->epoch);
    batch_frames_.route(std::move(envelope));
    return;
  }
  try {
    auto message = wire::decode_peer_message(envelope.data);
    if (auto* batch = std::get_if<wire::BatchHeader>(&message)) role_->take_header(envelope.from_party, std::move(*batch));
  } catch (const FormatError& error) {
    log_.warn("malformed peer message", {{"from", envelope.from_party + 1}, {"error", error.what()}});
  }
}

// LayerExchange for a batch run on the shell's thread: sends over the shell's link to the
// next party and reads the peer socket itself, handing everything else on as usual.
class ThreePartyEngine::InlineExchange final : public rss3::LayerExchange {
 public:
  InlineExchange(ThreePartyEngine& engine, const wire::BatchHeader& header, std::vector<node::PeerEnvelope> early)
      : engine_(engine), tag_{header.epoch, header.sequence} {
    for (auto& envelope : early) pending_.push_back(std::move(envelope));
  }

  void exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing, std::span<std::uint8_t> incoming) override {
    const int previous = rss3::previous_party(engine_.settings_.party);
    node::PeerLinks& peers = engine_.host_.peers();
    wire::write_layer_header({tag_.epoch, tag_.sequence, layer}, layer_header_);
    if (!engine_.shell_lane_out_->send(
            layer_header_, outgoing,
            std::chrono::steady_clock::now() + node::connect_grace(engine_.settings_.limits.peer_timeout)))
      throw PeerError(Component::Server, engine_.shell_lane_out_->why_not());
    const auto timeout = engine_.settings_.limits.peer_timeout;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const auto spin_until = std::chrono::steady_clock::now() + kShellLaneSpin;
    for (;;) {
      engine_.read_shell_lane(&tag_, &pending_);
      if (take_layer_message(pending_, previous, layer, incoming)) return;
      if (engine_.shell_lane_in_ && std::chrono::steady_clock::now() < spin_until) {
        ::sched_yield();
        continue;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        throw PeerError(Component::Server, "no layer " + std::to_string(layer) + " message from party " +
                                               std::to_string(previous + 1) + " within " +
                                               std::to_string(timeout.count()) + " ms");
      if (!engine_.host_.keep_alive())
        throw PeerError(Component::Server, "the cluster is changing how it serves: batch given up");
      void* const sockets[] = {peers.listener_socket()};
      std::vector<int> lanes;
      if (engine_.shell_lane_in_ && !engine_.shell_lane_in_->closed())
        lanes.push_back(engine_.shell_lane_in_->descriptor());
      if (transport::wait_readable(sockets, lanes, std::min(left, kKeepAliveSlice)).empty()) {
        // A neighbour that ran this batch on a worker sent its messages over its lane.
        for (auto& envelope : engine_.batch_frames_.take(tag_)) pending_.push_back(std::move(envelope));
        continue;
      }
      while (auto envelope = peers.receive(std::chrono::milliseconds(0))) {
        if (envelope->from_party < 0) continue;
        const auto tag = batch_tag_of(envelope->data);
        if (tag && *tag == tag_)
          pending_.push_back(std::move(*envelope));
        else if (!engine_.host_.take_shell_frame(*envelope))
          engine_.route_peer_message(std::move(*envelope));
      }
    }
  }

 private:
  ThreePartyEngine& engine_;
  BatchTag tag_;
  std::deque<node::PeerEnvelope> pending_;
  std::array<std::uint8_t, wire::kLayerHeaderBytes> layer_header_{};
};

void ThreePartyEngine::abort_batch(const wire::BatchHeader& header, wire::Status status, const std::string& detail) {
  const auto frame =
      wire::encode_abort({header.epoch, header.sequence, static_cast<std::uint16_t>(status), detail.substr(0, 1024)});
  for (int party = 0; party < 3; ++party)
    if (party != settings_.party) host_.peers().send_to(party, frame);
  end_failed_batch(header, status, detail);
}

void ThreePartyEngine::end_failed_batch(const wire::BatchHeader& header, wire::Status status,
                                        const std::string& detail) {
  fail_batch_jobs(header, status, detail);
  role_->batch_done(header, false, 0);
  if (status == wire::Status::Regrouping) role_->epoch_refused(header.epoch);
}

void ThreePartyEngine::fail_batch_jobs(const wire::BatchHeader& header, wire::Status status,
                                       const std::string& detail) {
  for (const auto& slice : header.slices) {
    auto it = jobs_.find(node::JobKey{slice.client, slice.request});
    if (it == jobs_.end()) continue;
    jobs_.erase(it);
    answer_error(node::JobKey{slice.client, slice.request}, status, detail);
  }
}

void ThreePartyEngine::answer_error(const node::JobKey& key, wire::Status status, const std::string& detail) {
  host_.answer(key, node::error_reply(key.request, status, detail));
}

void ThreePartyEngine::refuse_misfit(const wire::BatchHeader& header, const wire::BatchSlice& slice,
                                     const char* batch) {
  const std::string detail = "party " + std::to_string(settings_.party + 1) + ": request " +
                             node::describe_request(node::JobKey{slice.client, slice.request}) + " does not fit " +
                             batch + " the leader scheduled";
  log_.warn("batch refused", {{"sequence", header.sequence}, {"error", detail}});
  abort_batch(header, wire::Status::BadRequest, detail);
}

void ThreePartyEngine::start_batch(const wire::BatchHeader& header, BatchWorker* worker) {
  std::size_t instances = 0;
  for (const auto& slice : header.slices) instances += slice.blocks;
  // A batch that prepares a garbling has no job: one instance of its circuit, on no input.
  if (header.krb_evaluation == wire::KrbEvaluation::PrepareTwice) instances = 1;
  // Only batches garbled twice use the store: no other batch takes its lock.
  if (wire::is_garbled_twice(header.krb_evaluation)) prepared_garblings_.keep_epoch(header.epoch);
  if (instances == 0 || instances > settings_.limits.max_batch_blocks) {
    log_.warn("batch refused", {{"sequence", header.sequence}, {"instances", static_cast<std::uint64_t>(instances)}});
    abort_batch(header, wire::Status::TooLarge, "batch size refused by party " + std::to_string(settings_.party + 1));
    return;
  }
  if (wire::is_krb_circuit(header.circuit) &&
      (instances > jobs::max_krb_batch_jobs(header.data_bytes) ||
       static_cast<std::uint64_t>(instances) * header.data_bytes > jobs::kMaxKrbBatchDataBytes)) {
    log_.warn("batch refused", {{"sequence", header.sequence},
                                {"instances", static_cast<std::uint64_t>(instances)},
                                {"data_bytes", static_cast<std::uint64_t>(header.data_bytes)}});
    abort_batch(header, wire::Status::TooLarge,
                "Kerberos batch size refused by party " + std::to_string(settings_.party + 1));
    return;
  }
  if (runs_without_worker(header)) {
    run_local_masks(header);
    return;
  }
  if (worker == nullptr) throw Error(Component::Server, "a batch with a circuit started without a worker");
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
    auto it = jobs_.find(node::JobKey{slice.client, slice.request});
    if (it == jobs_.end() || !slice_input(header, task, slice, it->second, input)) {
      refuse_misfit(header, slice, "the batch");
      return;
    }
    it->second.in_batch = true;
    task.slices.push_back(std::move(input));
  }
  const BatchTag tag{header.epoch, header.sequence};
  // Kerberos circuits are deep (hundreds to thousands of layers): on the shell's thread one
  // would hold up every answer and the layer messages of the other batch in flight.
  if (pool_of(header) == WorkerPool::Fixed && instances <= settings_.limits.latency_batch_blocks) {
    InlineExchange exchange(*this, header, batch_frames_.take(tag));
    BatchResult result =
        evaluate_batch(task, *inline_evaluator_, prf_keys_, exchange, inline_inputs_, inline_outputs_,
                       settings_.party, settings_.security, log_);
    for (auto& slice : task.slices) slice.key_share.clear();
    apply_result(result);
    return;
  }
  batch_frames_.start(*worker, std::move(task));
}

void ThreePartyEngine::collect_results() {
  for (auto* pool : {&krb_workers_, &workers_})
    for (auto& worker : *pool)
      if (auto result = worker->take_result()) apply_result(*result);
  if (preparation_worker_)
    if (auto result = preparation_worker_->take_result()) apply_result(*result);
}

void ThreePartyEngine::apply_result(BatchResult& result) {
  const wire::BatchHeader& header = result.header;
  if (!result.succeeded) {
    if (result.failure == wire::Status::VerificationFailed) {
      const std::string check = result.failed_check.empty() ? "unnamed" : result.failed_check;
      ++aborts_[{check, result.failed_peer}];
      log_.error("batch refused: a server's messages failed verification",
                 {{"sequence", header.sequence}, {"error", result.error}});
      const std::string where =
          "batch " + std::to_string(header.sequence) + " of epoch " + std::to_string(header.epoch);
      // A setting that differs between the servers is the operator's to fix, not a deviation.
      // An AND check that names peers is a dispute with each (rss3/and_check_blame.hpp); one that
      // names none shows only that one of the other two deviated.
      if (result.claims != 0) {
        for (int party = 0; party < 3; ++party)
          if ((result.claims & (1u << party)) != 0) host_.deviation_caught(party, check, where);
      } else if (check != "security_setting") {
        host_.deviation_caught(-1, check, where);
      }
    } else {
      log_.warn("batch failed", {{"sequence", header.sequence}, {"error", result.error}});
    }
    // After an AND check run to its end every peer has drawn its own conclusion: a notice could
    // overtake the check's last messages to a peer still reading them and cut its short.
    if (result.check_concluded)
      end_failed_batch(header, result.failure, result.error);
    else
      abort_batch(header, result.failure, result.error);
    return;
  }
  std::size_t offset = 0;
  for (std::size_t index = 0; index < header.slices.size(); ++index) {
    const auto& slice = header.slices[index];
    auto it = jobs_.find(node::JobKey{slice.client, slice.request});
    if (it != jobs_.end()) {
      try {
        add_slice_result(it->second, header, slice, result, index, offset);
        if (it->second.blocks_done == it->second.instances) complete_job(it);
      } catch (const Error& error) {
        log_.error("batch result does not fit its job", {{"sequence", header.sequence}, {"error", error.what()}});
        jobs_.erase(it);
        answer_error(node::JobKey{slice.client, slice.request}, wire::Status::Internal, error.what());
      }
    }
    offset += slice.blocks;
  }
  ++batches_run_;
  payload_bytes_sent_ += result.stats.bytes_sent;
  payload_bytes_received_ += result.stats.bytes_received;
  layer_messages_sent_ += result.stats.layers_exchanged;
  and_gates_evaluated_ += result.and_gates * offset;
  log_.debug("batch done", {{"sequence", header.sequence},
                            {"circuit", static_cast<std::uint64_t>(header.circuit)},
                            {"data_bytes", static_cast<std::uint64_t>(header.data_bytes)},
                            {"and_gates", static_cast<std::uint64_t>(result.and_gates)},
                            {"and_depth", static_cast<std::uint64_t>(result.and_depth)},
                            {"evaluation", wire::evaluation_name(header.krb_evaluation)},
                            {"instances", static_cast<std::uint64_t>(offset)},
                            {"layers", result.stats.layers_exchanged},
                            {"bytes_sent", result.stats.bytes_sent},
                            {"micros", static_cast<std::int64_t>(result.elapsed.count())}});
  role_->batch_done(header, true, result.and_gates);
}

void ThreePartyEngine::expire_jobs(std::chrono::steady_clock::time_point now) {
  if (settings_.party == 0) return;  // the leader schedules every job it is handed
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (now - it->second.arrived > kFollowerJobExpiry) {
      host_.forget(it->first);
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace mpc::three_party_engine
