// lut2_bench: AES-128 through masked lookup tables between two threads over an in-memory
// channel. Reports the online phase (pool prefilled) in blocks per second and bytes per S-box,
// the latency of one block, and the preprocessing cost per block by dealer and by OT.
//
//   lut2_bench [--blocks N] [--seconds S] [--json]
#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "circuits/aes_reference.hpp"
#include "protocol/lut2/dealer.hpp"
#include "protocol/lut2/lut_aes.hpp"
#include "protocol/lut2/ot_preprocessing.hpp"

namespace {

using namespace mpc;
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

int main(int argc, char** argv) {
  std::size_t blocks = 4096;
  double seconds = 2.0;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--blocks" && i + 1 < argc) blocks = std::stoul(argv[++i]);
    else if (arg == "--seconds" && i + 1 < argc) seconds = std::stod(argv[++i]);
    else if (arg == "--json") json = true;
    else {
      std::cerr << "usage: lut2_bench [--blocks N] [--seconds S] [--json]\n";
      return 2;
    }
  }
  const std::vector<std::uint8_t> round_keys(176, 0x5a);  // shares only: any bytes will do
  const std::vector<std::uint8_t> input(blocks * 16, 0x11);
  const std::size_t per_batch = lut2::entries_for(176, blocks);

  // Dealer preprocessing, timed: the dealer's work plus server 1's expansion of its seed.
  auto t = Clock::now();
  lut2::DealtBatch batch = lut2::deal(per_batch);
  auto first = lut2::expand_seed(batch.first_seed, per_batch);
  const double dealer_us_per_block = seconds_since(t) * 1e6 / blocks;
  const double dealer_bytes_per_block = (33.0 * per_batch + 32.0) / blocks;

  // Online: the same prefilled entries run batch after batch (the timing does not depend on
  // their values; a deployment never reuses an entry).
  auto [a, b] = two_party::make_memory_channel_pair(std::chrono::milliseconds(60000), 1 << 20);
  std::size_t runs = 0;
  const auto start = Clock::now();
  while (runs == 0 || seconds_since(start) < seconds) {
    std::thread party0([&, channel = a.get()] { (void)lut2::lut_aes(*channel, 0, round_keys, false, input, first); });
    (void)lut2::lut_aes(*b, 1, round_keys, false, input, batch.second);
    party0.join();
    ++runs;
  }
  const double online_rate = static_cast<double>(runs * blocks) / seconds_since(start);
  const double online_bytes_per_sbox = static_cast<double>(a->bytes_sent()) / (runs * per_batch);

  std::vector<double> latencies;
  const std::vector<std::uint8_t> one(16, 0x22);
  const std::span<const lut2::Entry> one_first(first.data(), 160), one_second(batch.second.data(), 160);
  for (int i = 0; i < 200; ++i) {
    const auto t0 = Clock::now();
    std::thread party0([&, channel = a.get()] { (void)lut2::lut_aes(*channel, 0, round_keys, false, one, one_first); });
    (void)lut2::lut_aes(*b, 1, round_keys, false, one, one_second);
    party0.join();
    latencies.push_back(seconds_since(t0) * 1e6);
  }
  std::sort(latencies.begin(), latencies.end());

  // OT preprocessing of 64 blocks' entries, both sides on their own threads.
  const std::size_t ot_blocks = 64;
  const std::size_t ot_entries = lut2::entries_for(176, ot_blocks);
  auto [c, d] = two_party::make_memory_channel_pair(std::chrono::milliseconds(60000), 1 << 20);
  ot::OtExtensionSender sender(*c);
  ot::OtExtensionReceiver receiver(*d);
  {  // the session's base OTs, once
    std::vector<ot::Block> x0(1), x1(1), x(1);
    std::vector<std::uint8_t> choice{1};
    std::thread s([&] { sender.random(x0, x1); });
    receiver.random(choice, x);
    s.join();
  }
  const std::uint64_t ot_bytes_before = c->bytes_sent() + d->bytes_sent();
  t = Clock::now();
  std::thread s([&] { (void)lut2::ot_preprocess_send(sender, *c, 0, ot_entries); });
  (void)lut2::ot_preprocess_receive(receiver, *d, 0, ot_entries);
  s.join();
  const double ot_us_per_block = seconds_since(t) * 1e6 / ot_blocks;
  const double ot_bytes_per_block = static_cast<double>(c->bytes_sent() + d->bytes_sent() - ot_bytes_before) / ot_blocks;

  if (json) {
    std::cout << "{\"batch_blocks\": " << blocks << ", \"online_aes128_blocks_per_s\": " << online_rate
              << ", \"online_bytes_per_sbox_each_way\": " << online_bytes_per_sbox
              << ", \"one_block_p50_us\": " << latencies[latencies.size() / 2]
              << ", \"dealer_us_per_block\": " << dealer_us_per_block
              << ", \"dealer_bytes_per_block\": " << dealer_bytes_per_block
              << ", \"ot_us_per_block\": " << ot_us_per_block << ", \"ot_bytes_per_block\": " << ot_bytes_per_block
              << "}\n";
  } else {
    std::cout << "AES-128 by masked lookup tables, batches of " << blocks << " blocks\n"
              << "  online, two threads:      " << online_rate << " blocks/s, " << online_bytes_per_sbox
              << " byte per S-box each way\n"
              << "  one block, p50:           " << latencies[latencies.size() / 2] << " us\n"
              << "  preprocessing by dealer:  " << dealer_us_per_block << " us and " << dealer_bytes_per_block
              << " bytes per block\n"
              << "  preprocessing by OT:      " << ot_us_per_block << " us and " << ot_bytes_per_block
              << " bytes per block\n";
  }
  return 0;
}
