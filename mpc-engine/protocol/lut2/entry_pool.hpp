// The preprocessed entries one server holds, by absolute entry number. Both servers fill and
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

#include "protocol/lut2/masked_table.hpp"

namespace mpc::lut2 {

class EntryPool {
 public:
  ~EntryPool();
  // A filled batch [start, start + entries.size()).
  void store(std::uint64_t start, std::vector<Entry> entries);
  // Copies out [start, start + count), waiting up to `wait` for batches still being made.
  // Throws Error(Protocol) "lookup-table pool empty" if they do not arrive in time, and
  // Error(Protocol) if any entry of the range was taken before or dropped.
  std::vector<Entry> take(std::uint64_t start, std::size_t count, std::chrono::milliseconds wait);
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

  mutable std::mutex mutex_;
  std::condition_variable stored_;
  std::map<std::uint64_t, Batch> batches_;  // by first entry
  std::uint64_t available_ = 0;
  std::uint64_t produced_ = 0;
  std::uint64_t consumed_ = 0;
};

}  // namespace mpc::lut2
