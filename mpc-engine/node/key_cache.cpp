#include "node/key_cache.hpp"

#include <algorithm>

#include "wire/client_messages.hpp"
#include "wire/sealed_share.hpp"

namespace mpc::node {

KeyCache::KeyCache(store::ShareStore& store, std::size_t material_copies, std::size_t capacity)
    : store_(store), material_copies_(material_copies), capacity_(std::max<std::size_t>(capacity, 1)) {}

KeyCache::Open* KeyCache::open(const wire::KeyId& key) {
  for (std::size_t i = 0; i < open_.size(); ++i) {
    if (open_[i].key == key) {
      std::rotate(open_.begin(), open_.begin() + static_cast<std::ptrdiff_t>(i),
                  open_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      return &open_.front();
    }
  }
  auto stored = store_.get(key);
  if (!stored) return nullptr;
  Open entry{key, {}, {}};
  const std::size_t material = material_copies_ * wire::material_bytes(key.algorithm);
  if (stored->size() > material) {
    entry.material = SecretBytes(stored->span().first(material));
    // Checks of another form (wire::kEarlierShareCheckBytes) count as none: such a key is
    // refused under security = "active", naming the remedy, and served under "passive".
    if (stored->size() == material + wire::share_check_bytes(key.algorithm))
      entry.share_check = SecretBytes(stored->span().subspan(material));
  } else {
    entry.material = std::move(*stored);
  }
  if (open_.size() == capacity_) open_.pop_back();
  open_.insert(open_.begin(), std::move(entry));
  return &open_.front();
}

const SecretBytes* KeyCache::get(const wire::KeyId& key) {
  Open* entry = open(key);
  return entry == nullptr ? nullptr : &entry->material;
}

const SecretBytes* KeyCache::share_check(const wire::KeyId& key) {
  Open* entry = open(key);
  return entry == nullptr || entry->share_check.size() == 0 ? nullptr : &entry->share_check;
}

void KeyCache::forget(const wire::KeyId& key) {
  std::erase_if(open_, [&](const Open& entry) { return entry.key == key; });
}

}  // namespace mpc::node
