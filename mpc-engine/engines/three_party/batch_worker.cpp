#include "engines/three_party/batch_worker.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <variant>

#include "common/error.hpp"
#include "common/fault_injection.hpp"
#include "common/thread_name.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "protocol/rss3/and_check.hpp"
#include "protocol/rss3/output.hpp"
#include "protocol/two_party/chunked_channel.hpp"
#include "protocol/rss3/transpose.hpp"
#include "jobs/batch_inputs.hpp"
#include "jobs/gcm_key_material_program.hpp"
#include "engines/three_party/data_plane.hpp"
#include "engines/three_party/garbled_krb_batch.hpp"
#include "engines/three_party/layer_messages.hpp"

namespace mpc::three_party_engine {
namespace {

constexpr int kLowestPriority = 19;  // the largest nice value

}  // namespace

// LayerExchange over the worker's own connection to the next party and its inbox.
class BatchWorker::Exchange final : public rss3::LayerExchange {
 public:
  // `first_layer_grace`: added to the peer timeout for the first layer only (a neighbour may
  // still be compiling the circuit; jobs::krb_first_layer_grace).
  Exchange(BatchWorker& worker, const wire::BatchHeader& header, std::chrono::milliseconds first_layer_grace)
      : worker_(worker), header_(header), grace_(first_layer_grace) {}

  ~Exchange() override { release_held(); }

  void exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing, std::span<std::uint8_t> incoming) override {
    const auto lent = exchange_lent(layer, outgoing, incoming.size());
    if (!lent.empty()) std::memcpy(incoming.data(), lent.data(), lent.size());
  }

  // The message stays in the frame the data link received it into, held until the next call.
  std::span<const std::uint8_t> exchange_lent(std::uint32_t layer, std::span<const std::uint8_t> outgoing,
                                              std::size_t incoming_bytes) override {
    release_held();
#if defined(MPC_FAULT_INJECTION)
    // "stall-every=MS": a server that withholds its part of every batch while its shell is
    // heard: the first layer message of each batch goes out MS late.
    if (const auto late_ms = fault::armed("stall-every"); late_ms && !stalled_) {
      stalled_ = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(*late_ms));
    }
#endif
    const int party = worker_.settings_.party;
    const int previous = rss3::previous_party(party);
    wire::write_layer_header({header_.epoch, header_.sequence, layer}, layer_header_);
    if (!worker_.next_party_->send(
            layer_header_, outgoing,
            std::chrono::steady_clock::now() + node::connect_grace(worker_.settings_.limits.peer_timeout)))
      throw PeerError(Component::Server, worker_.next_party_->why_not());

    const auto timeout = worker_.settings_.limits.peer_timeout + grace_;
    grace_ = std::chrono::milliseconds(0);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::span<const std::uint8_t> payload;
    std::unique_lock lock(worker_.mutex_);
    for (;;) {
      if (take_layer_envelope(worker_.inbox_, previous, layer, incoming_bytes, held_, payload)) return payload;
      if (worker_.stopping_) throw PeerError(Component::Server, "server stopping");
      if (worker_.wake_.wait_until(lock, deadline) == std::cv_status::timeout &&
          std::chrono::steady_clock::now() >= deadline)
        throw PeerError(Component::Server, "no layer " + std::to_string(layer) + " message from party " +
                                               std::to_string(previous + 1) + " within " +
                                               std::to_string(timeout.count()) + " ms");
    }
  }

 private:

  // Wiped there: a lent message holds share components of a layer's ANDs.
  void release_held() noexcept {
    worker_.frame_buffers_.give(std::move(held_.data));
    held_ = {};
  }

  BatchWorker& worker_;
  const wire::BatchHeader& header_;
  std::chrono::milliseconds grace_;
  std::array<std::uint8_t, wire::kLayerHeaderBytes> layer_header_{};
  node::PeerEnvelope held_;
#if defined(MPC_FAULT_INJECTION)
  bool stalled_ = false;
#endif
};

// A garbled batch's byte stream: chunks to the next party as layer frames numbered 0, 1, 2,
// ..., and the previous party's chunks from the inbox in the same numbering.
class BatchWorker::Stream final : public two_party::ChunkedChannel {
 public:
  // Chunks of up to 1 MiB: a login's tables (about 10 MB) in about a dozen frames, the first of
  // them early enough (a third of a millisecond of garbling) for the evaluator to start while
  // the garbler goes on. With 256 KiB chunks the evaluator woke 40 times a login and protected
  // users' logins/s were about 5 % lower.
  static constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

  Stream(BatchWorker& worker, const wire::BatchHeader& header)
      : ChunkedChannel(kChunkBytes), worker_(worker), header_(header) {}

  void allow_extra_wait(std::chrono::milliseconds extra) override { extra_ = extra; }
  std::uint64_t bytes_received() const { return received_bytes_; }

 private:
  void ship(std::vector<std::uint8_t> chunk) override {
#if defined(MPC_FAULT_INJECTION)
    // A worker starved of the CPU for a moment while its shell is still heard: the first chunk
    // of the first client's Kerberos batch this server streams goes out N ms late.
    if (const auto late_ms = fault::armed("stall-once");
        late_ms && sent_chunks_ == 0 && !header_.slices.empty() && wire::is_krb_circuit(header_.circuit)) {
      static std::atomic<bool> stalled{false};
      if (!stalled.exchange(true)) std::this_thread::sleep_for(std::chrono::milliseconds(*late_ms));
    }
    // "stall-every=MS": the first chunk of every garbled stream, as above for layer messages.
    if (const auto late_ms = fault::armed("stall-every"); late_ms && sent_chunks_ == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(*late_ms));
    // A garbler's altered table rows: one flipped bit in each of 64 blocks from byte N of what
    // this server streams. (An evaluator reads about half of the rows, so one row alone might
    // leave a result unchanged.)
    if (const auto at = fault::armed("garbled-table-bits"))
      for (std::uint64_t block = 0; block < 64; ++block)
        if (const std::uint64_t byte = *at + 16 * block; byte >= shipped_ && byte - shipped_ < chunk.size())
          chunk[byte - shipped_] ^= 1;
    shipped_ += chunk.size();
#endif
    wire::write_layer_header({header_.epoch, header_.sequence, sent_chunks_++}, layer_header_);
    if (!worker_.next_party_->send(layer_header_, chunk,
                                   std::chrono::steady_clock::now() + worker_.settings_.limits.peer_timeout + extra_))
      throw PeerError(Component::Server, worker_.next_party_->why_not());
  }

  // The chunk stays in the frame it arrived in.
  Chunk next_chunk() override {
    const int previous = rss3::previous_party(worker_.settings_.party);
    const auto timeout = worker_.settings_.limits.peer_timeout + extra_;
    extra_ = std::chrono::milliseconds(0);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    Chunk chunk;
    std::unique_lock lock(worker_.mutex_);
    for (;;) {
      if (take_stream_chunk(worker_.inbox_, previous, received_chunks_, chunk.bytes, chunk.from)) {
        ++received_chunks_;
        received_bytes_ += chunk.bytes.size() - chunk.from;
        return chunk;
      }
      if (worker_.stopping_) throw PeerError(Component::Server, "server stopping");
      if (worker_.wake_.wait_until(lock, deadline) == std::cv_status::timeout &&
          std::chrono::steady_clock::now() >= deadline)
        throw PeerError(Component::Server, "no garbled-batch stream from party " + std::to_string(previous + 1) +
                                               " within " + std::to_string(timeout.count()) + " ms");
    }
  }

  void release(std::vector<std::uint8_t> bytes) override { worker_.frame_buffers_.keep_chunk(std::move(bytes)); }

  BatchWorker& worker_;
  const wire::BatchHeader& header_;
  std::chrono::milliseconds extra_{0};
  std::uint32_t sent_chunks_ = 0;
  std::uint32_t received_chunks_ = 0;
  std::uint64_t received_bytes_ = 0;
#if defined(MPC_FAULT_INJECTION)
  std::uint64_t shipped_ = 0;
#endif
  std::array<std::uint8_t, wire::kLayerHeaderBytes> layer_header_{};
};

#if defined(MPC_FAULT_INJECTION)
// A server that deviates in a layered batch (test server only, common/fault_injection.hpp):
// - "and-share-bit=L": flips bit 0 of its r in AND layer L in its own buffer before sending, so
//   its share and the copy its neighbour gets agree (no reconstruction can disagree);
// - "check-message-bit=H": flips a bit in the copy it sends of the AND check's message H
//   (0: its receipt as V+, 1: its seed share as V-, 2: its proof, 3: its findings as V+, 4: its
//   verdict as V-, 5: the verdict it relays, 6: the relay it forwards as V+), after signing it.
class DeviatingExchange final : public rss3::LayerExchange {
 public:
  DeviatingExchange(rss3::LayerExchange& inner, std::uint32_t program_layers)
      : inner_(inner), program_layers_(program_layers) {}

  void exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing, std::span<std::uint8_t> incoming) override {
    inner_.exchange(layer, deviate(layer, outgoing), incoming);
  }
  std::span<const std::uint8_t> exchange_lent(std::uint32_t layer, std::span<const std::uint8_t> outgoing,
                                              std::size_t incoming_bytes) override {
    return inner_.exchange_lent(layer, deviate(layer, outgoing), incoming_bytes);
  }

 private:
  std::span<const std::uint8_t> deviate(std::uint32_t layer, std::span<const std::uint8_t> outgoing) {
    if (const auto at = fault::armed("and-share-bit"); at && *at == layer && !outgoing.empty())
      const_cast<std::uint8_t*>(outgoing.data())[0] ^= 1;  // the evaluator's own message buffer
    if (const auto hop = fault::armed("check-message-bit");
        hop && layer == program_layers_ + *hop && !outgoing.empty()) {
      altered_.assign(outgoing.begin(), outgoing.end());
      altered_[altered_.size() / 2] ^= 0x40;
      return altered_;
    }
    return outgoing;
  }

  std::vector<std::uint8_t> altered_;
  rss3::LayerExchange& inner_;
  std::uint32_t program_layers_;
};
#endif

BatchWorker::BatchWorker(const settings::ServerSettings& settings, std::unique_ptr<NextPartyLink> next_party,
                         const PartyPrfKeys& prf_keys, std::unique_ptr<rss3::Evaluator> evaluator,
                         std::unique_ptr<rss3::Evaluator> gpu_evaluator, node::Wakeup& finished, const Logger& log,
                         PreparedGarblings& prepared, FrameBuffers& frame_buffers, WorkerPriority priority)
    : priority_(priority),
      settings_(settings),
      prf_keys_(prf_keys),
      prepared_(prepared),
      frame_buffers_(frame_buffers),
      evaluator_(std::move(evaluator)),
      gpu_evaluator_(std::move(gpu_evaluator)),
      finished_(finished),
      log_(log),
      next_party_(std::move(next_party)) {
  thread_ = std::thread([this] { run(); });
}

BatchWorker::~BatchWorker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  inputs_.wipe();
  outputs_.wipe();
}

bool BatchWorker::idle() const {
  std::lock_guard lock(mutex_);
  return !task_ && !running_ && !result_;
}

void BatchWorker::start(BatchTask task, std::vector<node::PeerEnvelope> early) {
  {
    std::lock_guard lock(mutex_);
    if (task_ || running_ || result_) throw Error(Component::Server, "batch worker is busy");
    running_ = true;
    inbox_.assign(std::make_move_iterator(early.begin()), std::make_move_iterator(early.end()));
    task_ = std::move(task);
  }
  wake_.notify_all();
}

void BatchWorker::deliver(node::PeerEnvelope envelope) {
  {
    std::lock_guard lock(mutex_);
    // Once its batch is over nothing reads the inbox until the next start: a neighbour that
    // went on sending for that batch would only fill memory.
    if (!running_) return;
    inbox_.push_back(std::move(envelope));
  }
  wake_.notify_all();
}

std::optional<BatchResult> BatchWorker::take_result() {
  std::lock_guard lock(mutex_);
  std::optional<BatchResult> out = std::move(result_);
  result_.reset();
  return out;
}

void BatchWorker::run() {
  if (priority_ == WorkerPriority::Background) {
    name_this_thread("batch ahead");
    // PRIO_PROCESS with a thread id sets that thread alone (Linux).
    if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kLowestPriority) != 0)
      log_.warn("batch worker priority not lowered", {{"error", std::string(std::strerror(errno))}});
  } else {
    name_this_thread("batch worker");
  }
  for (;;) {
    BatchTask task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || task_.has_value(); });
      if (stopping_) return;
      task = std::move(*task_);
      task_.reset();
    }
    std::chrono::milliseconds grace{0};
    std::string error;
    if (!task.program && task.header.circuit == wire::CircuitId::GcmKeyMaterial) {
      try {
        task.program = jobs::gcm_key_material_program();
        grace = jobs::krb_first_layer_grace(*task.program);
      } catch (const Error& failure) {
        error = failure.what();
        log_.error("batch circuit not built", {{"sequence", task.header.sequence}, {"error", error}});
      }
#if defined(MPC_FAULT_INJECTION)
      // A host starved under load while it computes a key: its worker stalls N ms before the
      // first layer, as its shell does (node/cluster_mode.cpp), so that its peers switch to the
      // pair without it while the batch still runs.
      if (const auto stall_ms = fault::armed("stall-generation")) {
        static std::atomic<bool> stalled{false};
        if (!stalled.exchange(true)) std::this_thread::sleep_for(std::chrono::milliseconds(*stall_ms));
      }
#endif
    } else if (!task.program && task.krb_circuits != nullptr) {
      try {
        task.program = task.krb_circuits->program(task.header.circuit, task.header.data_bytes, task.header.krb_combine);
        grace = jobs::krb_first_layer_grace(*task.program);
      } catch (const Error& failure) {
        error = failure.what();
        log_.error("batch circuit not built", {{"sequence", task.header.sequence}, {"error", error}});
      }
    }
    BatchResult result;
    if (task.program && wire::is_garbled(task.header.krb_evaluation)) {
      Stream stream(*this, task.header);
      stream.allow_extra_wait(grace);
      result = evaluate_garbled_batch(task, settings_.party, settings_.security, prf_keys_, stream, stream, log_,
                                      &prepared_);
      result.stats.bytes_received = stream.bytes_received();
    } else if (task.program) {
      Exchange exchange(*this, task.header, grace);
      // The GPU keeps no transcript for the AND check: actively secure batches run on the CPU.
      const bool gpu = gpu_evaluator_ && settings_.security != settings::Security::Active &&
                       cuda::gpu_preferred(*task.program, task.instances);
      rss3::Evaluator& evaluator = gpu ? *gpu_evaluator_ : *evaluator_;
      result = evaluate_batch(task, evaluator, prf_keys_, exchange, inputs_, outputs_, settings_.party,
                              settings_.security, log_);
    } else {
      result.header = task.header;
      result.error = "party " + std::to_string(settings_.party + 1) + " cannot build the batch's circuit: " + error;
    }
    for (auto& slice : task.slices) slice.key_share.clear();
    const bool key_material = task.header.circuit == wire::CircuitId::GcmKeyMaterial;
    {
      std::lock_guard lock(mutex_);
      running_ = false;
      inbox_.clear();
      result_ = std::move(result);
    }
    finished_.notify();
    if (key_material) {
      // A key's material is compiled for the one batch that needs it (about a gigabyte with its
      // evaluation plan): the program goes with the task, the plan from the evaluator's cache,
      // and the heap they grew back to the system rather than held for the server's lifetime.
      task = BatchTask();
      evaluator_->forget_plans();
      ::malloc_trim(0);
    }
  }
}

namespace {

// Wipes a batch's input matrix once: when asked, or at the latest when the batch ends, however
// it ends. The next batch then finds the matrix all zero (ShareMatrix::reset_wiped).
class InputsWipe {
 public:
  explicit InputsWipe(rss3::ShareMatrix& inputs) : inputs_(inputs) {}
  ~InputsWipe() { now(); }
  InputsWipe(const InputsWipe&) = delete;
  InputsWipe& operator=(const InputsWipe&) = delete;
  void now() {
    if (done_) return;
    inputs_.wipe();
    done_ = true;
  }

 private:
  rss3::ShareMatrix& inputs_;
  bool done_ = false;
};

}  // namespace

BatchResult evaluate_batch(BatchTask& task, rss3::Evaluator& evaluator, const PartyPrfKeys& prf_keys,
                           rss3::LayerExchange& exchange, rss3::ShareMatrix& inputs, rss3::ShareMatrix& outputs,
                           int party, settings::Security security, const Logger& log) {
  const auto started = std::chrono::steady_clock::now();
  BatchResult result;
  result.header = task.header;
  if (!task.program) {
    result.error = "batch without a program";
    log.error("batch evaluation failed", {{"sequence", task.header.sequence}, {"error", result.error}});
    return result;
  }
  const circuits::Program& program = *task.program;
  const std::size_t public_row = task.key_rows;
  const std::size_t secret_row = public_row + 8 * task.public_bytes;
  const std::size_t record = (program.num_outputs + 7) / 8;
  result.record_bytes = record;
  result.and_gates = program.and_gates;
  result.and_depth = program.and_depth;
  if (task.key_rows % 8 != 0 || program.num_inputs != secret_row + 8 * task.secret_bytes || record == 0) {
    result.error = "circuit of " + std::to_string(program.num_inputs) + " inputs and " +
                   std::to_string(program.num_outputs) + " outputs does not fit " + std::to_string(task.key_rows) +
                   " key rows, " + std::to_string(task.public_bytes) + " public and " +
                   std::to_string(task.secret_bytes) + " secret bytes per instance";
    log.error("batch evaluation failed", {{"sequence", task.header.sequence}, {"error", result.error}});
    return result;
  }

  // Inputs: each slice's key-row shares broadcast over its instances, then the public record
  // as the constant sharing (0, c), then the secret record's shares as they are.
  const std::size_t key_bytes = task.key_rows / 8;
  InputsWipe wipe_inputs(inputs);
  inputs.reset_wiped(program.num_inputs, task.instances);
  std::vector<std::uint8_t> public_records(task.instances * task.public_bytes);
  SecretBytes secret_x(task.instances * task.secret_bytes);
  SecretBytes secret_a(task.instances * task.secret_bytes);
  std::size_t offset = 0;
  for (const auto& slice : task.slices) {
    const bool used = !slice.key_share.empty();
    const std::size_t public_bytes = static_cast<std::size_t>(slice.blocks) * task.public_bytes;
    const std::size_t secret_bytes = static_cast<std::size_t>(slice.blocks) * task.secret_bytes;
    if (used && (slice.key_share.size() != 2 * key_bytes || slice.public_records.size() != public_bytes ||
                 (!slice.secret_records.empty() && slice.secret_records.size() != 2 * secret_bytes))) {
      wipe_inputs.now();
      result.error = "slice inputs of " + std::to_string(slice.key_share.size()) + " key, " +
                     std::to_string(slice.public_records.size()) + " public and " +
                     std::to_string(slice.secret_records.size()) + " secret bytes do not fit the batch's circuit";
      log.error("batch evaluation failed", {{"sequence", task.header.sequence}, {"error", result.error}});
      return result;
    }
    if (used) {
      jobs::broadcast_bits(inputs.x, inputs.words_per_row, 0, slice.key_share.span().first(key_bytes), offset, slice.blocks);
      jobs::broadcast_bits(inputs.a, inputs.words_per_row, 0, slice.key_share.span().subspan(key_bytes), offset,
                     slice.blocks);
      if (public_bytes != 0)
        std::memcpy(public_records.data() + offset * task.public_bytes, slice.public_records.data(), public_bytes);
      if (!slice.secret_records.empty() && secret_bytes != 0) {
        std::memcpy(secret_x.data() + offset * task.secret_bytes, slice.secret_records.data(), secret_bytes);
        std::memcpy(secret_a.data() + offset * task.secret_bytes, slice.secret_records.data() + secret_bytes,
                    secret_bytes);
      }
    }
    result.slice_used.push_back(used);
    offset += slice.blocks;
  }
  if (task.public_bytes != 0)
    rss3::slice(public_records, task.public_bytes, task.instances, inputs.a, inputs.words_per_row, public_row);
  if (task.secret_bytes != 0) {
    rss3::slice(secret_x.span(), task.secret_bytes, task.instances, inputs.x, inputs.words_per_row, secret_row);
    rss3::slice(secret_a.span(), task.secret_bytes, task.instances, inputs.a, inputs.words_per_row, secret_row);
    secret_x.clear();
    secret_a.clear();
  }

#if defined(MPC_FAULT_INJECTION)
  DeviatingExchange deviating(exchange, static_cast<std::uint32_t>(program.layers.size()));
  rss3::LayerExchange& link = deviating;
#else
  rss3::LayerExchange& link = exchange;
#endif
  const rss3::BatchNonce nonce{task.header.epoch, task.header.sequence};
  rss3::CorrelatedRandomness randomness(prf_keys.own, prf_keys.previous, nonce);
  try {
    if (security == settings::Security::Active) {
      rss3::AndTranscript transcript;
      result.stats = evaluator.evaluate_recorded(program, inputs, outputs, randomness, link, transcript);
      const std::size_t check_bytes = rss3::and_check::check_batch(
          transcript, party, prf_keys.own, prf_keys.previous, nonce, link,
          static_cast<std::uint32_t>(program.layers.size()), prf_keys.check_identities());
      // Each of the check's messages comes from the previous party with the size of the one sent.
      result.stats.bytes_sent += check_bytes;
      result.stats.bytes_received += check_bytes;
    } else {
      result.stats = evaluator.evaluate(program, inputs, outputs, randomness, link);
    }
  } catch (const PeerError& error) {
    wipe_inputs.now();
    outputs.wipe();
    result.error = error.what();
    if (const auto* failed = dynamic_cast<const VerificationError*>(&error)) {
      result.failure = wire::Status::VerificationFailed;
      result.failed_check = failed->check();
      result.failed_peer = failed->peer();
      if (const auto* found = dynamic_cast<const DeviationFound*>(&error)) {
        result.claims = found->claims();
        result.check_concluded = found->concluded();
      }
      log.error("batch refused: a check of active security failed",
                {{"sequence", task.header.sequence}, {"error", error.what()}});
    } else if (dynamic_cast<const RetryableError*>(&error) != nullptr) {
      result.failure = wire::Status::Regrouping;  // a server refused the batch before computing
    }
    return result;
  } catch (const Error& error) {
    wipe_inputs.now();
    outputs.wipe();
    result.error = error.what();
    log.error("batch evaluation failed", {{"sequence", task.header.sequence}, {"error", error.what()}});
    return result;
  }
  wipe_inputs.now();
  result.masked.x.resize(task.instances * record);
  result.masked.a.resize(task.instances * record);
  jobs::unslice_output_records(outputs.x, outputs.words_per_row, program.num_outputs, task.instances, result.masked.x);
  jobs::unslice_output_records(outputs.a, outputs.words_per_row, program.num_outputs, task.instances, result.masked.a);
  outputs.wipe();

  // The kept instances leave before masking: a server stores its own share as the circuit
  // made it, and the client never gets these instances.
  offset = 0;
  for (const auto& slice : task.slices) {
    SecretBytes kept;
    if (slice.keep_every != 0 && !slice.key_share.empty()) {
      const std::size_t count = slice.blocks / slice.keep_every;
      kept.resize(count * 2 * record);
      for (std::size_t k = 0; k < count; ++k) {
        const std::size_t instance = offset + k * slice.keep_every;
        std::memcpy(kept.data() + k * 2 * record, result.masked.x.data() + instance * record, record);
        std::memcpy(kept.data() + k * 2 * record + record, result.masked.a.data() + instance * record, record);
      }
    }
    result.kept.push_back(std::move(kept));
    offset += slice.blocks;
  }

  rss3::mask_output_share(randomness, 0, result.masked);
  // Bits past the last output carry only their masks: cleared, so every result byte opens
  // to the output bits alone and its unused bits are zero in both components.
  if (const std::size_t used_bits = program.num_outputs % 8; used_bits != 0) {
    const auto keep = static_cast<std::uint8_t>((1u << used_bits) - 1);
    for (std::size_t n = 0; n < task.instances; ++n) {
      result.masked.x[n * record + record - 1] &= keep;
      result.masked.a[n * record + record - 1] &= keep;
    }
  }
  result.succeeded = true;
  result.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
  return result;
}

}  // namespace mpc::three_party_engine
