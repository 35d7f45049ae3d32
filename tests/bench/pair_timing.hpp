// Times the two parties of a two-party protocol run side by side (one on a thread of its own)
// over an in-memory channel pair: the best wall time of `repeat` runs and the bytes both
// directions carried in that run. Shared by the in-process benches of tests/bench.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

#include "protocol/two_party/channel.hpp"

namespace mpc::bench {

struct Figure {
  double seconds = 1e300;
  double bytes = 0;  // both directions, one run
};

inline Figure measure(two_party::Channel& a, two_party::Channel& b, int repeat, const std::function<void()>& first,
                      const std::function<void()>& second) {
  using Clock = std::chrono::steady_clock;
  Figure best;
  for (int r = 0; r < repeat; ++r) {
    const std::uint64_t before = a.bytes_sent() + b.bytes_sent();
    const auto start = Clock::now();
    std::thread other(first);
    second();
    other.join();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds < best.seconds) best = {seconds, static_cast<double>(a.bytes_sent() + b.bytes_sent() - before)};
  }
  return best;
}

}  // namespace mpc::bench
