// Compiled Kerberos circuits, one per (circuit id, data length, combine shape), built on first use and
// kept while recently used. A KDC sees a handful of lengths over and over (tickets and
// replies of its principals), so compiling once per length pays; but lengths vary and the
// longest programs take hundreds of megabytes, so the cache is bounded by the total size of
// the programs it holds (gates plus slots), evicting the least recently used first. Every
// party compiles the same circuit the same way (circuits::compile is deterministic), so a
// batch header's id and length are all a follower needs.
//
// Compiling takes from about 0.1 s (a short checksum) to about 10 s (a 4096-byte
// decryption), so batch workers call this, never the main thread (which must keep routing
// layer messages); it is safe to call from several threads. Programs are handed out as
// shared pointers: a batch keeps its program alive while a worker evaluates it, even after
// the cache has dropped it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>

#include "circuits/program.hpp"
#include "jobs/krb_jobs.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::jobs {

// How much longer than the peer timeout the first layer of a Kerberos batch may wait: a
// neighbour that has not compiled this circuit yet compiles it and builds its evaluation
// plan before it sends anything (about 2 us per program operation on a slow, busy host).
// Later layers wait the peer timeout alone.
std::chrono::milliseconds krb_first_layer_grace(const circuits::Program& program);

class KrbCircuitCache {
 public:
  // Room for the longest program (a 4096-byte decryption, about 18 M operations) beside
  // many short ones: roughly half a gigabyte.
  static constexpr std::size_t kDefaultBudgetOps = std::size_t{32} << 20;

  // `build` makes the circuit for a key (build_krb_circuit; tests may count calls).
  using Builder = std::function<circuits::Circuit(const KrbCircuitKey&)>;
  explicit KrbCircuitCache(std::size_t budget_ops = kDefaultBudgetOps);
  KrbCircuitCache(std::size_t budget_ops, Builder build);

  // The compiled program; compiles it on a miss. Throws FormatError for an id that is not
  // a Kerberos circuit or a length it cannot take, and whatever building the circuit throws.
  std::shared_ptr<const circuits::Program> program(wire::CircuitId id, std::uint32_t data_bytes,
                                                   std::uint32_t combine = 0);

  std::size_t size() const;
  std::size_t held_ops() const;
  std::uint64_t compiled() const;  // programs compiled since construction

  // The size a program counts for: its linear and AND operations and slots.
  static std::size_t ops_of(const circuits::Program& program);

 private:
  struct Entry {
    KrbCircuitKey key;
    std::shared_ptr<const circuits::Program> program;
    std::size_t ops;
  };

  std::size_t budget_ops_;
  Builder build_;
  mutable std::mutex mutex_;  // guards what follows; not held while compiling
  std::list<Entry> entries_;  // most recently used first
  std::size_t held_ops_ = 0;
  std::uint64_t compiled_ = 0;
};

}  // namespace mpc::jobs
