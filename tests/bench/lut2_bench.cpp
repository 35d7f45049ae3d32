// lut2_bench: AES through masked lookup tables between two threads over an in-memory channel.
// Reports the online phase (entries prefilled) in blocks per second for AES-128 and AES-256
// both ways and bytes per S-box each way, the latency of one block, the per-S-box cost of the
// lookup kernels next to full 256-byte table shares (the layout not chosen), and the
// preprocessing cost per AES-128 block by dealer and by OT.
//
//   lut2_bench [--blocks N] [--seconds S] [--json]
#include <sodium.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "protocol/lut2/dealer.hpp"
#include "protocol/lut2/lut_aes.hpp"
#include "protocol/lut2/ot_preprocessing.hpp"
#include "protocol/lut2/round_kernels.hpp"

namespace {

using namespace mpc;
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// CPU time of the calling thread: the online rates are also given per CPU second of the busier
// party, which stays meaningful on a machine shared with other work (wall-clock rates there
// measure the scheduler as much as the protocol).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Online {
  double blocks_per_s = 0;
  double blocks_per_cpu_s = 0;  // blocks per CPU second of the party that used more
  double bytes_per_sbox_party0 = 0, bytes_per_sbox_party1 = 0;
};

// Both parties run `runs` batches on their own threads (the same entries every time: the
// timing does not depend on their values; a deployment never reuses an entry).
Online run_online(std::size_t key_bytes, bool decrypt, std::size_t blocks, double seconds) {
  const std::size_t round_key_bytes = key_bytes == 16 ? 176 : 240;
  const std::vector<std::uint8_t> round_keys(round_key_bytes, 0x5a);  // shares only: any bytes will do
  const std::vector<std::uint8_t> input(blocks * 16, 0x11);
  const std::size_t per_batch = lut2::entries_for(round_key_bytes, blocks);
  lut2::DealtBatch batch = lut2::deal(per_batch);
  const auto first = lut2::expand_seed(batch.first_seed, per_batch);
  auto [a, b] = two_party::make_memory_channel_pair(std::chrono::milliseconds(60000), 1 << 20);
  double cpu0 = 0, cpu1 = 0;
  auto both = [&](std::size_t runs) {
    std::thread party0([&, channel = a.get()] {
      const double start = thread_cpu_seconds();
      for (std::size_t i = 0; i < runs; ++i) (void)lut2::lut_aes(*channel, 0, round_keys, decrypt, input, first);
      cpu0 = thread_cpu_seconds() - start;
    });
    const double start = thread_cpu_seconds();
    for (std::size_t i = 0; i < runs; ++i) (void)lut2::lut_aes(*b, 1, round_keys, decrypt, input, batch.second);
    cpu1 = thread_cpu_seconds() - start;
    party0.join();
  };
  auto t = Clock::now();
  both(1);  // warm-up and calibration
  const std::size_t runs = std::max<std::size_t>(1, static_cast<std::size_t>(seconds / seconds_since(t)));
  const std::uint64_t sent0 = a->bytes_sent(), sent1 = b->bytes_sent();
  t = Clock::now();
  both(runs);
  Online out;
  out.blocks_per_s = static_cast<double>(runs * blocks) / seconds_since(t);
  out.blocks_per_cpu_s = static_cast<double>(runs * blocks) / std::max(cpu0, cpu1);
  out.bytes_per_sbox_party0 = static_cast<double>(a->bytes_sent() - sent0) / static_cast<double>(runs * per_batch);
  out.bytes_per_sbox_party1 = static_cast<double>(b->bytes_sent() - sent1) / static_cast<double>(runs * per_batch);
  return out;
}

// One AES-128 block at a time, back to back on long-lived threads: per-block latency.
std::pair<double, double> one_block_latency_us(int count) {
  const std::vector<std::uint8_t> round_keys(176, 0x5a), one(16, 0x22);
  lut2::DealtBatch batch = lut2::deal(160);
  const auto first = lut2::expand_seed(batch.first_seed, 160);
  auto [a, b] = two_party::make_memory_channel_pair(std::chrono::milliseconds(60000));
  std::thread party0([&, channel = a.get()] {
    for (int i = 0; i < count; ++i) (void)lut2::lut_aes(*channel, 0, round_keys, false, one, first);
  });
  std::vector<double> latencies;
  for (int i = 0; i < count; ++i) {
    const auto t = Clock::now();
    (void)lut2::lut_aes(*b, 1, round_keys, false, one, batch.second);
    latencies.push_back(seconds_since(t) * 1e6);
  }
  party0.join();
  std::sort(latencies.begin(), latencies.end());
  return {latencies[latencies.size() / 2], latencies[latencies.size() * 99 / 100]};
}

struct Kernels {
  double portable_ns = 0, avx512_ns = 0, full_table_ns = 0;
};

// Lookups of one party, one thread, over the entries of `blocks` AES-128 blocks (ns per S-box):
// the one-hot kernels with the rest of the round, and plain 256-byte table shares (one byte
// read per S-box from a table streamed from memory; no linear layers: a lower bound).
Kernels kernel_costs(std::size_t blocks) {
  using lut2::detail::RoundShape;
  const std::size_t n = lut2::entries_for(176, blocks);
  const std::size_t per_round = blocks * 16;
  lut2::DealtBatch batch = lut2::deal(n);
  std::vector<std::uint8_t> states(per_round), mine(n), theirs(n), opened(n), key(16, 0x5a);
  randombytes_buf(mine.data(), mine.size());
  randombytes_buf(theirs.data(), theirs.size());
  for (std::size_t k = 0; k < n; ++k) opened[k] = mine[k] ^ theirs[k];
  auto time_kernel = [&](auto kernel) {
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t = Clock::now();
      for (std::size_t r = 0; r < 10; ++r)
        kernel(states.data(), blocks, batch.second.data() + r * per_round, mine.data() + r * per_round,
               theirs.data() + r * per_round, key.data(), RoundShape::EncryptMiddle);
      best = std::min(best, seconds_since(t) * 1e9 / static_cast<double>(n));
    }
    return best;
  };
  Kernels out;
  out.portable_ns = time_kernel(lut2::detail::portable_finish_round);
  if (lut2::detail::avx512_supported()) out.avx512_ns = time_kernel(lut2::detail::avx512_finish_round);
  std::vector<std::uint8_t> tables(n * 256);
  randombytes_buf(tables.data(), tables.size());
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t = Clock::now();
    for (std::size_t k = 0; k < n; ++k) states[k % per_round] ^= tables[k * 256 + opened[k]];
    best = std::min(best, seconds_since(t) * 1e9 / static_cast<double>(n));
  }
  out.full_table_ns = best;
  return out;
}

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
  if (blocks == 0 || sodium_init() < 0) {
    std::cerr << "lut2_bench: need --blocks > 0 and libsodium\n";
    return 2;
  }
  const Online enc128 = run_online(16, false, blocks, seconds);
  const Online dec128 = run_online(16, true, blocks, seconds / 2);
  const Online enc256 = run_online(32, false, blocks, seconds / 2);
  const auto [p50, p99] = one_block_latency_us(1000);
  const Kernels kernels = kernel_costs(std::min<std::size_t>(blocks, 1024));

  // Dealer: the dealer's work plus server 1's expansion of its seed; what the dealer sends.
  const std::size_t dealer_blocks = blocks;
  const std::size_t dealer_entries = lut2::entries_for(176, dealer_blocks);
  auto t = Clock::now();
  {
    lut2::DealtBatch batch = lut2::deal(dealer_entries);
    auto first = lut2::expand_seed(batch.first_seed, dealer_entries);
    lut2::wipe_entries(first);
  }
  const double dealer_us_per_block = seconds_since(t) * 1e6 / static_cast<double>(dealer_blocks);
  const double dealer_bytes_per_block = (33.0 * static_cast<double>(dealer_entries) + 32.0) / dealer_blocks;

  // OT: the session's base OTs once, then a batch of 256 blocks' entries.
  const std::size_t ot_blocks = 256;
  const std::size_t ot_entries = lut2::entries_for(176, ot_blocks);
  auto [c, d] = two_party::make_memory_channel_pair(std::chrono::milliseconds(60000), 1 << 20);
  ot::OtExtensionSender sender(*c);
  ot::OtExtensionReceiver receiver(*d);
  t = Clock::now();
  {
    std::vector<ot::Block> x0(1), x1(1), x(1);
    std::vector<std::uint8_t> choice{1};
    std::thread s([&] { sender.random(x0, x1); });
    receiver.random(choice, x);
    s.join();
  }
  const double ot_setup_ms = seconds_since(t) * 1e3;
  const std::uint64_t c_before = c->bytes_sent(), d_before = d->bytes_sent();
  t = Clock::now();
  std::thread s([&] { (void)lut2::ot_preprocess_send(sender, *c, 0, ot_entries); });
  (void)lut2::ot_preprocess_receive(receiver, *d, 0, ot_entries);
  s.join();
  const double ot_us_per_block = seconds_since(t) * 1e6 / ot_blocks;
  const double ot_bytes_party0 = static_cast<double>(c->bytes_sent() - c_before) / ot_blocks;
  const double ot_bytes_party1 = static_cast<double>(d->bytes_sent() - d_before) / ot_blocks;
  const char* kernel = lut2::detail::avx512_supported() ? "avx512" : "portable";

  if (json) {
    std::printf(
        "{\"batch_blocks\": %zu, \"kernel\": \"%s\", \"online_aes128_blocks_per_s\": %.0f, "
        "\"online_aes128_blocks_per_cpu_s\": %.0f, \"online_aes128_decrypt_blocks_per_s\": %.0f, \"online_aes256_blocks_per_s\": %.0f, "
        "\"online_bytes_per_sbox_party0\": %.3f, \"online_bytes_per_sbox_party1\": %.3f, "
        "\"one_block_p50_us\": %.1f, \"one_block_p99_us\": %.1f, \"kernel_portable_ns_per_sbox\": %.2f, "
        "\"kernel_avx512_ns_per_sbox\": %.2f, \"full_table_ns_per_sbox\": %.2f, \"dealer_us_per_block\": %.2f, "
        "\"dealer_bytes_per_block\": %.1f, \"ot_setup_ms\": %.2f, \"ot_us_per_block\": %.2f, "
        "\"ot_bytes_per_block_party0\": %.1f, \"ot_bytes_per_block_party1\": %.1f}\n",
        blocks, kernel, enc128.blocks_per_s, enc128.blocks_per_cpu_s, dec128.blocks_per_s, enc256.blocks_per_s, enc128.bytes_per_sbox_party0,
        enc128.bytes_per_sbox_party1, p50, p99, kernels.portable_ns, kernels.avx512_ns, kernels.full_table_ns,
        dealer_us_per_block, dealer_bytes_per_block, ot_setup_ms, ot_us_per_block, ot_bytes_party0, ot_bytes_party1);
  } else {
    std::printf("AES by masked lookup tables, batches of %zu blocks, %s kernel\n", blocks, kernel);
    std::printf("  online AES-128 encrypt:   %.0f blocks/s, %.0f per CPU second of a party (%.2f / %.2f bytes per "
                "S-box sent by party 0 / 1)\n",
                enc128.blocks_per_s, enc128.blocks_per_cpu_s, enc128.bytes_per_sbox_party0,
                enc128.bytes_per_sbox_party1);
    std::printf("  online AES-128 decrypt:   %.0f blocks/s\n", dec128.blocks_per_s);
    std::printf("  online AES-256 encrypt:   %.0f blocks/s\n", enc256.blocks_per_s);
    std::printf("  one block:                p50 %.1f us, p99 %.1f us\n", p50, p99);
    std::printf("  one party's round, per S-box: portable %.2f ns, avx512 %.2f ns; 256-byte table read %.2f ns\n",
                kernels.portable_ns, kernels.avx512_ns, kernels.full_table_ns);
    std::printf("  preprocessing by dealer:  %.2f us and %.0f bytes per block\n", dealer_us_per_block,
                dealer_bytes_per_block);
    std::printf("  preprocessing by OT:      %.2f us and %.0f + %.0f bytes (party 0 + 1) per block; setup %.2f ms\n",
                ot_us_per_block, ot_bytes_party0, ot_bytes_party1, ot_setup_ms);
  }
  return 0;
}
