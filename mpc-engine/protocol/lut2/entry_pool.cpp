#include "protocol/lut2/entry_pool.hpp"

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::lut2 {

EntryPool::~EntryPool() {
  for (auto& [start, batch] : batches_) wipe(batch.entries.data(), batch.entries.size() * sizeof(Entry));
}

void EntryPool::reset(std::uint64_t epoch) {
  std::lock_guard lock(mutex_);
  for (auto& [start, batch] : batches_) wipe(batch.entries.data(), batch.entries.size() * sizeof(Entry));
  batches_.clear();
  abandoned_.clear();
  available_ = 0;
  epoch_ = epoch;
  stored_.notify_all();
}

std::uint64_t EntryPool::epoch() const {
  std::lock_guard lock(mutex_);
  return epoch_;
}

void EntryPool::store(std::uint64_t epoch, std::uint64_t start, std::vector<Entry> entries) {
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

std::size_t EntryPool::drop(std::uint64_t start, std::uint64_t end) {
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

void EntryPool::abandon(std::uint64_t start, std::size_t count) {
  std::lock_guard lock(mutex_);
  drop(start, start + count);
  if (!covered(start, count)) abandoned_[start] = start + count;
}

bool EntryPool::covered(std::uint64_t start, std::size_t count) const {
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

std::vector<Entry> EntryPool::take(std::uint64_t epoch, std::uint64_t start, std::size_t count,
                                   std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  // A reset (another epoch) ends the wait at once: those entries will never come.
  if (!stored_.wait_for(lock, wait, [&] { return epoch != epoch_ || covered(start, count); }) || epoch != epoch_)
    throw PoolEmpty(Component::Protocol, "lookup-table pool empty: entries " + std::to_string(start) + ".." +
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
      if (batch.taken[k]) throw Error(Component::Protocol, "lookup-table entry " + std::to_string(it->first + k) + " taken twice");
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

std::uint64_t EntryPool::available() const {
  std::lock_guard lock(mutex_);
  return available_;
}

std::uint64_t EntryPool::produced() const {
  std::lock_guard lock(mutex_);
  return produced_;
}

std::uint64_t EntryPool::consumed() const {
  std::lock_guard lock(mutex_);
  return consumed_;
}

}  // namespace mpc::lut2
