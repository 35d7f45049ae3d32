#include "jobs/nonce_shelf.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::jobs {

NonceShare::~NonceShare() {
  wipe(x.data(), x.size());
  wipe(a.data(), a.size());
}

NonceShelf::NonceShelf(std::size_t capacity, std::chrono::seconds ttl) : capacity_(capacity), ttl_(ttl) {
  if (capacity_ == 0) throw Error(Component::Server, "a nonce shelf needs room for at least one nonce");
}

std::uint32_t NonceShelf::key_index(const wire::KeyId& key) {
  const auto found = std::find(keys_.begin(), keys_.end(), key);
  if (found != keys_.end()) return static_cast<std::uint32_t>(found - keys_.begin());
  keys_.push_back(key);
  return static_cast<std::uint32_t>(keys_.size() - 1);
}

void NonceShelf::erase(Entries::iterator entry) {
  order_.erase(entry->second.serial);
  entries_.erase(entry);
}

std::size_t NonceShelf::add(const wire::KeyId& key, const wire::GcmNonce& nonce, NonceShare share,
                            Clock::time_point now) {
  std::size_t dropped = 0;
  for (; entries_.size() >= capacity_; ++dropped) erase(entries_.find(order_.begin()->second));
  Entry entry;
  entry.share = std::move(share);
  entry.key_index = key_index(key);
  entry.added = now;
  entry.serial = next_serial_++;
  order_.emplace(entry.serial, nonce);
  entries_.emplace(nonce, std::move(entry));
  return dropped;
}

NonceShelf::Found NonceShelf::look(const wire::KeyId& key, Entries::const_iterator entry,
                                   Clock::time_point now) const {
  if (entry == entries_.end()) return Found::Absent;
  if (now - entry->second.added >= ttl_) return Found::Expired;
  return keys_[entry->second.key_index] == key ? Found::Fresh : Found::OtherKey;
}

NonceShare* NonceShelf::find(const wire::KeyId& key, const wire::GcmNonce& nonce, Clock::time_point now,
                             Found* found) {
  const auto entry = entries_.find(nonce);
  const Found result = look(key, entry, now);
  if (found != nullptr) *found = result;
  return result == Found::Fresh ? &entry->second.share : nullptr;
}

const NonceShare* NonceShelf::find(const wire::KeyId& key, const wire::GcmNonce& nonce,
                                   Clock::time_point now) const {
  const auto entry = entries_.find(nonce);
  return look(key, entry, now) == Found::Fresh ? &entry->second.share : nullptr;
}

bool NonceShelf::erase(const wire::GcmNonce& nonce) {
  const auto entry = entries_.find(nonce);
  if (entry == entries_.end()) return false;
  erase(entry);
  return true;
}

std::size_t NonceShelf::expire(Clock::time_point now) {
  std::size_t dropped = 0;
  for (; !order_.empty(); ++dropped) {
    const auto oldest = entries_.find(order_.begin()->second);
    if (now - oldest->second.added < ttl_) break;
    erase(oldest);
  }
  return dropped;
}

}  // namespace mpc::jobs
