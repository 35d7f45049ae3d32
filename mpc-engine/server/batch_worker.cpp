#include "server/batch_worker.hpp"

#include <cstring>
#include <variant>

#include "common/error.hpp"
#include "protocol/rss3/output.hpp"
#include "protocol/rss3/transpose.hpp"
#include "server/batch_inputs.hpp"
#include "server/layer_messages.hpp"

namespace mpc::server {

// LayerExchange over the worker's own connection to the next party and its inbox.
class BatchWorker::Exchange final : public rss3::LayerExchange {
 public:
  Exchange(BatchWorker& worker, const wire::BatchHeader& header) : worker_(worker), header_(header) {}

  void exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing, std::span<std::uint8_t> incoming) override {
    const int party = worker_.settings_.party;
    const int next = rss3::next_party(party);
    const int previous = rss3::previous_party(party);
    build_layer_frame(frame_, {header_.epoch, header_.sequence}, layer, outgoing);
    if (!worker_.next_party_->send_until(
            frame_, std::chrono::steady_clock::now() + connect_grace(worker_.settings_.limits.peer_timeout)))
      throw PeerError(Component::Server, "party " + std::to_string(next + 1) + " is unreachable");

    const auto timeout = worker_.settings_.limits.peer_timeout;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock lock(worker_.mutex_);
    for (;;) {
      if (take_layer_message(worker_.inbox_, previous, layer, incoming)) return;
      if (worker_.stopping_) throw PeerError(Component::Server, "server stopping");
      if (worker_.wake_.wait_until(lock, deadline) == std::cv_status::timeout &&
          std::chrono::steady_clock::now() >= deadline)
        throw PeerError(Component::Server, "no layer " + std::to_string(layer) + " message from party " +
                                               std::to_string(previous + 1) + " within " +
                                               std::to_string(timeout.count()) + " ms");
    }
  }

 private:
  BatchWorker& worker_;
  const wire::BatchHeader& header_;
  std::vector<std::uint8_t> frame_;
};


BatchWorker::BatchWorker(transport::Context& context, const settings::ServerSettings& settings,
                         const transport::CurveKeyPair& own, const PartyPrfKeys& prf_keys,
                         std::unique_ptr<rss3::Evaluator> evaluator, Wakeup& finished, const Logger& log)
    : settings_(settings), prf_keys_(prf_keys), evaluator_(std::move(evaluator)), finished_(finished), log_(log) {
  const int next = rss3::next_party(settings_.party);
  for (const auto& peer : settings_.peers)
    if (peer.party == next)
      next_party_ = std::make_unique<transport::Connection>(context, peer.endpoint, peer.public_key, own,
                                                            peer_link_options());
  if (!next_party_) throw Error(Component::Server, "no peer configured as the next party");
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

void BatchWorker::start(BatchTask task) {
  {
    std::lock_guard lock(mutex_);
    if (task_ || running_ || result_) throw Error(Component::Server, "batch worker is busy");
    running_ = std::make_pair(task.header.epoch, task.header.sequence);
    inbox_.clear();
    task_ = std::move(task);
  }
  wake_.notify_all();
}

std::optional<std::pair<std::uint64_t, std::uint32_t>> BatchWorker::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

void BatchWorker::deliver(PeerEnvelope envelope) {
  {
    std::lock_guard lock(mutex_);
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
  for (;;) {
    BatchTask task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || task_.has_value(); });
      if (stopping_) return;
      task = std::move(*task_);
      task_.reset();
    }
    Exchange exchange(*this, task.header);
    BatchResult result = evaluate_batch(task, *evaluator_, prf_keys_, exchange, inputs_, outputs_, log_);
    for (auto& slice : task.slices) slice.key_share.clear();
    {
      std::lock_guard lock(mutex_);
      running_.reset();
      inbox_.clear();
      result_ = std::move(result);
    }
    finished_.notify();
  }
}

BatchResult evaluate_batch(BatchTask& task, rss3::Evaluator& evaluator, const PartyPrfKeys& prf_keys,
                           rss3::LayerExchange& exchange, rss3::ShareMatrix& inputs, rss3::ShareMatrix& outputs,
                           const Logger& log) {
  const auto started = std::chrono::steady_clock::now();
  BatchResult result;
  result.header = task.header;
  const circuits::Program& program = *task.program;
  // Inputs: round keys, the public block, and for the tag check a secret block. Outputs: the
  // 128-bit block, and for the tag check one more bit.
  const bool secret_block = program.num_inputs == task.key_rows + 256;
  const bool extra_bit = program.num_outputs == 129;
  if ((!secret_block && program.num_inputs != task.key_rows + 128) || (!extra_bit && program.num_outputs != 128)) {
    result.error = "circuit of " + std::to_string(program.num_inputs) + " inputs and " +
                   std::to_string(program.num_outputs) + " outputs is not one a batch can run";
    log.error("batch evaluation failed", {{"sequence", task.header.sequence}, {"error", result.error}});
    return result;
  }

  // Inputs: each slice's round-key shares broadcast over its instances, then the public
  // block as the constant sharing (0, c), then the secret block's shares as they are.
  inputs.reset(program.num_inputs, task.instances);
  std::vector<std::uint8_t> blocks(task.instances * 16);
  SecretBytes secret_x(secret_block ? task.instances * 16 : 0);
  SecretBytes secret_a(secret_block ? task.instances * 16 : 0);
  std::size_t offset = 0;
  for (const auto& slice : task.slices) {
    if (!slice.key_share.empty()) {
      const std::size_t half = slice.key_share.size() / 2;
      broadcast_bits(inputs.x, inputs.words_per_row, 0, slice.key_share.span().first(half), offset, slice.blocks);
      broadcast_bits(inputs.a, inputs.words_per_row, 0, slice.key_share.span().subspan(half), offset, slice.blocks);
      std::memcpy(blocks.data() + offset * 16, slice.public_blocks.data(), slice.public_blocks.size());
      if (secret_block && !slice.secret_blocks.empty()) {
        const std::size_t bytes = static_cast<std::size_t>(slice.blocks) * 16;
        std::memcpy(secret_x.data() + offset * 16, slice.secret_blocks.data(), bytes);
        std::memcpy(secret_a.data() + offset * 16, slice.secret_blocks.data() + bytes, bytes);
      }
    }
    result.slice_used.push_back(!slice.key_share.empty());
    offset += slice.blocks;
  }
  rss3::slice(blocks, 16, task.instances, inputs.a, inputs.words_per_row, task.key_rows);
  if (secret_block) {
    rss3::slice(secret_x.span(), 16, task.instances, inputs.x, inputs.words_per_row, task.key_rows + 128);
    rss3::slice(secret_a.span(), 16, task.instances, inputs.a, inputs.words_per_row, task.key_rows + 128);
    secret_x.clear();
    secret_a.clear();
  }

  rss3::CorrelatedRandomness randomness(prf_keys.own, prf_keys.previous, {task.header.epoch, task.header.sequence});
  try {
    result.stats = evaluator.evaluate(program, inputs, outputs, randomness, exchange);
  } catch (const PeerError& error) {
    inputs.wipe();
    result.error = error.what();
    return result;
  } catch (const Error& error) {
    inputs.wipe();
    result.error = error.what();
    log.error("batch evaluation failed", {{"sequence", task.header.sequence}, {"error", error.what()}});
    return result;
  }
  inputs.wipe();
  result.masked.x.resize(task.instances * 16);
  result.masked.a.resize(task.instances * 16);
  rss3::unslice(outputs.x, outputs.words_per_row, 0, 16, task.instances, result.masked.x);
  rss3::unslice(outputs.a, outputs.words_per_row, 0, 16, task.instances, result.masked.a);
  if (extra_bit) {
    result.masked_bits.x.resize(task.instances);
    result.masked_bits.a.resize(task.instances);
    const auto row_x = outputs.x_row(128);
    const auto row_a = outputs.a_row(128);
    for (std::size_t n = 0; n < task.instances; ++n) {
      result.masked_bits.x[n] = static_cast<std::uint8_t>((row_x[n / 64] >> (n % 64)) & 1);
      result.masked_bits.a[n] = static_cast<std::uint8_t>((row_a[n / 64] >> (n % 64)) & 1);
    }
  }
  outputs.wipe();

  // The kept instances leave before masking: a server stores its own share as the circuit
  // made it, and the client never gets these instances.
  offset = 0;
  for (const auto& slice : task.slices) {
    SecretBytes kept;
    if (slice.keep_every != 0 && !slice.key_share.empty()) {
      const std::size_t count = slice.blocks / slice.keep_every;
      kept.resize(count * 32);
      for (std::size_t k = 0; k < count; ++k) {
        const std::size_t instance = offset + k * slice.keep_every;
        std::memcpy(kept.data() + k * 32, result.masked.x.data() + instance * 16, 16);
        std::memcpy(kept.data() + k * 32 + 16, result.masked.a.data() + instance * 16, 16);
      }
    }
    result.kept.push_back(std::move(kept));
    offset += slice.blocks;
  }

  rss3::mask_output_share(randomness, 0, result.masked);
  if (extra_bit) {
    SecretBytes own(task.instances);
    SecretBytes previous(task.instances);
    randomness.output_masks(task.instances * 16, own.span(), previous.span());
    for (std::size_t n = 0; n < task.instances; ++n) {
      result.masked_bits.x[n] ^= own[n] & 1;
      result.masked_bits.a[n] ^= previous[n] & 1;
    }
  }
  result.succeeded = true;
  result.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
  return result;
}

}  // namespace mpc::server
