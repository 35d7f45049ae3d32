// The leader's account of the Kerberos garblings prepared ahead of their batches
// (garbled_krb_prepared.hpp): which circuits one-job batches ran lately (a KDC sees the same
// few enctypes and lengths again and again), which prepared garblings all three servers hold,
// and the one being prepared. What to prepare next: the most recently used circuit, among
// those used within the demand window, that has fewer than kReadyPerCircuit ready, as far as
// the byte budget holds their tables. A garbling is named by at most one batch (take), and
// forgotten after kLife unused, before the servers' stores drop it (twice as long); a failed
// preparation pauses preparing, and a batch that failed with a prepared garbling empties the
// stock (a server may have lost its store: the next jobs garble online).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "jobs/krb_jobs.hpp"

namespace mpc::three_party_engine {

// How long a server keeps a garbling made ahead (protocol/gc3/prepared_garblings.hpp): twice as
// long as the leader names one (PreparedStock::kLife), so it never names one gone there.
inline constexpr std::chrono::seconds kPreparedGarblingLife{600};

class PreparedStock {
 public:
  static constexpr std::size_t kReadyPerCircuit = 2;
  static constexpr std::chrono::seconds kDemandWindow{60};
  static constexpr std::chrono::seconds kLife{300};
  static constexpr std::chrono::seconds kPauseAfterFailure{5};

  using Clock = std::chrono::steady_clock;

  explicit PreparedStock(std::size_t budget_bytes) : budget_(budget_bytes) {}

  // A batch of one job of `circuit` ran; its garbling's stream takes `table_bytes`.
  void used(const jobs::KrbCircuitKey& circuit, std::uint64_t table_bytes, Clock::time_point now);
  // The circuit to prepare now, if any (none while one is being prepared, or paused): one with
  // fewer than `up_to` (at most kReadyPerCircuit) garblings ready.
  std::optional<jobs::KrbCircuitKey> next(Clock::time_point now, std::size_t up_to = kReadyPerCircuit);
  // Batch `sequence` prepares `circuit`, then ends: ready at every server, or not.
  void preparing(std::uint32_t sequence, const jobs::KrbCircuitKey& circuit);
  void prepared(std::uint32_t sequence, bool succeeded, Clock::time_point now);
  // A ready garbling of `circuit` for one batch to use (its preparing batch's sequence).
  std::optional<std::uint32_t> take(const jobs::KrbCircuitKey& circuit, Clock::time_point now);
  // Forgets every ready garbling (and the one in preparation): a new epoch, or a batch that
  // failed with a prepared garbling.
  void clear();

  std::size_t ready() const { return ready_.size(); }
  // Whether a garbling of `circuit` is ready (take would give one now).
  bool holds(const jobs::KrbCircuitKey& circuit, Clock::time_point now);
  std::size_t ready_bytes() const;

 private:
  struct Demand {
    jobs::KrbCircuitKey circuit;
    std::uint64_t table_bytes = 0;
    Clock::time_point last_used;
  };
  struct Ready {
    jobs::KrbCircuitKey circuit;
    std::uint32_t sequence = 0;
    std::uint64_t table_bytes = 0;
    Clock::time_point made;
  };
  void drop_old(Clock::time_point now);
  std::uint64_t table_bytes_of(const jobs::KrbCircuitKey& circuit) const;

  const std::size_t budget_;
  std::vector<Demand> demand_;  // most recently used first
  std::deque<Ready> ready_;     // oldest first
  std::optional<std::uint32_t> in_flight_;
  jobs::KrbCircuitKey in_flight_circuit_;
  Clock::time_point paused_until_{};
};

}  // namespace mpc::three_party_engine
