// ot_bench: Masny-Rindal base OTs and IKNP extension between two threads over an in-memory
// channel: time for 128 base OTs, random, correlated and chosen OTs per second on one
// session, and bytes per OT (both directions). Each figure is the best of --repeat runs.
//
//   ot_bench [--ots N] [--repeat R] [--json]
#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "pair_timing.hpp"
#include "protocol/ot/base_ot.hpp"
#include "protocol/ot/ot_extension.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace {

using namespace mpc;
using bench::Figure;
using bench::measure;

}  // namespace

int main(int argc, char** argv) {
  std::size_t ots = 1 << 20;
  int repeat = 3;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--ots" && i + 1 < argc) ots = std::stoul(argv[++i]);
    else if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::stoi(argv[++i]));
    else if (arg == "--json") json = true;
    else {
      std::cerr << "usage: ot_bench [--ots N] [--repeat R] [--json]\n";
      return 2;
    }
  }
  if (ots == 0) {
    std::cerr << "ot_bench: --ots must be positive\n";
    return 2;
  }
  auto [a, b] = two_party::make_memory_channel_pair(std::chrono::milliseconds(60000), 1 << 20);

  std::vector<ot::Block> k0(ot::kBaseOts), k1(ot::kBaseOts), k(ot::kBaseOts);
  std::vector<std::uint8_t> base_choices(ot::kBaseOts);
  for (std::size_t i = 0; i < ot::kBaseOts; ++i) base_choices[i] = static_cast<std::uint8_t>(i & 1);
  const Figure base = measure(
      *a, *b, repeat, [&, channel = a.get()] { ot::base_ot_send(*channel, k0, k1); },
      [&] { ot::base_ot_receive(*b, base_choices, k); });

  ot::OtExtensionSender sender(*a);
  ot::OtExtensionReceiver receiver(*b);
  std::vector<ot::Block> out0(ots), out1(ots), out(ots);
  std::vector<std::uint8_t> bits(ots);
  for (std::size_t i = 0; i < ots; ++i) bits[i] = static_cast<std::uint8_t>(i * 2654435761u >> 31) & 1;
  // The first call runs the session's base OTs: not part of the extension figures.
  const Figure setup = measure(
      *a, *b, 1, [&] { sender.random(std::span(out0).first(1), std::span(out1).first(1)); },
      [&] { receiver.random(std::span(bits).first(1), std::span(out).first(1)); });

  const Figure random = measure(
      *a, *b, repeat, [&] { sender.random(out0, out1); }, [&] { receiver.random(bits, out); });
  const ot::Block delta{0x1234, 0x5678};
  const Figure correlated = measure(
      *a, *b, repeat, [&] { sender.correlated(delta, out0); }, [&] { receiver.correlated(bits, out); });
  const Figure chosen = measure(
      *a, *b, repeat, [&] { sender.chosen(out0, out1); }, [&] { receiver.chosen(bits, out); });

  const double n = static_cast<double>(ots);
  if (json) {
    std::cout << "{\"base_ots\": " << ot::kBaseOts << ", \"base_ot_ms\": " << base.seconds * 1e3
              << ", \"base_ot_bytes\": " << base.bytes << ", \"session_setup_ms\": " << setup.seconds * 1e3
              << ", \"ots\": " << ots << ", \"random_ots_per_s\": " << n / random.seconds
              << ", \"random_bytes_per_ot\": " << random.bytes / n
              << ", \"correlated_ots_per_s\": " << n / correlated.seconds
              << ", \"correlated_bytes_per_ot\": " << correlated.bytes / n
              << ", \"chosen_ots_per_s\": " << n / chosen.seconds << ", \"chosen_bytes_per_ot\": " << chosen.bytes / n
              << ", \"aesni\": " << (two_party::fixed_key_hash_uses_aesni() ? "true" : "false") << "}\n";
  } else {
    std::cout << "128 base OTs (Masny-Rindal, ristretto255): " << base.seconds * 1e3 << " ms, " << base.bytes
              << " bytes\n"
              << "session setup (base OTs + 1 OT):          " << setup.seconds * 1e3 << " ms\n"
              << "IKNP random OTs:     " << n / random.seconds / 1e6 << " M/s, " << random.bytes / n << " bytes/OT\n"
              << "IKNP correlated OTs: " << n / correlated.seconds / 1e6 << " M/s, " << correlated.bytes / n
              << " bytes/OT\n"
              << "IKNP chosen OTs:     " << n / chosen.seconds / 1e6 << " M/s, " << chosen.bytes / n << " bytes/OT\n"
              << "(" << ots << " OTs per call, best of " << repeat << ", hash on "
              << (two_party::fixed_key_hash_uses_aesni() ? "AES-NI" : "OpenSSL") << ")\n";
  }
  return 0;
}
