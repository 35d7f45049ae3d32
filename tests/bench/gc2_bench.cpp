// gc2_bench: half-gates garbling of AES-128 (the 32-AND S-box) between two threads over an
// in-memory channel, as the two servers of a cluster run it. Reports AND gates per second
// garbled and evaluated together (garbler on one thread, evaluator on another, streaming), each
// side alone on one core, bytes per AND gate on the channel, AES-128 blocks per second and the
// median latency of one block.
//
//   gc2_bench [--blocks N] [--seconds S] [--kernel vaes|portable] [--json]
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

#include "circuits/aes.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace {

using namespace mpc;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Records what a garbler sends and replays it to an evaluator: each side timed alone. The
// buffer is allocated and touched beforehand, so page faults are not timed.
class ReplayChannel final : public two_party::Channel {
 public:
  explicit ReplayChannel(std::size_t capacity) : bytes_(capacity, 1) {}
  void send(std::span<const std::uint8_t> data) override {
    std::memcpy(bytes_.data() + written_, data.data(), data.size());
    written_ += data.size();
  }
  void flush() override {}
  void receive(std::span<std::uint8_t> out) override {
    std::memcpy(out.data(), bytes_.data() + read_, out.size());
    read_ += out.size();
  }
  std::uint64_t bytes_sent() const override { return written_; }

 private:
  std::vector<std::uint8_t> bytes_;
  std::size_t written_ = 0;
  std::size_t read_ = 0;
};

// A garbler thread that garbles one batch each time it is started, like a server's worker.
class GarblerThread {
 public:
  GarblerThread(gc2::Garbler& garbler, const circuits::Program& program, two_party::Channel& channel)
      : garbler_(garbler), program_(program), channel_(channel), thread_([this] { loop(); }) {}
  ~GarblerThread() {
    stop_ = true;
    start_.release();
    thread_.join();
  }
  void start(std::size_t instances, std::span<const gc2::Block> zero) {
    instances_ = instances;
    zero_ = zero;
    start_.release();
  }
  void wait() { done_.acquire(); }

 private:
  void loop() {
    for (;;) {
      start_.acquire();
      if (stop_) return;
      (void)garbler_.garble(program_, instances_, zero_, channel_);
      done_.release();
    }
  }
  gc2::Garbler& garbler_;
  const circuits::Program& program_;
  two_party::Channel& channel_;
  std::binary_semaphore start_{0};
  std::binary_semaphore done_{0};
  std::size_t instances_ = 0;
  std::span<const gc2::Block> zero_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  std::size_t blocks = 256;
  double seconds = 2.0;
  bool json = false;
  gc2::Kernel kernel = gc2::best_kernel();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--blocks" && i + 1 < argc) {
      blocks = std::stoul(argv[++i]);
    } else if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::stod(argv[++i]);
    } else if (arg == "--kernel" && i + 1 < argc) {
      const std::string name = argv[++i];
      kernel = name == "vaes" ? gc2::Kernel::Vaes : gc2::Kernel::Portable;
      if (name != "vaes" && name != "portable") {
        std::cerr << "gc2_bench: unknown kernel " << name << "\n";
        return 2;
      }
      if (!gc2::kernel_available(kernel)) {
        std::cerr << "gc2_bench: kernel " << name << " is not supported by this CPU\n";
        return 2;
      }
    } else if (arg == "--json") {
      json = true;
    } else {
      std::cerr << "usage: gc2_bench [--blocks N] [--seconds S] [--kernel vaes|portable] [--json]\n";
      return 2;
    }
  }
  if (blocks == 0) {
    std::cerr << "gc2_bench: --blocks must be positive\n";
    return 2;
  }
  const auto program = circuits::compile(circuits::build_aes_circuit(
      circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt, circuits::SboxVariant::And32));
  gc2::Garbler garbler(kernel);
  const gc2::Labels zero = gc2::zero_labels(program.num_inputs * blocks);
  const gc2::Labels active =
      gc2::garbler_input_labels(garbler, std::vector<std::uint8_t>(zero.size(), 0), zero);
  const double ands_per_run = static_cast<double>(program.and_gates) * static_cast<double>(blocks);

  auto [garbler_end, evaluator_end] = two_party::make_memory_channel_pair(std::chrono::milliseconds(60000));
  GarblerThread garbler_thread(garbler, program, *garbler_end);

  // Together: garbler and evaluator on their own threads, streaming.
  std::size_t runs = 0;
  const std::uint64_t sent_before = garbler_end->bytes_sent();
  const auto start = Clock::now();
  while (runs == 0 || seconds_since(start) < seconds) {
    garbler_thread.start(blocks, zero);
    (void)gc2::evaluate(program, blocks, active, *evaluator_end, kernel);
    garbler_thread.wait();
    ++runs;
  }
  const double together = runs * ands_per_run / seconds_since(start);
  const double bytes_per_and =
      static_cast<double>(garbler_end->bytes_sent() - sent_before) / (static_cast<double>(runs) * ands_per_run);

  // Each side alone on one core (best of three).
  double garble_rate = 0, evaluate_rate = 0;
  for (int i = 0; i < 3; ++i) {
    ReplayChannel recorded(gc2::garbled_bytes(program, blocks));
    auto t0 = Clock::now();
    (void)garbler.garble(program, blocks, zero, recorded);
    garble_rate = std::max(garble_rate, ands_per_run / seconds_since(t0));
    t0 = Clock::now();
    (void)gc2::evaluate(program, blocks, active, recorded, kernel);
    evaluate_rate = std::max(evaluate_rate, ands_per_run / seconds_since(t0));
  }

  // Latency of one block: garbler and evaluator streaming, as above.
  std::vector<double> latencies;
  const gc2::Labels one_zero = gc2::zero_labels(program.num_inputs);
  const gc2::Labels one_active =
      gc2::garbler_input_labels(garbler, std::vector<std::uint8_t>(one_zero.size(), 0), one_zero);
  for (int i = 0; i < 300; ++i) {
    const auto t = Clock::now();
    garbler_thread.start(1, one_zero);
    (void)gc2::evaluate(program, 1, one_active, *evaluator_end, kernel);
    garbler_thread.wait();
    latencies.push_back(seconds_since(t) * 1e6);
  }
  std::sort(latencies.begin(), latencies.end());
  const double p50_us = latencies[latencies.size() / 2];

  const bool aesni = two_party::fixed_key_hash_uses_aesni();
  if (json) {
    std::cout << "{\"circuit\": \"aes128-and32\", \"ands_per_block\": " << program.and_gates
              << ", \"and_depth\": " << program.and_depth << ", \"slots\": " << program.num_slots
              << ", \"batch_blocks\": " << blocks << ", \"kernel\": \"" << gc2::kernel_name(kernel)
              << "\", \"aesni\": " << (aesni ? "true" : "false") << ", \"and_gates_per_s_together\": " << together
              << ", \"and_gates_per_s_garble\": " << garble_rate << ", \"and_gates_per_s_evaluate\": " << evaluate_rate
              << ", \"bytes_per_and\": " << bytes_per_and << ", \"aes128_blocks_per_s\": " << together / program.and_gates
              << ", \"one_block_p50_us\": " << p50_us << "}\n";
  } else {
    std::cout << "AES-128 (" << program.and_gates << " ANDs/block, AND depth " << program.and_depth << ", "
              << program.num_slots << " slots), batches of " << blocks << " blocks, kernel "
              << gc2::kernel_name(kernel) << ", AES-NI " << (aesni ? "yes" : "no") << "\n"
              << "  garble + evaluate, two threads: " << together / 1e6 << " M AND/s, "
              << together / program.and_gates << " blocks/s\n"
              << "  garble alone, one core:         " << garble_rate / 1e6 << " M AND/s\n"
              << "  evaluate alone, one core:       " << evaluate_rate / 1e6 << " M AND/s\n"
              << "  bytes per AND on the channel:   " << bytes_per_and << "\n"
              << "  one block, p50:                 " << p50_us << " us\n";
  }
  return 0;
}
