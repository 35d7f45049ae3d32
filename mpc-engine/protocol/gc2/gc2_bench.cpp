// gc2_bench: half-gates garbling of AES-128 (the 32-AND S-box) between two threads over an
// in-memory channel. Reports AND gates per second garbled and evaluated together (one thread
// each, pipelined), each side alone on one core, bytes per AND gate, AES-128 blocks per second
// and the latency of one block.
//
//   gc2_bench [--blocks N] [--seconds S] [--json]
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "circuits/aes.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace {

using namespace mpc;
using Clock = std::chrono::steady_clock;

// Replays bytes recorded from a garbler: the evaluator alone, without the garbler's time.
class ReplayChannel final : public two_party::Channel {
 public:
  std::vector<std::uint8_t> bytes;
  std::size_t offset = 0;
  void send(std::span<const std::uint8_t> data) override { bytes.insert(bytes.end(), data.begin(), data.end()); }
  void flush() override {}
  void receive(std::span<std::uint8_t> out) override {
    std::memcpy(out.data(), bytes.data() + offset, out.size());
    offset += out.size();
  }
  std::uint64_t bytes_sent() const override { return bytes.size(); }
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

int main(int argc, char** argv) {
  std::size_t blocks = 512;
  double seconds = 2.0;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--blocks" && i + 1 < argc) blocks = std::stoul(argv[++i]);
    else if (arg == "--seconds" && i + 1 < argc) seconds = std::stod(argv[++i]);
    else if (arg == "--json") json = true;
    else {
      std::cerr << "usage: gc2_bench [--blocks N] [--seconds S] [--json]\n";
      return 2;
    }
  }
  const auto program = circuits::compile(circuits::build_aes_circuit(
      circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt, circuits::SboxVariant::And32));
  const gc2::Block delta = gc2::random_delta();
  const auto zero = gc2::random_labels(program.num_inputs * blocks);
  const gc2::Block constant = gc2::random_labels(1)[0];
  std::vector<std::uint8_t> bits(zero.size(), 0);
  const auto active = gc2::active_labels(zero, bits, delta);
  const double ands_per_run = static_cast<double>(program.and_gates) * static_cast<double>(blocks);

  // Pipelined: garbler and evaluator on their own threads, as two servers run.
  auto [garbler_end, evaluator_end] = two_party::make_memory_channel_pair(std::chrono::milliseconds(60000), 1 << 20);
  std::size_t runs = 0;
  const auto start = Clock::now();
  std::uint64_t tweak = 0;
  while (runs == 0 || seconds_since(start) < seconds) {
    std::thread garbler([&, channel = garbler_end.get(), t = tweak] {
      (void)gc2::garble(program, blocks, delta, t, zero, constant, *channel);
    });
    (void)gc2::evaluate(program, blocks, tweak, active, constant, *evaluator_end);
    garbler.join();
    ++runs;
    ++tweak;
  }
  const double together = runs * ands_per_run / seconds_since(start);
  const double bytes_per_and = static_cast<double>(garbler_end->bytes_sent()) / (runs * ands_per_run);

  // Each side alone on one core.
  ReplayChannel recorded;
  // A first pass touches the recording's pages, so the timed pass measures garbling alone.
  (void)gc2::garble(program, blocks, delta, tweak, zero, constant, recorded);
  recorded.bytes.clear();
  ++tweak;
  auto t0 = Clock::now();
  (void)gc2::garble(program, blocks, delta, tweak, zero, constant, recorded);
  const double garble_rate = ands_per_run / seconds_since(t0);
  t0 = Clock::now();
  (void)gc2::evaluate(program, blocks, tweak, active, constant, recorded);
  const double evaluate_rate = ands_per_run / seconds_since(t0);

  // Latency of one block, garbler and evaluator pipelined.
  std::vector<double> latencies;
  const auto one_zero = gc2::random_labels(program.num_inputs);
  const auto one_active = gc2::active_labels(one_zero, std::vector<std::uint8_t>(one_zero.size(), 0), delta);
  for (int i = 0; i < 200; ++i) {
    ++tweak;
    const auto t = Clock::now();
    std::thread garbler([&, channel = garbler_end.get(), tw = tweak] {
      (void)gc2::garble(program, 1, delta, tw, one_zero, constant, *channel);
    });
    (void)gc2::evaluate(program, 1, tweak, one_active, constant, *evaluator_end);
    garbler.join();
    latencies.push_back(seconds_since(t) * 1e6);
  }
  std::sort(latencies.begin(), latencies.end());
  const double p50_us = latencies[latencies.size() / 2];

  if (json) {
    std::cout << "{\"circuit\": \"aes128-and32\", \"ands_per_block\": " << program.and_gates
              << ", \"batch_blocks\": " << blocks << ", \"aesni\": " << (two_party::fixed_key_hash_uses_aesni() ? "true" : "false")
              << ", \"and_gates_per_s_together\": " << together << ", \"and_gates_per_s_garble\": " << garble_rate
              << ", \"and_gates_per_s_evaluate\": " << evaluate_rate << ", \"bytes_per_and\": " << bytes_per_and
              << ", \"aes128_blocks_per_s\": " << together / program.and_gates << ", \"one_block_p50_us\": " << p50_us
              << "}\n";
  } else {
    std::cout << "AES-128 (" << program.and_gates << " ANDs/block), batches of " << blocks << " blocks, AES-NI "
              << (two_party::fixed_key_hash_uses_aesni() ? "yes" : "no") << "\n"
              << "  garble + evaluate, two threads: " << together / 1e6 << " M AND/s, "
              << together / program.and_gates << " blocks/s\n"
              << "  garble alone, one core:         " << garble_rate / 1e6 << " M AND/s\n"
              << "  evaluate alone, one core:       " << evaluate_rate / 1e6 << " M AND/s\n"
              << "  bytes per AND:                  " << bytes_per_and << "\n"
              << "  one block, p50:                 " << p50_us << " us\n";
  }
  return 0;
}
