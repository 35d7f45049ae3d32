// A service that serves nothing while every server is heard. A server can withhold its part of
// every batch (or stall on purpose) and keep its heartbeats going: its peers then give every
// batch up on their peer timeout, each job fails after the client's one retry, and no check
// names anyone, since a message that never came proves nothing about who kept it back (the
// server that waits on a stalled peer stops sending too, so its own successor times out on it).
//
// The shell watches what its service answers instead, per kind of job (a server may stall only
// the Kerberos jobs and let keystream through): when, over the last kStallWindow, the jobs of
// one kind that the servers compute together failed on a peer's timeout at least kStalledJobs
// times and at least twice as often as they were served, the failures spread over at least half
// the window, and every server is heard, the service is stalled. It is left as after a failed
// check that names nobody (node/disputes.hpp): three-party service is suspended, or a pair is
// passed over, so within three such windows two servers that do not stall serve. A server that
// stalls only part of the jobs to stay below the watch still lets a third of each kind through
// on the first try, and most of the rest on the client's retry. A host starved for a moment
// fails a batch or two, each served by its retry.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>

namespace mpc::node {

inline constexpr std::chrono::seconds kStallWindow{10};
inline constexpr unsigned kStalledJobs = 3;
// Failures in a service's first seconds are not counted: its servers may still be starting, or
// bringing their links and workers up.
inline constexpr std::chrono::seconds kStallGrace{5};

class ServiceStall {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kKinds = 16;  // at least node::JobKind::Count

  // A job of kind `kind` (JobKind's value) served, or failed on a peer's timeout.
  void answered(std::size_t kind, bool served, Clock::time_point now) {
    if (kind >= kKinds) return;
    auto& outcomes = kinds_[kind];
    outcomes.push_back({now, served});
    drop_old(outcomes, now);
  }
  // The service changed: what the old one answered is not held against the new one.
  void reset() noexcept {
    for (auto& outcomes : kinds_) outcomes.clear();
  }
  // The first kind that is stalled at `now`, and its failures in the window.
  struct Stalled {
    std::size_t kind = 0;
    unsigned failures = 0, served = 0;
  };
  std::optional<Stalled> stalled(Clock::time_point now) {
    for (std::size_t kind = 0; kind < kKinds; ++kind) {
      auto& outcomes = kinds_[kind];
      drop_old(outcomes, now);
      Stalled found{kind, 0, 0};
      std::optional<Clock::time_point> first_failure;
      for (const auto& outcome : outcomes) {
        if (outcome.served) {
          ++found.served;
        } else {
          ++found.failures;
          if (!first_failure) first_failure = outcome.at;
        }
      }
      if (found.failures >= kStalledJobs && found.failures >= 2 * found.served &&
          now - *first_failure >= kStallWindow / 2)
        return found;
    }
    return std::nullopt;
  }

 private:
  struct Outcome {
    Clock::time_point at;
    bool served;
  };
  static void drop_old(std::deque<Outcome>& outcomes, Clock::time_point now) {
    while (!outcomes.empty() && now - outcomes.front().at > kStallWindow) outcomes.pop_front();
    // A client that floods one kind cannot grow this without bound: the window's last ones tell.
    while (outcomes.size() > 4096) outcomes.pop_front();
  }
  std::array<std::deque<Outcome>, kKinds> kinds_;
};

}  // namespace mpc::node
