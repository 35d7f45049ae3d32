// Bitsliced layer-by-layer evaluation on one party (Araki, Furukawa, Lindell, Nof,
// Ohara: "High-Throughput Semi-Honest Secure Three-Party Computation with an Honest
// Majority", ACM CCS 2016, eprint 2016/768).
//
// Optimisations:
// - The Program is translated once per call into a compact instruction stream of runs
//   (one header per run of equal opcodes, operands as slot numbers), so the inner loop
//   dispatches once per run rather than once per gate.
// - Instances are processed in chunks of kChunkInstances (the message layout), and each
//   chunk in tiles of W words per share component, so the slots of one tile stay in L1/L2
//   while a layer runs over them. Tile state is laid out slot by slot, x then a.
// - The finish phase of layer L-1 is fused into the pass of layer L (same tile, same
//   cache residency), and the output copy into the last pass.
// - alpha is generated straight into the outgoing message (AES-CTR in place), and the AND
//   local phase XORs x0&x1 ^ a0&a1 into it: the message is final when the pass ends.
// - The interpreter is compiled per ISA (portable / AVX2 / AVX-512) from one template.
//
// alpha order (identical at every party): for each layer with ANDs, the next
// round_up(message_bytes, 16) bytes of the alpha stream, message byte j XORed with alpha
// byte j. (Drawn chunk by chunk here; a full chunk's share is a multiple of 16 bytes.)
#include "protocol/rss3/evaluator.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/evaluator_plan.hpp"

namespace mpc::rss3 {

static_assert(std::endian::native == std::endian::little,
              "the message layout and ShareMatrix words are read as little-endian bytes");
static_assert(detail::kMsgStride * 8 == kChunkInstances);

namespace {

constexpr std::size_t kChunkWords = kChunkInstances / 64;

[[noreturn]] void program_error(const std::string& what) {
  throw FormatError(Component::Protocol, "invalid program: " + what);
}

std::size_t checked_mul(std::size_t a, std::size_t b, const char* what) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a)
    throw Error(Component::Protocol, std::string("batch too large: ") + what);
  return a * b;
}

// 64-byte aligned scratch that keeps its capacity between evaluations and is wiped
// (secret shares and masked shares pass through it) before reuse or release.
template <class T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { release(); }

  T* data() noexcept { return data_; }
  // Ensures room for `count` elements (contents unspecified: every reader of this scratch
  // reads only what the same evaluation wrote).
  T* prepare(std::size_t count) {
    if (count > capacity_) {
      release();
      const std::size_t bytes = checked_mul(count, sizeof(T), "buffer") / 64 * 64 + 64;
      void* p = std::aligned_alloc(64, bytes);
      if (p == nullptr) throw std::bad_alloc();
      data_ = static_cast<T*>(p);
      capacity_ = bytes / sizeof(T);
    }
    used_ = std::max(used_, count);
    return data_;
  }
  void wipe_used() noexcept {
    if (used_ != 0) mpc::wipe(data_, used_ * sizeof(T));
    used_ = 0;
  }
  void release() noexcept {
    if (data_ != nullptr) {
      mpc::wipe(data_, capacity_ * sizeof(T));
      std::free(data_);
    }
    data_ = nullptr;
    capacity_ = 0;
    used_ = 0;
  }

 private:
  T* data_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t used_ = 0;
};

struct Workspace {
  AlignedBuffer<std::uint64_t> state;
  AlignedBuffer<std::uint8_t> out_msg[2];
  AlignedBuffer<std::uint8_t> and_scratch;
  AlignedBuffer<std::uint8_t> fin_out_scratch;
  AlignedBuffer<std::uint8_t> fin_in_scratch;
  AlignedBuffer<std::uint8_t> alpha_scratch;
  AlignedBuffer<std::uint8_t> record_scratch;
  void wipe() noexcept {
    record_scratch.wipe_used();
    state.wipe_used();
    for (auto& b : out_msg) b.wipe_used();
    and_scratch.wipe_used();
    fin_out_scratch.wipe_used();
    fin_in_scratch.wipe_used();
    alpha_scratch.wipe_used();
  }
};

// Appends ops to the instruction stream, merging equal opcodes into runs.
class CodeBuilder {
 public:
  explicit CodeBuilder(std::vector<std::uint32_t>& code) : code_(code) {}
  void op(std::uint32_t opcode, std::initializer_list<std::uint32_t> operands) {
    if (run_header_ != kNone && run_opcode_ == opcode && (code_[run_header_] >> detail::kOpBits) < detail::kMaxRun) {
      code_[run_header_] += 1u << detail::kOpBits;
    } else {
      run_header_ = code_.size();
      run_opcode_ = opcode;
      code_.push_back(opcode | (1u << detail::kOpBits));
    }
    code_.insert(code_.end(), operands);
  }
  void end() {
    code_.push_back(detail::kOpEnd);
    run_header_ = kNone;
  }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::uint32_t>& code_;
  std::size_t run_header_ = kNone;
  std::uint32_t run_opcode_ = 0;
};

// Reorders one layer's linear ops (all indices already validated) so that an op rarely
// reads the slot written by one of the two ops just before it: such a dependency runs
// through a store and a reload, whose forwarding latency would stall the interpreter.
// Only moves an op ahead of ops it does not conflict with (no read-after-write,
// write-after-read or write-after-write on a slot), so the result is unchanged.
std::vector<std::uint32_t> schedule_linear(const std::vector<circuits::LinearOp>& ops) {
  constexpr std::size_t kWindow = 12;
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  auto reads = [](const circuits::LinearOp& op, std::uint32_t slot) {
    switch (op.kind) {
      case circuits::OpKind::Xor: return op.in0 == slot || op.in1 == slot;
      case circuits::OpKind::Inv:
      case circuits::OpKind::Copy: return op.in0 == slot;
      default: return false;
    }
  };
  auto conflict = [&](const circuits::LinearOp& later, const circuits::LinearOp& earlier) {
    return reads(later, earlier.out) || reads(earlier, later.out) || later.out == earlier.out;
  };
  std::vector<std::uint32_t> order;
  order.reserve(ops.size());
  std::vector<std::uint32_t> window;
  std::size_t next = 0;
  std::uint32_t last1 = kNone, last2 = kNone;
  while (order.size() < ops.size()) {
    while (window.size() < kWindow && next < ops.size()) window.push_back(static_cast<std::uint32_t>(next++));
    std::size_t pick = 0;
    for (std::size_t w = 0; w < window.size(); ++w) {
      const circuits::LinearOp& candidate = ops[window[w]];
      bool movable = true;
      for (std::size_t e = 0; e < w && movable; ++e) movable = !conflict(candidate, ops[window[e]]);
      if (!movable) continue;
      if (reads(candidate, last1) || reads(candidate, last2)) continue;
      pick = w;
      break;
    }
    const std::uint32_t chosen = window[pick];
    window.erase(window.begin() + static_cast<std::ptrdiff_t>(pick));
    order.push_back(chosen);
    last2 = last1;
    last1 = ops[chosen].out;
  }
  return order;
}

// A validated program translated into one instruction stream per pass.
struct Plan {
  std::vector<std::uint32_t> code;
  std::vector<std::size_t> pass_start;
  std::size_t passes = 0;
  std::vector<std::uint32_t> signature;  // the program it was built from (see signature())
};

// Every field of a Program that the plan depends on, flattened, to recognise a program
// seen before (plans are cached by content, never by address).
void append_signature(const circuits::Program& program, std::vector<std::uint32_t>& out) {
  out.push_back(program.num_inputs);
  out.push_back(program.num_outputs);
  out.push_back(program.num_slots);
  out.push_back(static_cast<std::uint32_t>(program.layers.size()));
  out.push_back(static_cast<std::uint32_t>(program.output_slots.size()));
  for (const auto& layer : program.layers) {
    out.push_back(static_cast<std::uint32_t>(layer.linear.size()));
    out.push_back(static_cast<std::uint32_t>(layer.ands.size()));
    for (const auto& op : layer.linear) {
      out.push_back(static_cast<std::uint32_t>(op.kind));
      out.push_back(op.out);
      out.push_back(op.in0);
      out.push_back(op.in1);
    }
    for (const auto& g : layer.ands) {
      out.push_back(g.out);
      out.push_back(g.in0);
      out.push_back(g.in1);
    }
  }
  out.insert(out.end(), program.output_slots.begin(), program.output_slots.end());
}

// Same comparison as building the signature and comparing, without allocating. Sizes first, so
// that the loops over a layer's operations are plain comparisons of arrays: a server matches
// its program on every batch.
bool matches_signature(const circuits::Program& program, const std::vector<std::uint32_t>& signature) {
  static_assert(sizeof(circuits::AndOp) == 3 * sizeof(std::uint32_t), "AND operations without padding");
  std::size_t expected = 5 + program.output_slots.size();
  for (const auto& layer : program.layers) expected += 2 + 4 * layer.linear.size() + 3 * layer.ands.size();
  if (signature.size() != expected) return false;
  const std::uint32_t* s = signature.data();
  if (s[0] != program.num_inputs || s[1] != program.num_outputs || s[2] != program.num_slots ||
      s[3] != program.layers.size() || s[4] != program.output_slots.size())
    return false;
  s += 5;
  for (const auto& layer : program.layers) {
    if (s[0] != layer.linear.size() || s[1] != layer.ands.size()) return false;
    s += 2;
    std::uint32_t differ = 0;
    for (const auto& op : layer.linear) {
      differ |= (s[0] ^ static_cast<std::uint32_t>(op.kind)) | (s[1] ^ op.out) | (s[2] ^ op.in0) | (s[3] ^ op.in1);
      s += 4;
    }
    if (differ != 0 || (!layer.ands.empty() && std::memcmp(layer.ands.data(), s, 12 * layer.ands.size()) != 0))
      return false;
    s += 3 * layer.ands.size();
  }
  return program.output_slots.empty() ||
         std::memcmp(program.output_slots.data(), s, 4 * program.output_slots.size()) == 0;
}

// Validates the program: every index in range, nothing read before it is written (so no
// evaluation ever reads memory it did not write), constants 0 or 1, known op kinds.
void validate_program(const circuits::Program& program) {
  const std::uint32_t slots = program.num_slots;
  const std::size_t layers = program.layers.size();
  if (program.output_slots.size() != program.num_outputs)
    program_error("output_slots has " + std::to_string(program.output_slots.size()) + " entries, num_outputs is " +
                  std::to_string(program.num_outputs));
  std::vector<std::uint8_t> defined(slots, 0);
  auto readable = [&](std::uint32_t s, std::size_t layer, const char* where) {
    if (s >= slots || defined[s] == 0)
      program_error(std::string(where) + " in layer " + std::to_string(layer) + " reads slot " + std::to_string(s) +
                    (s >= slots ? " (out of range)" : " before it is written"));
  };
  auto writable = [&](std::uint32_t s, std::size_t layer, const char* where) {
    if (s >= slots)
      program_error(std::string(where) + " in layer " + std::to_string(layer) + " writes slot " + std::to_string(s) +
                    " (out of range)");
  };
  for (std::size_t l = 0; l < layers; ++l) {
    const circuits::Layer& layer = program.layers[l];
    for (const circuits::LinearOp& op : layer.linear) {
      writable(op.out, l, "linear op");
      switch (op.kind) {
        case circuits::OpKind::Xor:
          readable(op.in0, l, "XOR");
          readable(op.in1, l, "XOR");
          break;
        case circuits::OpKind::Inv:
          readable(op.in0, l, "INV");
          break;
        case circuits::OpKind::Copy:
          readable(op.in0, l, "COPY");
          break;
        case circuits::OpKind::Const:
          if (op.in0 > 1) program_error("constant " + std::to_string(op.in0) + " is not 0 or 1");
          break;
        case circuits::OpKind::LoadInput:
          if (op.in0 >= program.num_inputs)
            program_error("LoadInput of row " + std::to_string(op.in0) + " of " + std::to_string(program.num_inputs));
          break;
        default:
          program_error("unknown linear op kind " + std::to_string(static_cast<int>(op.kind)));
      }
      defined[op.out] = 1;
    }
    if (layer.ands.size() > detail::kMaxRun) program_error("too many ANDs in one layer");
    for (const circuits::AndOp& g : layer.ands) {
      readable(g.in0, l, "AND");
      readable(g.in1, l, "AND");
      writable(g.out, l, "AND");
    }
    for (const circuits::AndOp& g : layer.ands) defined[g.out] = 1;  // after the layer's exchange
  }
  for (auto s : program.output_slots) readable(s, layers, "output");
}

// Validates `program` and translates it into instruction streams.
std::shared_ptr<const Plan> build_plan(const circuits::Program& program) {
  validate_program(program);
  auto plan = std::make_shared<Plan>();
  const std::size_t layers = program.layers.size();
  plan->passes = layers == 0 ? 1 : layers + (program.layers.back().ands.empty() ? 0 : 1);
  std::vector<std::uint32_t>& code = plan->code;
  for (std::size_t p = 0; p < plan->passes; ++p) {
    plan->pass_start.push_back(code.size());
    CodeBuilder builder(code);
    if (p > 0) {
      const auto& previous = program.layers[p - 1].ands;
      for (std::size_t k = 0; k < previous.size(); ++k)
        builder.op(detail::kOpFinish, {previous[k].out, static_cast<std::uint32_t>(k)});
    }
    if (p < layers) {
      const circuits::Layer& layer = program.layers[p];
      for (const std::uint32_t index : schedule_linear(layer.linear)) {
        const circuits::LinearOp& op = layer.linear[index];
        switch (op.kind) {
          case circuits::OpKind::Xor: builder.op(detail::kOpXor, {op.out, op.in0, op.in1}); break;
          case circuits::OpKind::Inv: builder.op(detail::kOpInv, {op.out, op.in0}); break;
          case circuits::OpKind::Copy: builder.op(detail::kOpCopy, {op.out, op.in0}); break;
          case circuits::OpKind::Const:
            builder.op(op.in0 == 0 ? detail::kOpConst0 : detail::kOpConst1, {op.out});
            break;
          case circuits::OpKind::LoadInput: builder.op(detail::kOpLoad, {op.out, op.in0}); break;
        }
      }
      for (std::size_t k = 0; k < layer.ands.size(); ++k) {
        const circuits::AndOp& g = layer.ands[k];
        builder.op(detail::kOpAnd, {static_cast<std::uint32_t>(k), g.in0, g.in1});
      }
    }
    if (p + 1 == plan->passes) {
      for (std::size_t j = 0; j < program.output_slots.size(); ++j)
        builder.op(detail::kOpOutput, {program.output_slots[j], static_cast<std::uint32_t>(j)});
    }
    builder.end();
  }
  append_signature(program, plan->signature);
  return plan;
}

bool well_formed(const ShareMatrix& m) {
  return m.words_per_row == words_for(m.instances) && (m.words_per_row == 0 || m.rows <= m.x.max_size() / m.words_per_row) &&
         m.x.size() == m.rows * m.words_per_row && m.a.size() == m.x.size();
}

class CpuEvaluator final : public Evaluator {
 public:
  CpuEvaluator(SimdLevel level, detail::KernelInfo kernel)
      : level_(level), kernel_(kernel), narrow_(detail::narrow_kernel()) {
    auto of_width = [&](std::size_t width) {
      switch (level) {
        case SimdLevel::Portable: return detail::portable_kernel(width);
        case SimdLevel::Avx2: return detail::avx2_kernel(width);
        case SimdLevel::Avx512: return detail::avx512_kernel(width);
      }
      return kernel;
    };
    for (std::size_t i = 0; i < 2; ++i) {
      const detail::KernelInfo k = of_width(std::size_t{8} << i);
      partial_[i] = k.run != nullptr && k.tile_words < kernel.tile_words ? k : kernel;
    }
  }

  EvaluationStats evaluate(const circuits::Program& program, const ShareMatrix& inputs, ShareMatrix& outputs,
                           CorrelatedRandomness& randomness, LayerExchange& exchange) override {
    return evaluate_with(program, inputs, outputs, randomness, exchange, nullptr);
  }

  EvaluationStats evaluate_recorded(const circuits::Program& program, const ShareMatrix& inputs, ShareMatrix& outputs,
                                    CorrelatedRandomness& randomness, LayerExchange& exchange,
                                    AndTranscript& transcript) override {
    return evaluate_with(program, inputs, outputs, randomness, exchange, &transcript);
  }

  std::string name() const override { return std::string("cpu-") + simd_level_name(level_); }
  void forget_plans() override {
    std::lock_guard<std::mutex> lock(mutex_);
    plans_.clear();
    cached_.reset();
  }

 private:
  EvaluationStats evaluate_with(const circuits::Program& program, const ShareMatrix& inputs, ShareMatrix& outputs,
                                CorrelatedRandomness& randomness, LayerExchange& exchange,
                                AndTranscript* transcript) {
    if (inputs.rows != program.num_inputs)
      throw Error(Component::Protocol, "input matrix has " + std::to_string(inputs.rows) + " rows, program expects " +
                                           std::to_string(program.num_inputs));
    if (!well_formed(inputs)) throw Error(Component::Protocol, "malformed input share matrix");

    const std::shared_ptr<const Plan> plan = plan_for(program);
    WorkspaceLease lease(*this);
    Workspace& ws = *lease.ws;

    ShareMatrix aliased;
    ShareMatrix& target = (&outputs == &inputs) ? aliased : outputs;
    const std::size_t n = inputs.instances;
    if (target.rows != program.num_outputs || target.instances != n || !well_formed(target)) {
      target.wipe();
      target = ShareMatrix(program.num_outputs, n);
    }
    EvaluationStats stats;
    try {
      if (transcript != nullptr) transcript->reset(0);
      if (n != 0) run(program, *plan, inputs, target, randomness, exchange, ws, stats, transcript);
    } catch (...) {
      target.wipe();
      if (transcript != nullptr) transcript->wipe();
      throw;
    }
    if (&target == &aliased) outputs = std::move(aliased);
    return stats;
  }

  struct WorkspaceLease {
    explicit WorkspaceLease(CpuEvaluator& owner) : owner(owner) {
      std::lock_guard<std::mutex> lock(owner.mutex_);
      ws = std::move(owner.cached_);
      if (!ws) ws = std::make_unique<Workspace>();
    }
    ~WorkspaceLease() {
      ws->wipe();
      std::lock_guard<std::mutex> lock(owner.mutex_);
      if (!owner.cached_) owner.cached_ = std::move(ws);
    }
    CpuEvaluator& owner;
    std::unique_ptr<Workspace> ws;
  };

  // The plan of a program evaluated recently (the server runs a handful of circuits over
  // and over), else a new one. Recognised by content, so a mutated program is re-validated.
  std::shared_ptr<const Plan> plan_for(const circuits::Program& program) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (std::size_t i = 0; i < plans_.size(); ++i) {
        if (matches_signature(program, plans_[i]->signature)) {
          std::shared_ptr<const Plan> hit = plans_[i];
          plans_.erase(plans_.begin() + static_cast<std::ptrdiff_t>(i));
          plans_.insert(plans_.begin(), hit);
          return hit;
        }
      }
    }
    std::shared_ptr<const Plan> plan = build_plan(program);
    std::lock_guard<std::mutex> lock(mutex_);
    plans_.insert(plans_.begin(), plan);
    if (plans_.size() > kCachedPlans) plans_.pop_back();
    return plan;
  }

  void run(const circuits::Program& program, const Plan& plan, const ShareMatrix& inputs, ShareMatrix& outputs,
           CorrelatedRandomness& randomness, LayerExchange& exchange, Workspace& ws, EvaluationStats& stats,
           AndTranscript* transcript) {
    const std::size_t passes = plan.passes;
    const std::size_t n = inputs.instances;
    const std::size_t words = words_for(n);
    const std::size_t chunks = (n + kChunkInstances - 1) / kChunkInstances;
    const std::size_t full_chunks = n / kChunkInstances;
    const detail::KernelInfo& kernel = kernel_for(n);
    const std::size_t tile_words = kernel.tile_words;
    const std::size_t tiles_per_chunk = kChunkWords / tile_words;
    const std::size_t slots = program.num_slots;
    const std::size_t tile_state_words = checked_mul(slots, 2 * tile_words, "state");
    const std::size_t chunk_state_words = checked_mul(tile_state_words, tiles_per_chunk, "state");
    std::uint64_t* state = ws.state.prepare(checked_mul(chunk_state_words, chunks, "state"));

    // Bytes of one AND's r in the whole message: 256 per full chunk plus the partial chunk.
    const std::size_t per_and_bytes = full_chunks * detail::kMsgStride + ((n % kChunkInstances) + 7) / 8;
    std::size_t max_ands = 0;
    for (const auto& layer : program.layers) max_ands = std::max(max_ands, layer.ands.size());
    const std::size_t max_message = checked_mul(max_ands, per_and_bytes, "message");
    const std::size_t scratch = checked_mul(max_ands, detail::kMsgStride, "message") + 16;
    for (auto& b : ws.out_msg) b.prepare(max_message + 16);
    std::uint8_t* and_scratch = ws.and_scratch.prepare(scratch);
    std::uint8_t* fin_out_scratch = ws.fin_out_scratch.prepare(scratch);
    std::uint8_t* fin_in_scratch = ws.fin_in_scratch.prepare(scratch);
    std::uint8_t* alpha_scratch = ws.alpha_scratch.prepare(scratch);
    std::uint8_t* record_scratch = transcript != nullptr ? ws.record_scratch.prepare(4 * scratch) : nullptr;
    std::uint8_t* record_planes[4] = {};
    std::size_t layer_offset = 0;  // of the current layer's message in the transcript
    if (transcript != nullptr) {
      std::size_t total = 0;
      for (const auto& layer : program.layers)
        if (!layer.ands.empty()) {
          transcript->layer_bytes.push_back(layer.ands.size() * per_and_bytes);
          transcript->layer_ands.push_back(layer.ands.size());
          total += layer.ands.size() * per_and_bytes;
        }
      transcript->reset(total);
      transcript->instances = n;
      std::uint64_t* planes[4] = {transcript->left_previous.data(), transcript->left_own.data(),
                                  transcript->right_previous.data(), transcript->right_own.data()};
      for (int i = 0; i < 4; ++i) record_planes[i] = reinterpret_cast<std::uint8_t*>(planes[i]);
    }

    detail::TileArgs args{};
    args.in_stride = inputs.words_per_row;
    args.out_stride = outputs.words_per_row;
    const std::size_t layers = program.layers.size();
    // The previous layer's message from party i-1, lent by the exchange until its next call.
    const std::uint8_t* in_before = nullptr;

    for (std::size_t p = 0; p < passes; ++p) {
      const std::size_t ands = p < layers ? program.layers[p].ands.size() : 0;
      const std::size_t previous_ands = p > 0 ? program.layers[p - 1].ands.size() : 0;
      std::uint8_t* out_now = ws.out_msg[p & 1].data();
      const std::uint8_t* out_before = ws.out_msg[(p + 1) & 1].data();
      args.code = plan.code.data() + plan.pass_start[p];

      for (std::size_t c = 0; c < chunks; ++c) {
        const std::size_t chunk_n = std::min(kChunkInstances, n - c * kChunkInstances);
        const bool full = chunk_n == kChunkInstances;
        const std::size_t chunk_bytes = (chunk_n + 7) / 8;
        const std::size_t active_words = (chunk_n + 63) / 64;
        const std::size_t active_tiles = (active_words + tile_words - 1) / tile_words;
        const std::size_t active_bytes = active_tiles * tile_words * 8;
        // A chunk whose tiles hold exactly its instances (so no lane of its message is padding,
        // which must be sent as zero) is evaluated in the message buffers themselves, AND k at
        // k * its bytes; any other partial chunk through scratch laid out as a full one.
        const bool direct = full || (chunk_bytes == active_bytes && chunk_n % 8 == 0);
        const std::size_t stride = full || !direct ? detail::kMsgStride : chunk_bytes;
        args.msg_stride = stride;

        std::uint8_t* and_region = nullptr;
        if (ands != 0) {
          std::uint8_t* chunk_message = out_now + c * ands * detail::kMsgStride;
          if (direct) {
            randomness.next_alpha({chunk_message, (ands * stride + 15) / 16 * 16});
            and_region = chunk_message;
          } else {
            const std::size_t size = ands * chunk_bytes;
            randomness.next_alpha({alpha_scratch, (size + 15) / 16 * 16});
            for (std::size_t k = 0; k < ands; ++k) {
              std::uint8_t* dst = and_scratch + k * detail::kMsgStride;
              copy_row(dst, alpha_scratch + k * chunk_bytes, chunk_bytes);
              std::memset(dst + chunk_bytes, 0, active_bytes - chunk_bytes);
            }
            and_region = and_scratch;
          }
        }
        const std::uint8_t* fin_out = nullptr;
        const std::uint8_t* fin_in = nullptr;
        if (previous_ands != 0) {
          const std::size_t base = c * previous_ands * detail::kMsgStride;
          if (direct) {
            fin_out = out_before + base;
            fin_in = in_before + base;
          } else {
            for (std::size_t k = 0; k < previous_ands; ++k) {
              unpack(fin_out_scratch + k * detail::kMsgStride, out_before + base + k * chunk_bytes, chunk_bytes,
                     active_bytes);
              unpack(fin_in_scratch + k * detail::kMsgStride, in_before + base + k * chunk_bytes, chunk_bytes,
                     active_bytes);
            }
            fin_out = fin_out_scratch;
            fin_in = fin_in_scratch;
          }
        }

        for (std::size_t t = 0; t < active_tiles; ++t) {
          const std::size_t word0 = c * kChunkWords + t * tile_words;  // < words
          const std::size_t available = std::min(tile_words, words - word0);
          args.state = state + c * chunk_state_words + t * tile_state_words;
          args.in_x = inputs.rows != 0 ? inputs.x.data() + word0 : nullptr;
          args.in_a = inputs.rows != 0 ? inputs.a.data() + word0 : nullptr;
          args.in_words = available;
          args.out_x = outputs.rows != 0 ? outputs.x.data() + word0 : nullptr;
          args.out_a = outputs.rows != 0 ? outputs.a.data() + word0 : nullptr;
          args.out_words = available;
          const std::size_t tile_offset = t * tile_words * 8;
          args.and_msg = and_region != nullptr ? and_region + tile_offset : nullptr;
          args.fin_out = fin_out != nullptr ? fin_out + tile_offset : nullptr;
          args.fin_in = fin_in != nullptr ? fin_in + tile_offset : nullptr;
          for (int i = 0; i < 4; ++i) {
            if (transcript == nullptr || ands == 0)
              args.record[i] = nullptr;
            else if (direct)
              args.record[i] = record_planes[i] + layer_offset + c * ands * detail::kMsgStride + tile_offset;
            else
              args.record[i] = record_scratch + i * scratch + tile_offset;
          }
          kernel.run(args);
        }

        if (ands != 0 && !direct) {
          std::uint8_t* chunk_message = out_now + c * ands * detail::kMsgStride;
          const unsigned tail_bits = static_cast<unsigned>(chunk_n % 8);
          for (std::size_t k = 0; k < ands; ++k) {
            std::uint8_t* dst = chunk_message + k * chunk_bytes;
            copy_row(dst, and_scratch + k * detail::kMsgStride, chunk_bytes);
            // Padding lanes of the last byte are sent as zero.
            if (tail_bits != 0) dst[chunk_bytes - 1] &= static_cast<std::uint8_t>((1u << tail_bits) - 1);
          }
          if (transcript != nullptr)
            for (int i = 0; i < 4; ++i)
              for (std::size_t k = 0; k < ands; ++k) {
                std::uint8_t* dst = record_planes[i] + layer_offset + c * ands * detail::kMsgStride + k * chunk_bytes;
                copy_row(dst, record_scratch + i * scratch + k * detail::kMsgStride, chunk_bytes);
                if (tail_bits != 0) dst[chunk_bytes - 1] &= static_cast<std::uint8_t>((1u << tail_bits) - 1);
              }
        }
      }

      if (ands != 0) {
        const std::size_t message = ands * per_and_bytes;
        const auto received = exchange.exchange_lent(static_cast<std::uint32_t>(p), {out_now, message}, message);
        if (received.size() != message)
          throw Error(Component::Protocol, "layer message of " + std::to_string(received.size()) + " bytes, expected " +
                                               std::to_string(message));
        in_before = received.data();
        stats.bytes_sent += message;
        stats.bytes_received += received.size();
        stats.layers_exchanged += 1;
        if (transcript != nullptr) {
          if (layer_offset + message == transcript->bytes) transcript->last_sent.assign(out_now, out_now + message);
          std::memcpy(reinterpret_cast<std::uint8_t*>(transcript->received.data()) + layer_offset, in_before, message);
          layer_offset += message;
        }
      } else {
        in_before = nullptr;
      }
    }
  }

  // A partial chunk's row of one AND: at most a chunk's 256 bytes, copied in whole pieces so that
  // no call pays a variable-length copy's set-up per AND.
  static void copy_row(std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes) {
    std::size_t i = 0;
    for (; i + 32 <= bytes; i += 32) std::memcpy(dst + i, src + i, 32);
    for (; i + 8 <= bytes; i += 8) std::memcpy(dst + i, src + i, 8);
    for (; i < bytes; ++i) dst[i] = src[i];
  }

  static void unpack(std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes, std::size_t padded) {
    copy_row(dst, src, bytes);
    std::memset(dst + bytes, 0, padded - bytes);
  }

  static constexpr std::size_t kCachedPlans = 8;

  // A batch that fits one word per slot needs no wider tile; one smaller than a chunk takes the
  // narrowest tile that holds it.
  const detail::KernelInfo& kernel_for(std::size_t n) const {
    if (n <= 64) return narrow_;
    if (n < kChunkInstances)
      for (const auto& k : partial_)
        if (k.tile_words * 64 >= n) return k;
    return kernel_;
  }

  SimdLevel level_;
  detail::KernelInfo kernel_;
  detail::KernelInfo narrow_;      // for batches of at most 64 instances
  detail::KernelInfo partial_[2];  // tiles of 8 and 16 words, for batches smaller than a chunk
  std::mutex mutex_;  // guards cached_ and plans_
  std::unique_ptr<Workspace> cached_;
  std::vector<std::shared_ptr<const Plan>> plans_;  // most recently used first
};

bool cpu_supports(SimdLevel level) {
  switch (level) {
    case SimdLevel::Portable:
      return true;
#if defined(MPC_RSS3_X86)
    case SimdLevel::Avx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2");
    case SimdLevel::Avx512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512bw");
#endif
    default:
      return false;
  }
}

}  // namespace

void AndTranscript::reset(std::size_t total_bytes) {
  if (total_bytes == 0) {
    wipe();
    return;
  }
  bytes = total_bytes;
  const std::size_t padded = padded_words();
  for (auto* v : {&left_own, &left_previous, &right_own, &right_previous, &received}) {
    v->resize(padded);
    std::memset(reinterpret_cast<std::uint8_t*>(v->data()) + bytes, 0, padded * 8 - bytes);
  }
}

void AndTranscript::wipe() noexcept {
  for (auto* v : {&left_own, &left_previous, &right_own, &right_previous, &received}) v->clear();
  if (!last_sent.empty()) mpc::wipe(last_sent.data(), last_sent.size());
  last_sent.clear();
  layer_bytes.clear();
  layer_ands.clear();
  instances = 0;
  bytes = 0;
}

void AndTranscript::clear_padding(std::span<std::uint8_t> gates) const {
  const std::size_t partial = instances % kChunkInstances;
  const auto tail_bits = static_cast<unsigned>(partial % 8);
  if (tail_bits == 0) return;
  const std::size_t full_chunks = instances / kChunkInstances;
  const std::size_t chunk_bytes = (partial + 7) / 8;
  const auto keep = static_cast<std::uint8_t>((1u << tail_bits) - 1);
  std::size_t offset = 0;
  for (std::size_t l = 0; l < layer_bytes.size(); ++l) {
    const std::size_t base = offset + full_chunks * layer_ands[l] * detail::kMsgStride;
    for (std::size_t k = 0; k < layer_ands[l]; ++k) gates[base + k * chunk_bytes + chunk_bytes - 1] &= keep;
    offset += layer_bytes[l];
  }
}

EvaluationStats Evaluator::evaluate_recorded(const circuits::Program&, const ShareMatrix&, ShareMatrix&,
                                             CorrelatedRandomness&, LayerExchange&, AndTranscript&) {
  throw Error(Component::Protocol, "the " + name() + " evaluator keeps no transcript for the AND check");
}

SimdLevel best_simd_level() {
  if (cpu_supports(SimdLevel::Avx512)) return SimdLevel::Avx512;
  if (cpu_supports(SimdLevel::Avx2)) return SimdLevel::Avx2;
  return SimdLevel::Portable;
}

const char* simd_level_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::Portable: return "portable";
    case SimdLevel::Avx2: return "avx2";
    case SimdLevel::Avx512: return "avx512";
  }
  return "unknown";
}

std::unique_ptr<Evaluator> make_cpu_evaluator(SimdLevel level) {
  if (!cpu_supports(level))
    throw Error(Component::Protocol, std::string("this CPU does not support the ") + simd_level_name(level) +
                                         " evaluator");
  detail::KernelInfo kernel{};
  switch (level) {
    case SimdLevel::Portable: kernel = detail::portable_kernel(); break;
    case SimdLevel::Avx2: kernel = detail::avx2_kernel(); break;
    case SimdLevel::Avx512: kernel = detail::avx512_kernel(); break;
  }
  if (kernel.run == nullptr || kernel.tile_words == 0 || kChunkWords % kernel.tile_words != 0)
    throw Error(Component::Protocol, std::string("the ") + simd_level_name(level) + " evaluator is not built in");
  return std::make_unique<CpuEvaluator>(level, kernel);
}

}  // namespace mpc::rss3
