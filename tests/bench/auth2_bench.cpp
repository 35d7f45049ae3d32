// auth2_bench: the preprocessing of actively secure two-party computation between two threads
// over an in-memory channel: authenticated bits, leaky AND triples and bucketed AND triples per
// second, and bytes per item (both directions). Each figure is the best of --repeat runs of one
// session (its base OTs run before the first timed call).
//
//   auth2_bench [--triples N] [--repeat R] [--json]
#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <string>
#include <thread>

#include "protocol/auth2/and_triples.hpp"
#include "protocol/auth2/auth_bits.hpp"

namespace {

using namespace mpc;
using Clock = std::chrono::steady_clock;

struct Figure {
  double seconds = 1e300;
  double bytes = 0;  // both directions, one run
};

Figure measure(two_party::Channel& a, two_party::Channel& b, int repeat, const std::function<void()>& first,
               const std::function<void()>& second) {
  Figure best;
  for (int r = 0; r < repeat; ++r) {
    const std::uint64_t before = a.bytes_sent() + b.bytes_sent();
    const auto start = Clock::now();
    std::thread other(second);
    first();
    other.join();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds < best.seconds) best = {seconds, static_cast<double>(a.bytes_sent() + b.bytes_sent() - before)};
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t triples = 1 << 18;
  int repeat = 3;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--triples" && i + 1 < argc) triples = std::stoul(argv[++i]);
    else if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::stoi(argv[++i]));
    else if (arg == "--json") json = true;
    else {
      std::cerr << "usage: auth2_bench [--triples N] [--repeat R] [--json]\n";
      return 2;
    }
  }
  if (triples == 0) {
    std::cerr << "auth2_bench: --triples must be positive\n";
    return 2;
  }
  auto [a, b] = two_party::make_memory_channel_pair(std::chrono::milliseconds(120000), 1 << 20);
  auth2::Session first(*a, auth2::Role::First), second(*b, auth2::Role::Second);
  measure(*a, *b, 1, [&] { first.delta(); }, [&] { second.delta(); });

  const std::size_t bits = 3 * triples;
  const Figure random_bits = measure(
      *a, *b, repeat, [&] { first.random_bits(bits); }, [&] { second.random_bits(bits); });
  const Figure leaky = measure(
      *a, *b, repeat, [&] { auth2::leaky_triples(first, triples); }, [&] { auth2::leaky_triples(second, triples); });
  const Figure bucketed = measure(
      *a, *b, repeat, [&] { auth2::and_triples(first, triples); }, [&] { auth2::and_triples(second, triples); });

  const double n = static_cast<double>(triples), nb = static_cast<double>(bits);
  const unsigned bucket = auth2::bucket_size(triples);
  if (json) {
    std::cout << "{\"triples\": " << triples << ", \"bucket_size\": " << bucket
              << ", \"statistical_security\": " << auth2::kStatisticalSecurity
              << ", \"authenticated_bits_per_s\": " << nb / random_bits.seconds
              << ", \"authenticated_bit_bytes\": " << random_bits.bytes / nb
              << ", \"leaky_triples_per_s\": " << n / leaky.seconds << ", \"leaky_triple_bytes\": " << leaky.bytes / n
              << ", \"triples_per_s\": " << n / bucketed.seconds << ", \"triple_bytes\": " << bucketed.bytes / n
              << "}\n";
  } else {
    std::cout << "authenticated bits: " << nb / random_bits.seconds / 1e6 << " M/s, " << random_bits.bytes / nb
              << " bytes/bit\n"
              << "leaky AND triples:  " << n / leaky.seconds / 1e6 << " M/s, " << leaky.bytes / n << " bytes/triple\n"
              << "AND triples:        " << n / bucketed.seconds / 1e6 << " M/s, " << bucketed.bytes / n
              << " bytes/triple (buckets of " << bucket << ", 2^-" << auth2::kStatisticalSecurity << ")\n"
              << "(" << triples << " triples per call, best of " << repeat << ", both directions counted)\n";
  }
  return 0;
}
