// The preprocessed entries one server holds, by entry number within an epoch. Both servers fill and
// consume their pools in lockstep: the leader numbers the entries, announces which batch of
// preprocessing fills which range and which job consumes which range, and each server stores
// and takes exactly those. A range is taken once; its memory is wiped and freed when every
// entry of its batch has been taken.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "common/error.hpp"
#include "protocol/lut2/masked_table.hpp"

namespace mpc::lut2 {

// A range that is not (or no longer) in the pool: a transient condition, the pool refills.
class PoolEmpty : public Error {
 public:
  using Error::Error;
};

class EntryPool {
 public:
  ~EntryPool();
  // Drops every entry and starts numbering afresh under `epoch` (the peer lost its pool).
  void reset(std::uint64_t epoch);
  std::uint64_t epoch() const;
  // A filled batch [start, start + entries.size()) of `epoch`; a batch of another epoch
  // (made before a reset) is wiped and dropped.
  void store(std::uint64_t epoch, std::uint64_t start, std::vector<Entry> entries);
  // Copies out [start, start + count) of `epoch`, waiting up to `wait` for batches still being
  // made. Throws PoolEmpty "lookup-table pool empty" if they do not arrive in time or the epoch
  // is not the pool's, and Error(Protocol) if any entry of the range was taken before.
  std::vector<Entry> take(std::uint64_t epoch, std::uint64_t start, std::size_t count, std::chrono::milliseconds wait);
  // Gives up [start, start + count) (a job that failed): entries stored there now or later are
  // wiped and dropped, so a failed job never leaves memory behind.
  void abandon(std::uint64_t start, std::size_t count);
  std::uint64_t available() const;   // entries stored and not yet taken
  std::uint64_t produced() const;    // entries stored since start
  std::uint64_t consumed() const;    // entries taken since start

 private:
  struct Batch {
    std::vector<Entry> entries;
    std::vector<bool> taken;
    std::size_t left = 0;
  };
  bool covered(std::uint64_t start, std::size_t count) const;
  // Marks the stored entries of [start, end) taken; returns how many were.
  std::size_t drop(std::uint64_t start, std::uint64_t end);

  mutable std::mutex mutex_;
  std::condition_variable stored_;
  std::map<std::uint64_t, Batch> batches_;  // by first entry
  std::map<std::uint64_t, std::uint64_t> abandoned_;  // start -> end, not stored yet
  std::uint64_t available_ = 0;
  std::uint64_t produced_ = 0;
  std::uint64_t consumed_ = 0;
  std::uint64_t epoch_ = 0;
};

}  // namespace mpc::lut2
