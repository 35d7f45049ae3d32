#include "node/key_cache.hpp"

#include <algorithm>

namespace mpc::node {

KeyCache::KeyCache(store::ShareStore& store, std::size_t capacity)
    : store_(store), capacity_(std::max<std::size_t>(capacity, 1)) {}

const SecretBytes* KeyCache::get(const wire::KeyId& key) {
  for (std::size_t i = 0; i < open_.size(); ++i) {
    if (open_[i].first == key) {
      std::rotate(open_.begin(), open_.begin() + static_cast<std::ptrdiff_t>(i),
                  open_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      return &open_.front().second;
    }
  }
  auto stored = store_.get(key);
  if (!stored) return nullptr;
  if (open_.size() == capacity_) open_.pop_back();
  open_.emplace(open_.begin(), key, std::move(*stored));
  return &open_.front().second;
}

void KeyCache::forget(const wire::KeyId& key) {
  std::erase_if(open_, [&](const auto& entry) { return entry.first == key; });
}

}  // namespace mpc::node
