// tests/unit/cuda/emulated_evaluator.hpp: the GPU evaluator's algorithm run on the CPU.
//
// Same plan (device_plan.hpp, and staged_plan.hpp for the shared-memory kernel), same
// workspace layout and byte offsets, same per-lane primitives (layer_ops.hpp: apply_op
// over lane_view; staged_ops.hpp: apply_staged_op over blocks of W words, each with its
// own poisoned "shared memory"), same buffer rotation, same segment-by-segment message
// copies (message_prefix_bytes), same alpha production (CorrelatedRandomness::next_alpha
// into the outgoing buffer, or the T-table AES of aes_ttable.hpp from a DevicePrf), same
// input staging (input_staging.hpp's plan carried through slots by a StagingPool's
// threads, each pass waiting for its own group only) as cuda/cuda_evaluator.cpp and
// cuda/kernels.cu; "device memory" is a host buffer filled
// with a poison pattern, so a read of a word nothing wrote would surface as a mismatch.
// The ops of a level run in program order or reversed: a level whose ops depended on
// each other would give different results in the two orders.
//
// What it does not cover: the CUDA runtime calls themselves (streams, events, copies,
// launch configuration), which only a GPU run checks (tests/unit/cuda/gpu_*).
#pragma once

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cuda/aes_ttable.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "cuda/device_helpers.hpp"
#include "cuda/device_plan.hpp"
#include "cuda/input_staging.hpp"
#include "cuda/layer_ops.hpp"
#include "cuda/staged_ops.hpp"
#include "cuda/staging_pool.hpp"
#include "lazy_upload.hpp"

namespace mpc::cuda::test {

enum class LevelOrder { Forward, Reverse };

// Which kernel to emulate: the device-memory one (staged_words == 0) or the staged one with
// blocks of staged_words words.
struct EmulatedKernel {
  std::uint32_t staged_words = 0;
};

// The input staging's threads and slots (small slots by default: many pieces per group).
struct EmulatedStaging {
  unsigned threads = 2;
  std::size_t slots = 3;
  std::uint64_t slot_bytes = 4096;
};

class EmulatedGpuEvaluator final : public rss3::Evaluator {
 public:
  explicit EmulatedGpuEvaluator(LevelOrder order = LevelOrder::Forward, std::optional<DevicePrf> prf = std::nullopt,
                                std::uint64_t max_segments = 4, EmulatedKernel kernel = {},
                                EmulatedStaging staging = {})
      : order_(order), prf_(prf), max_segments_(max_segments), kernel_(kernel), staging_(staging) {}

  rss3::EvaluationStats evaluate(const circuits::Program& program, const rss3::ShareMatrix& inputs,
                                 rss3::ShareMatrix& outputs, rss3::CorrelatedRandomness& randomness,
                                 rss3::LayerExchange& exchange) override {
    using namespace detail;
    if (inputs.rows != program.num_inputs) throw Error(Component::Protocol, "input rows");
    const DevicePlan plan = build_device_plan(program);
    const std::uint64_t n = inputs.instances;
    outputs = rss3::ShareMatrix(program.num_outputs, n);
    rss3::EvaluationStats stats;
    if (n == 0) return stats;

    const bool staged = kernel_.staged_words != 0;
    if (staged && !plan.staged.usable) throw Error(Component::Protocol, "staged plan not usable");
    const WorkspaceLayout layout = workspace_layout(plan, n, staged);
    std::vector<std::uint64_t> device((layout.total + 7) / 8, 0xa5a5a5a5a5a5a5a5ull);
    auto at = [&](std::size_t offset) { return reinterpret_cast<std::uint8_t*>(device.data()) + offset; };
    std::vector<std::uint8_t> host_out(layout.message_capacity), host_in(layout.message_capacity),
        host_alpha(layout.message_capacity);
    const std::uint64_t words = words_for(n), pitch = layout.pitch, chunks = chunks_for(n);

    // Input upload: padding words zeroed first; the rows go through the staging threads'
    // slots and a copy queue that runs only as far as something waits for it, so a pass
    // sees the rows of its group and of earlier groups, and rows of later groups only by
    // chance (rows no pass loads stay poisoned).
    auto* in_x = reinterpret_cast<std::uint64_t*>(at(layout.in_x));
    auto* in_a = reinterpret_cast<std::uint64_t*>(at(layout.in_a));
    for (std::uint32_t r = 0; r < plan.num_inputs; ++r)
      for (std::uint64_t w = words; w < pitch; ++w) in_x[r * pitch + w] = in_a[r * pitch + w] = 0;
    const StagingPlan staging_plan = evaluator_input_staging(plan, n, staging_.slot_bytes);
    if (staging_plan.groups() != plan.passes.size())
      throw Error(Component::Protocol, "staging plan: one group per pass expected");
    LazyUpload engine(staging_.slots, staging_.slot_bytes);
    engine.configure({{at(layout.in_x), pitch * 8, 0}, {at(layout.in_a), pitch * 8, 0}});
    StagingPool stagers(engine, staging_.threads);
    stagers.begin(staging_plan,
                  {{reinterpret_cast<const std::uint8_t*>(inputs.x.data()), words * 8},
                   {reinterpret_cast<const std::uint8_t*>(inputs.a.data()), words * 8}},
                  staging_plan.groups());
    auto upload_rows = [&](std::size_t pass) {
      if (plan.input_row_bounds[pass] == plan.input_row_bounds[pass + 1]) return;
      stagers.wait_group(static_cast<std::uint32_t>(pass));
      if (!engine.complete_group(static_cast<std::uint32_t>(pass)))
        throw Error(Component::Protocol, "emulated device: waited for a group nobody closed");
    };

    AlphaKeysHost keys{};
    std::uint64_t counter = 0;
    if (prf_) {
      keys.own = aes128_expand_key(prf_->own_key.data(), tables_);
      keys.previous = aes128_expand_key(prf_->previous_key.data(), tables_);
      std::uint32_t block[4];
      counter_block_words(prf_->nonce.epoch, prf_->nonce.sequence, 0, block);
      std::copy(block, block + 3, keys.prefix);
      counter = prf_->first_block;
    }
    auto produce_alpha = [&](std::size_t pass) {
      const std::uint64_t bytes = alpha_bytes(message_bytes(n, plan.passes[pass].ands));
      std::uint8_t* out = at(layout.msg_out[pass % 3]);
      if (prf_) {
        for (std::uint64_t j = 0; j < bytes / 16; ++j) {
          const std::uint32_t block[4] = {keys.prefix[0], keys.prefix[1], keys.prefix[2],
                                          static_cast<std::uint32_t>(counter + j)};
          std::uint32_t le[4];
          alpha_block(keys.own.w, keys.previous.w, tables_.te, tables_.sbox, block, le);
          std::memcpy(out + 16 * j, le, 16);
        }
        counter += bytes / 16;
      } else {
        randomness.next_alpha({host_alpha.data(), static_cast<std::size_t>(bytes)});
        std::memcpy(out, host_alpha.data(), bytes);
      }
    };

    const std::uint64_t segments = std::min<std::uint64_t>(max_segments_, chunks);
    std::vector<std::uint64_t> seg(segments + 1);
    for (std::uint64_t s = 0; s <= segments; ++s) seg[s] = chunks * s / segments;

    PassArgs args{};
    args.instances = n;
    args.pitch = pitch;
    args.state = reinterpret_cast<std::uint64_t*>(at(layout.state));
    args.in_x = in_x;
    args.in_a = in_a;
    args.out_x = reinterpret_cast<std::uint64_t*>(at(layout.out_x));
    args.out_a = reinterpret_cast<std::uint64_t*>(at(layout.out_a));
    args.ops = plan.ops.data();

    StagedArgs sargs{};
    sargs.instances = n;
    sargs.pitch = pitch;
    sargs.state = args.state;
    sargs.in_x = in_x;
    sargs.in_a = in_a;
    sargs.out_x = args.out_x;
    sargs.out_a = args.out_a;
    sargs.ops = plan.staged.ops.data();

    if (plan.passes[0].ands != 0) produce_alpha(0);
    for (std::size_t p = 0; p < plan.passes.size(); ++p) {
      const PassPlan& pass = plan.passes[p];
      args.level_bounds = plan.level_bounds.data() + pass.first_level;
      args.levels = pass.levels;
      args.ands = pass.ands;
      args.prev_ands = pass.prev_ands;
      args.and_msg = at(layout.msg_out[p % 3]);
      args.fin_out = at(layout.msg_out[(p + 2) % 3]);
      args.fin_in = at(layout.msg_in[(p + 1) & 1]);
      upload_rows(p);
      if (staged) {
        const StagedPassPlan& sp = plan.staged.passes[p];
        sargs.level_bounds = plan.staged.level_bounds.data() + sp.first_level;
        sargs.levels = sp.levels;
        sargs.ands = sp.ands;
        sargs.prev_ands = sp.prev_ands;
        sargs.and_msg = args.and_msg;
        sargs.fin_out = args.fin_out;
        sargs.fin_in = args.fin_in;
        smem_regs_ = sp.regs;
      }
      for (std::uint64_t s = 0; s < segments; ++s) {
        if (pass.prev_ands != 0) {
          const std::uint64_t lo = message_prefix_bytes(n, pass.prev_ands, seg[s]);
          const std::uint64_t hi = message_prefix_bytes(n, pass.prev_ands, seg[s + 1]);
          std::memcpy(at(layout.msg_in[(p + 1) & 1]) + lo, host_in.data() + lo, hi - lo);
        }
        if (staged) {
          const std::uint32_t words_per_block = kernel_.staged_words;
          for (std::uint64_t w = seg[s] * kChunkWords; w < seg[s + 1] * kChunkWords; w += words_per_block)
            run_staged_block(sargs, w);
        } else {
          for (std::uint64_t c = seg[s]; c < seg[s + 1]; ++c) run_block(args, c);
        }
        if (pass.ands != 0) {
          const std::uint64_t lo = message_prefix_bytes(n, pass.ands, seg[s]);
          const std::uint64_t hi = message_prefix_bytes(n, pass.ands, seg[s + 1]);
          std::memcpy(host_out.data() + lo, args.and_msg + lo, hi - lo);
        }
      }
      if (p + 1 < plan.passes.size() && plan.passes[p + 1].ands != 0) produce_alpha(p + 1);
      if (pass.ands != 0) {
        const std::size_t message = message_bytes(n, pass.ands);
        exchange.exchange(static_cast<std::uint32_t>(p), {host_out.data(), message}, {host_in.data(), message});
        stats.bytes_sent += message;
        stats.layers_exchanged += 1;
      }
    }
    stagers.finish();
    if (!engine.violations().empty()) throw Error(Component::Protocol, "staging engine misused:\n" + engine.violations());
    for (std::uint32_t r = 0; r < plan.num_outputs; ++r)
      for (std::uint64_t w = 0; w < words; ++w) {
        outputs.x[r * words + w] = args.out_x[r * pitch + w];
        outputs.a[r * words + w] = args.out_a[r * pitch + w];
      }
    return stats;
  }

  std::string name() const override { return "emulated-gpu"; }

 private:
  struct AlphaKeysHost {
    detail::Aes128RoundKeys own, previous;
    std::uint32_t prefix[3];
  };

  // One block of the pass kernel: its levels in turn, the ops of a level in the chosen
  // order, each op over the 32 lanes.
  void run_block(const detail::PassArgs& args, std::uint64_t chunk) const {
    for (std::uint32_t level = 0; level < args.levels; ++level) {
      const std::uint32_t begin = args.level_bounds[level], end = args.level_bounds[level + 1];
      for (std::uint32_t k = 0; k < end - begin; ++k) {
        const std::uint32_t i = order_ == LevelOrder::Forward ? begin + k : end - 1 - k;
        for (std::uint32_t lane = 0; lane < detail::kChunkWords; ++lane)
          detail::apply_op(args, detail::lane_view(args, chunk, lane), args.ops[i]);
      }
    }
  }

  // One block of the staged kernel: words [first_word, first_word + W), shared memory
  // poisoned before the pass (a read of a register nothing wrote surfaces as a mismatch).
  void run_staged_block(const detail::StagedArgs& args, std::uint64_t first_word) {
    const std::uint32_t words = kernel_.staged_words;
    smem_.assign(std::size_t{2} * smem_regs_ * words, 0x5a5a5a5a5a5a5a5aull);
    for (std::uint32_t level = 0; level < args.levels; ++level) {
      const std::uint32_t begin = args.level_bounds[level], end = args.level_bounds[level + 1];
      for (std::uint32_t k = 0; k < end - begin; ++k) {
        const std::uint32_t i = order_ == LevelOrder::Forward ? begin + k : end - 1 - k;
        for (std::uint32_t local = 0; local < words; ++local)
          detail::apply_staged_op(args, detail::staged_lane_view(args, first_word + local), smem_.data(), words, local,
                                  args.ops[i]);
      }
    }
  }

  LevelOrder order_;
  std::optional<DevicePrf> prf_;
  std::uint64_t max_segments_;
  EmulatedKernel kernel_;
  EmulatedStaging staging_;
  std::uint32_t smem_regs_ = 0;
  std::vector<std::uint64_t> smem_;
  static constexpr detail::AesTables tables_ = detail::make_aes_tables();
};

}  // namespace mpc::cuda::test
