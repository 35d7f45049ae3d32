#include "jobs/tagged_nonces.hpp"

#include <algorithm>

namespace mpc::jobs {

TaggedNonces::TaggedNonces(std::size_t capacity, std::chrono::seconds ttl) : capacity_(capacity), ttl_(ttl) {}

std::uint32_t TaggedNonces::key_index(const wire::KeyId& key) {
  const auto found = std::find(keys_.begin(), keys_.end(), key);
  if (found != keys_.end()) return static_cast<std::uint32_t>(found - keys_.begin());
  keys_.push_back(key);
  return static_cast<std::uint32_t>(keys_.size() - 1);
}

void TaggedNonces::erase(std::map<wire::GcmNonce, Entry>::iterator entry) {
  order_.erase(entry->second.serial);
  entries_.erase(entry);
}

void TaggedNonces::keep(const wire::KeyId& key, const wire::GcmNonce& nonce, NonceShare share, Clock::time_point now) {
  if (capacity_ == 0) return;
  if (const auto existing = entries_.find(nonce); existing != entries_.end()) erase(existing);
  while (entries_.size() >= capacity_) erase(entries_.find(order_.begin()->second));
  Entry entry;
  entry.share = std::move(share);
  entry.key_index = key_index(key);
  entry.added = now;
  entry.serial = next_serial_++;
  order_.emplace(entry.serial, nonce);
  entries_.emplace(nonce, std::move(entry));
}

const NonceShare* TaggedNonces::find(const wire::KeyId& key, const wire::GcmNonce& nonce, Clock::time_point now) const {
  const auto entry = entries_.find(nonce);
  if (entry == entries_.end() || now - entry->second.added >= ttl_ || keys_[entry->second.key_index] != key)
    return nullptr;
  return &entry->second.share;
}

void TaggedNonces::expire(Clock::time_point now) {
  while (!order_.empty()) {
    const auto oldest = entries_.find(order_.begin()->second);
    if (now - oldest->second.added < ttl_) break;
    erase(oldest);
  }
}

}  // namespace mpc::jobs
