// Garblings kept per shape (prepared_shape.hpp) under a byte budget, the least recently used
// shape dropped first. Server 1 keeps what it needs to use a garbling (the public rows' zero
// labels and the decoding bits), server 2 the garbled stream; both count the stream's size, so
// the two stores fill and drop alike. Thread-safe: workers take entries while the preparation
// thread adds them.
//
// Entry: a movable type with `std::uint64_t id` (unique within a shape) and
// `std::size_t bytes` (what it counts against the budget).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "engines/two_party/prepared_shape.hpp"

namespace mpc::two_party_engine {

template <typename Entry>
class PreparedStore {
 public:
  explicit PreparedStore(std::size_t budget_bytes = 0) : budget_(budget_bytes) {}
  PreparedStore(const PreparedStore&) = delete;
  PreparedStore& operator=(const PreparedStore&) = delete;

  struct Added {
    bool stored = false;
    std::vector<PreparedShape> dropped;  // whole shapes dropped to make room
  };

  // Adds `entry` to `shape`, which becomes the most recently used. Drops whole shapes, least
  // recently used first, until the budget holds it; an entry larger than the whole budget is
  // not stored and drops nothing.
  Added put(const PreparedShape& shape, Entry entry) {
    std::lock_guard lock(mutex_);
    Added out;
    if (entry.bytes > budget_) return out;
    while (bytes_ + entry.bytes > budget_) {
      // Some shape holds bytes (bytes_ > 0): the least recently used one other than `shape`,
      // or `shape` itself when it is the only one (its oldest entries then make room).
      const PreparedShape victim = lru_.back() == shape && lru_.size() > 1 ? *std::prev(lru_.end(), 2) : lru_.back();
      if (victim == shape) {
        pop_front_locked(shape);
      } else {
        erase_locked(victim);
        out.dropped.push_back(victim);
      }
    }
    Slot& slot = slot_locked(shape);
    slot.bytes += entry.bytes;
    bytes_ += entry.bytes;
    slot.entries.push_back(std::move(entry));
    touch_locked(shape);
    out.stored = true;
    return out;
  }

  // Takes out the entry `id` of `shape`, if held.
  std::optional<Entry> take(const PreparedShape& shape, std::uint64_t id) {
    std::lock_guard lock(mutex_);
    auto it = slots_.find(shape);
    if (it == slots_.end()) return std::nullopt;
    auto& entries = it->second.entries;
    for (auto entry = entries.begin(); entry != entries.end(); ++entry) {
      if (entry->id != id) continue;
      std::optional<Entry> out(std::move(*entry));
      entries.erase(entry);
      account_removed_locked(it, out->bytes);
      return out;
    }
    return std::nullopt;
  }

  // Takes out the oldest entry of `shape`, if any.
  std::optional<Entry> take_oldest(const PreparedShape& shape) {
    std::lock_guard lock(mutex_);
    auto it = slots_.find(shape);
    if (it == slots_.end()) return std::nullopt;
    std::optional<Entry> out(std::move(it->second.entries.front()));
    it->second.entries.pop_front();
    account_removed_locked(it, out->bytes);
    return out;
  }

  // Applies `change(entry)` to the entry `id` of `shape`; false when it is not held.
  template <typename Change>
  bool update(const PreparedShape& shape, std::uint64_t id, Change change) {
    std::lock_guard lock(mutex_);
    auto it = slots_.find(shape);
    if (it == slots_.end()) return false;
    for (auto& entry : it->second.entries)
      if (entry.id == id) {
        change(entry);
        return true;
      }
    return false;
  }

  // Drops the entries for which `drop(shape, entry)` holds; returns how many.
  template <typename Predicate>
  std::size_t drop_if(Predicate drop) {
    std::lock_guard lock(mutex_);
    std::size_t dropped = 0;
    for (auto it = slots_.begin(); it != slots_.end();) {
      auto& entries = it->second.entries;
      for (auto entry = entries.begin(); entry != entries.end();) {
        if (drop(it->first, *entry)) {
          it->second.bytes -= entry->bytes;
          bytes_ -= entry->bytes;
          entry = entries.erase(entry);
          ++dropped;
        } else {
          ++entry;
        }
      }
      if (entries.empty()) {
        lru_.erase(it->second.lru);
        it = slots_.erase(it);
      } else {
        ++it;
      }
    }
    return dropped;
  }

  void drop_shape(const PreparedShape& shape) {
    std::lock_guard lock(mutex_);
    if (slots_.count(shape) != 0) erase_locked(shape);
  }

  // A job of `shape` ran: it becomes the most recently used (if it holds entries).
  void touch(const PreparedShape& shape) {
    std::lock_guard lock(mutex_);
    if (slots_.count(shape) != 0) touch_locked(shape);
  }

  // Shrinks (or grows) the budget, dropping least recently used shapes to fit.
  void set_budget(std::size_t budget_bytes) {
    std::lock_guard lock(mutex_);
    budget_ = budget_bytes;
    while (bytes_ > budget_) erase_locked(lru_.back());
  }

  void clear() {
    std::lock_guard lock(mutex_);
    slots_.clear();
    lru_.clear();
    bytes_ = 0;
  }

  std::size_t count(const PreparedShape& shape) const {
    std::lock_guard lock(mutex_);
    auto it = slots_.find(shape);
    return it == slots_.end() ? 0 : it->second.entries.size();
  }
  std::size_t budget() const {
    std::lock_guard lock(mutex_);
    return budget_;
  }
  std::size_t bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
  }
  std::size_t entries() const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& [shape, slot] : slots_) n += slot.entries.size();
    return n;
  }
  std::size_t shapes() const {
    std::lock_guard lock(mutex_);
    return slots_.size();
  }

 private:
  struct Slot {
    std::deque<Entry> entries;
    std::size_t bytes = 0;
    typename std::list<PreparedShape>::iterator lru;
  };
  using SlotMap = std::map<PreparedShape, Slot>;

  Slot& slot_locked(const PreparedShape& shape) {
    auto [it, inserted] = slots_.try_emplace(shape);
    if (inserted) it->second.lru = lru_.insert(lru_.begin(), shape);
    return it->second;
  }
  void touch_locked(const PreparedShape& shape) {
    auto& slot = slots_.at(shape);
    lru_.splice(lru_.begin(), lru_, slot.lru);
  }
  void erase_locked(const PreparedShape& shape) {
    auto it = slots_.find(shape);
    bytes_ -= it->second.bytes;
    lru_.erase(it->second.lru);
    slots_.erase(it);
  }
  void pop_front_locked(const PreparedShape& shape) {
    auto it = slots_.find(shape);
    const std::size_t bytes = it->second.entries.front().bytes;
    it->second.entries.pop_front();
    account_removed_locked(it, bytes);
  }
  void account_removed_locked(typename SlotMap::iterator it, std::size_t bytes) {
    it->second.bytes -= bytes;
    bytes_ -= bytes;
    if (it->second.entries.empty()) {
      lru_.erase(it->second.lru);
      slots_.erase(it);
    }
  }

  mutable std::mutex mutex_;
  SlotMap slots_;
  std::list<PreparedShape> lru_;  // most recently used first
  std::size_t bytes_ = 0;
  std::size_t budget_;
};

}  // namespace mpc::two_party_engine
