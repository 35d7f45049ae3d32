// Preprocessed entries one server holds, by entry number within an epoch. Both servers fill and
// consume their pools in lockstep: the leader numbers the entries, announces which batch of
// preprocessing fills which range and which job consumes which range, and each server stores
// and takes exactly those. A range is taken once; its memory is wiped and freed when every
// entry of its batch has been taken. Entries are trivially copyable secrets (lut2's masked
// tables, auth2's AND material).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::two_party {

// A range that is not (or no longer) in the pool: a transient condition, the pool refills.
class PoolEmpty : public Error {
 public:
  using Error::Error;
};

template <typename Entry>
class NumberedPool {
  static_assert(std::is_trivially_copyable_v<Entry>, "entries are wiped as bytes");
 public:
  // `what` names the entries in errors ("lookup-table": "lookup-table pool empty ...").
  explicit NumberedPool(std::string what) : what_(std::move(what)) {}
  ~NumberedPool();
  NumberedPool(const NumberedPool&) = delete;
  NumberedPool& operator=(const NumberedPool&) = delete;
  // Drops every entry and starts numbering afresh under `epoch` (the peer lost its pool).
  void reset(std::uint64_t epoch);
  std::uint64_t epoch() const;
  // No batch of this epoch is being made any more (the epoch was left, its made entries kept):
  // a take of entries not stored fails at once instead of waiting for them.
  void end_production();
  // A filled batch [start, start + entries.size()) of `epoch`; a batch of another epoch
  // (made before a reset) is wiped and dropped.
  void store(std::uint64_t epoch, std::uint64_t start, std::vector<Entry> entries);
  // Copies out [start, start + count) of `epoch`, waiting up to `wait` for batches still being
  // made. Throws PoolEmpty "<what> pool empty" if they do not arrive in time or the epoch
  // is not the pool's, and Error(Protocol) if any entry of the range was taken before.
  std::vector<Entry> take(std::uint64_t epoch, std::uint64_t start, std::size_t count, std::chrono::milliseconds wait);
  // Gives up [start, start + count) of `epoch` (a job that failed): entries stored there now or
  // later are wiped and dropped, so a failed job never leaves memory behind. A range of an epoch
  // the pool has left is nothing to give up (the reset dropped it; the numbers are reused).
  void abandon(std::uint64_t epoch, std::uint64_t start, std::size_t count);
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

  std::string what_;
  mutable std::mutex mutex_;
  std::condition_variable stored_;
  std::map<std::uint64_t, Batch> batches_;  // by first entry
  std::map<std::uint64_t, std::uint64_t> abandoned_;  // start -> end, not stored yet
  std::uint64_t available_ = 0;
  std::uint64_t produced_ = 0;
  std::uint64_t consumed_ = 0;
  std::uint64_t epoch_ = 0;
  bool production_ended_ = false;
};

template <typename Entry>
NumberedPool<Entry>::~NumberedPool() {
  for (auto& [start, batch] : batches_) wipe(batch.entries.data(), batch.entries.size() * sizeof(Entry));
}

template <typename Entry>
void NumberedPool<Entry>::reset(std::uint64_t epoch) {
  std::lock_guard lock(mutex_);
  for (auto& [start, batch] : batches_) wipe(batch.entries.data(), batch.entries.size() * sizeof(Entry));
  batches_.clear();
  abandoned_.clear();
  available_ = 0;
  epoch_ = epoch;
  production_ended_ = false;
  stored_.notify_all();
}

template <typename Entry>
void NumberedPool<Entry>::end_production() {
  std::lock_guard lock(mutex_);
  production_ended_ = true;
  stored_.notify_all();
}

template <typename Entry>
std::uint64_t NumberedPool<Entry>::epoch() const {
  std::lock_guard lock(mutex_);
  return epoch_;
}

template <typename Entry>
void NumberedPool<Entry>::store(std::uint64_t epoch, std::uint64_t start, std::vector<Entry> entries) {
  if (entries.empty()) return;
  std::lock_guard lock(mutex_);
  if (epoch != epoch_) {
    wipe(entries.data(), entries.size() * sizeof(Entry));
    return;
  }
  Batch batch;
  batch.left = entries.size();
  batch.taken.assign(entries.size(), false);
  batch.entries = std::move(entries);
  available_ += batch.left;
  produced_ += batch.left;
  const std::uint64_t end = start + batch.entries.size();
  batches_[start] = std::move(batch);
  for (auto it = abandoned_.begin(); it != abandoned_.end();) {
    if (it->second > start && it->first < end) {
      drop(std::max(it->first, start), std::min(it->second, end));
      if (it->first >= start && it->second <= end) {
        it = abandoned_.erase(it);
        continue;
      }
    }
    ++it;
  }
  stored_.notify_all();
}

template <typename Entry>
std::size_t NumberedPool<Entry>::drop(std::uint64_t start, std::uint64_t end) {
  std::size_t dropped = 0;
  auto it = batches_.upper_bound(start);
  if (it != batches_.begin()) --it;
  while (it != batches_.end() && it->first < end) {
    Batch& batch = it->second;
    const std::uint64_t from = std::max(start, it->first);
    const std::uint64_t to = std::min<std::uint64_t>(end, it->first + batch.entries.size());
    for (std::uint64_t k = from; k < to; ++k) {
      const std::size_t i = static_cast<std::size_t>(k - it->first);
      if (batch.taken[i]) continue;
      batch.taken[i] = true;
      wipe(&batch.entries[i], sizeof(Entry));
      --batch.left;
      --available_;
      ++dropped;
    }
    if (batch.left == 0)
      it = batches_.erase(it);
    else
      ++it;
  }
  return dropped;
}

template <typename Entry>
void NumberedPool<Entry>::abandon(std::uint64_t epoch, std::uint64_t start, std::size_t count) {
  std::lock_guard lock(mutex_);
  if (epoch != epoch_) return;
  drop(start, start + count);
  if (!covered(start, count)) abandoned_[start] = start + count;
}

template <typename Entry>
bool NumberedPool<Entry>::covered(std::uint64_t start, std::size_t count) const {
  std::uint64_t next = start;
  const std::uint64_t end = start + count;
  while (next < end) {
    auto it = batches_.upper_bound(next);
    if (it == batches_.begin()) return false;
    --it;
    const std::uint64_t batch_end = it->first + it->second.entries.size();
    if (batch_end <= next) return false;
    next = batch_end;
  }
  return true;
}

template <typename Entry>
std::vector<Entry> NumberedPool<Entry>::take(std::uint64_t epoch, std::uint64_t start, std::size_t count,
                                   std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  // A reset (another epoch) or the end of production ends the wait at once: those entries will
  // never come.
  if (!stored_.wait_for(lock, wait, [&] { return epoch != epoch_ || production_ended_ || covered(start, count); }) ||
      epoch != epoch_ || !covered(start, count))
    throw PoolEmpty(Component::Protocol, what_ + " pool empty: entries " + std::to_string(start) + ".." +
                                         std::to_string(start + count) + " are not ready (" +
                                         std::to_string(available_) + " available)");
  std::vector<Entry> out(count);
  std::uint64_t next = start;
  const std::uint64_t end = start + count;
  while (next < end) {
    auto it = std::prev(batches_.upper_bound(next));
    Batch& batch = it->second;
    const std::size_t from = next - it->first;
    const std::size_t to = static_cast<std::size_t>(std::min<std::uint64_t>(end - it->first, batch.entries.size()));
    for (std::size_t k = from; k < to; ++k) {
      if (batch.taken[k]) throw Error(Component::Protocol, what_ + " entry " + std::to_string(it->first + k) + " taken twice");
      batch.taken[k] = true;
      out[next - start + (k - from)] = batch.entries[k];
      wipe(&batch.entries[k], sizeof(Entry));
    }
    batch.left -= to - from;
    available_ -= to - from;
    consumed_ += to - from;
    next = it->first + to;
    if (batch.left == 0) batches_.erase(it);
  }
  return out;
}

template <typename Entry>
std::uint64_t NumberedPool<Entry>::available() const {
  std::lock_guard lock(mutex_);
  return available_;
}

template <typename Entry>
std::uint64_t NumberedPool<Entry>::produced() const {
  std::lock_guard lock(mutex_);
  return produced_;
}

template <typename Entry>
std::uint64_t NumberedPool<Entry>::consumed() const {
  std::lock_guard lock(mutex_);
  return consumed_;
}

}  // namespace mpc::two_party
