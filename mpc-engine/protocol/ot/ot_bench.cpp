// ot_bench: Chou-Orlandi base OTs and IKNP extension between two threads over an in-memory
// channel: time for the 128 base OTs, random and correlated OTs per second, bytes per OT.
//
//   ot_bench [--ots N] [--json]
#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "protocol/ot/base_ot.hpp"
#include "protocol/ot/ot_extension.hpp"

namespace {

using namespace mpc;
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

int main(int argc, char** argv) {
  std::size_t ots = 1 << 20;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--ots" && i + 1 < argc) ots = std::stoul(argv[++i]);
    else if (arg == "--json") json = true;
    else {
      std::cerr << "usage: ot_bench [--ots N] [--json]\n";
      return 2;
    }
  }
  auto [a, b] = two_party::make_memory_channel_pair(std::chrono::milliseconds(60000), 1 << 20);
  // Base OTs.
  std::vector<ot::Block> k0(ot::kBaseOts), k1(ot::kBaseOts), k(ot::kBaseOts);
  std::vector<std::uint8_t> choices(ot::kBaseOts, 1);
  auto t = Clock::now();
  std::thread sender([&, channel = a.get()] { ot::base_ot_send(*channel, k0, k1); });
  ot::base_ot_receive(*b, choices, k);
  sender.join();
  const double base_ms = seconds_since(t) * 1e3;

  ot::OtExtensionSender ext_sender(*a);
  ot::OtExtensionReceiver ext_receiver(*b);
  std::vector<ot::Block> out0(ots), out1(ots), out(ots);
  std::vector<std::uint8_t> bits(ots);
  for (std::size_t i = 0; i < ots; ++i) bits[i] = static_cast<std::uint8_t>(i * 2654435761u >> 31) & 1;
  // Warm-up call runs the base OTs of the session.
  std::thread warm([&] { ext_sender.random(std::span(out0).first(1), std::span(out1).first(1)); });
  ext_receiver.random(std::span(bits).first(1), std::span(out).first(1));
  warm.join();

  const std::uint64_t sent_before = a->bytes_sent() + b->bytes_sent();
  t = Clock::now();
  std::thread random_sender([&] { ext_sender.random(out0, out1); });
  ext_receiver.random(bits, out);
  random_sender.join();
  const double random_rate = ots / seconds_since(t);
  const double random_bytes = static_cast<double>(a->bytes_sent() + b->bytes_sent() - sent_before) / ots;

  const std::uint64_t sent_mid = a->bytes_sent() + b->bytes_sent();
  t = Clock::now();
  const ot::Block delta{0x1234, 0x5678};
  std::thread correlated_sender([&] { ext_sender.correlated(delta, out0); });
  ext_receiver.correlated(bits, out);
  correlated_sender.join();
  const double correlated_rate = ots / seconds_since(t);
  const double correlated_bytes = static_cast<double>(a->bytes_sent() + b->bytes_sent() - sent_mid) / ots;

  if (json) {
    std::cout << "{\"base_ots\": " << ot::kBaseOts << ", \"base_ot_ms\": " << base_ms << ", \"ots\": " << ots
              << ", \"random_ots_per_s\": " << random_rate << ", \"random_bytes_per_ot\": " << random_bytes
              << ", \"correlated_ots_per_s\": " << correlated_rate
              << ", \"correlated_bytes_per_ot\": " << correlated_bytes << "}\n";
  } else {
    std::cout << "128 base OTs (Chou-Orlandi, ristretto255): " << base_ms << " ms\n"
              << "IKNP random OTs:     " << random_rate / 1e6 << " M/s, " << random_bytes << " bytes/OT\n"
              << "IKNP correlated OTs: " << correlated_rate / 1e6 << " M/s, " << correlated_bytes << " bytes/OT\n";
  }
  return 0;
}
