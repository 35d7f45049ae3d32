#include "protocol/gc3/prepared_garblings.hpp"

#include <algorithm>

namespace mpc::gc3 {

PreparedGarblings::PreparedGarblings(std::size_t capacity_bytes, std::chrono::seconds life)
    : capacity_(capacity_bytes), life_(life) {}

bool PreparedGarblings::put(std::uint64_t epoch, std::uint32_t sequence, PreparedGarbling entry,
                            std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mutex_);
  drop_expired(now);
  const std::size_t size = entry.bytes();
  if (bytes_ + size > capacity_ || entries_.count({epoch, sequence}) != 0) return false;
  entry.made = now;
  entries_.emplace(std::make_pair(epoch, sequence), std::move(entry));
  bytes_ += size;
  return true;
}

std::optional<PreparedGarbling> PreparedGarblings::take(std::uint64_t epoch, std::uint32_t sequence,
                                                        std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mutex_);
  drop_expired(now);
  auto it = entries_.find({epoch, sequence});
  if (it == entries_.end()) return std::nullopt;
  std::optional<PreparedGarbling> out(std::move(it->second));
  bytes_ -= out->bytes();
  entries_.erase(it);
  return out;
}

void PreparedGarblings::keep_epoch(std::uint64_t epoch) {
  std::lock_guard lock(mutex_);
  if (epoch == epoch_) return;
  epoch_ = epoch;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->first.first != epoch) {
      bytes_ -= it->second.bytes();
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<std::uint8_t> PreparedGarblings::table_buffer(std::size_t bytes) {
  std::vector<std::uint8_t> buffer;
  {
    std::lock_guard lock(mutex_);
    // The smallest spare that holds `bytes`, so a small circuit does not take a large one's.
    auto best = spare_tables_.end();
    for (auto it = spare_tables_.begin(); it != spare_tables_.end(); ++it)
      if (it->size() >= bytes && (best == spare_tables_.end() || it->size() < best->size())) best = it;
    if (best != spare_tables_.end()) {
      buffer = std::move(*best);
      spare_tables_.erase(best);
    }
  }
  buffer.resize(bytes);  // shrinking keeps the capacity and writes nothing
  return buffer;
}

void PreparedGarblings::recycle(std::vector<std::uint8_t> tables) {
  if (tables.capacity() == 0) return;
  tables.resize(tables.capacity());  // zeroes only the tail a smaller circuit left unused
  std::lock_guard lock(mutex_);
  if (spare_tables_.size() < kSpareTableBuffers) {
    spare_tables_.push_back(std::move(tables));
    return;
  }
  // Full: keep the larger buffers, which fit every circuit the smaller ones fit.
  auto smallest = std::min_element(spare_tables_.begin(), spare_tables_.end(),
                                   [](const auto& a, const auto& b) { return a.size() < b.size(); });
  if (smallest->size() < tables.size()) *smallest = std::move(tables);
}

std::size_t PreparedGarblings::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::size_t PreparedGarblings::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

void PreparedGarblings::drop_expired(std::chrono::steady_clock::time_point now) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (now - it->second.made >= life_) {
      bytes_ -= it->second.bytes();
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace mpc::gc3
