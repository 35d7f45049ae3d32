#include "jobs/nonce_pool.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::jobs {

wire::GcmNonce make_gcm_nonce(std::uint64_t epoch, std::uint32_t counter) {
  wire::GcmNonce nonce{};
  for (std::size_t i = 0; i < 8; ++i) nonce[i] = static_cast<std::uint8_t>(epoch >> (56 - 8 * i));
  for (std::size_t i = 0; i < 4; ++i) nonce[8 + i] = static_cast<std::uint8_t>(counter >> (24 - 8 * i));
  return nonce;
}

std::array<std::uint8_t, 16> gcm_counter_block(const wire::GcmNonce& nonce, std::uint32_t block) {
  std::array<std::uint8_t, 16> out{};
  std::copy(nonce.begin(), nonce.end(), out.begin());
  for (std::size_t i = 0; i < 4; ++i) out[12 + i] = static_cast<std::uint8_t>(block >> (24 - 8 * i));
  return out;
}

std::uint64_t gcm_nonce_epoch(const wire::GcmNonce& nonce) {
  std::uint64_t epoch = 0;
  for (std::size_t i = 0; i < 8; ++i) epoch = (epoch << 8) | nonce[i];
  return epoch;
}

std::string describe_nonce(const wire::GcmNonce& nonce) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t byte : nonce) {
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 15]);
  }
  return out;
}

std::uint32_t gcm_nonce_counter(const wire::GcmNonce& nonce) {
  std::uint32_t counter = 0;
  for (std::size_t i = 8; i < 12; ++i) counter = (counter << 8) | nonce[i];
  return counter;
}

std::uint32_t NonceCounter::take(std::uint32_t count) {
  if (!fits(count)) throw Error(Component::Server, "GCM nonce counter exhausted for this epoch");
  const auto first = static_cast<std::uint32_t>(next_);
  next_ += count;
  return first;
}

bool NonceGuard::accept(std::uint64_t epoch, std::span<const NonceRange> ranges) {
  std::optional<std::uint32_t> last = epoch == epoch_ ? last_ : std::nullopt;
  for (const NonceRange& range : ranges) {
    if (range.count == 0) return false;
    if (static_cast<std::uint64_t>(range.first) + range.count > (std::uint64_t{1} << 32)) return false;
    if (last && range.first <= *last) return false;
    last = range.first + (range.count - 1);
  }
  epoch_ = epoch;
  last_ = last;
  return true;
}

NonceShare::~NonceShare() {
  wipe(x.data(), x.size());
  wipe(a.data(), a.size());
}

NoncePool::NoncePool(std::size_t per_client, std::chrono::seconds ttl) : per_client_(per_client), ttl_(ttl) {
  if (per_client_ == 0) throw Error(Component::Server, "GCM nonce pool needs room for at least one nonce per client");
}

// Each Entry wipes its share as the maps destroy it.
NoncePool::~NoncePool() = default;

std::uint32_t NoncePool::key_index(const wire::KeyId& key) {
  const auto found = std::find(keys_.begin(), keys_.end(), key);
  if (found != keys_.end()) return static_cast<std::uint32_t>(found - keys_.begin());
  keys_.push_back(key);
  return static_cast<std::uint32_t>(keys_.size() - 1);
}

void NoncePool::erase(ClientNonces& nonces, std::map<wire::GcmNonce, Entry>::iterator entry) {
  nonces.order.erase(entry->second.serial);
  nonces.entries.erase(entry);
  --size_;
}

bool NoncePool::put(const wire::PublicKey& client, const wire::KeyId& key, const wire::GcmNonce& nonce,
                    NonceShare share, Clock::time_point now) {
  const auto holder = clients_.try_emplace(client).first;
  ClientNonces& nonces = holder->second;
  if (const auto existing = nonces.entries.find(nonce); existing != nonces.entries.end()) {
    erase(nonces, existing);
    if (nonces.entries.empty()) clients_.erase(holder);
    return false;
  }
  while (nonces.entries.size() >= per_client_) erase(nonces, nonces.entries.find(nonces.order.begin()->second));
  Entry entry;
  entry.share = std::move(share);
  entry.key_index = key_index(key);
  entry.added = now;
  entry.serial = next_serial_++;
  nonces.order.emplace(entry.serial, nonce);
  nonces.entries.emplace(nonce, std::move(entry));
  ++size_;
  return true;
}

bool NoncePool::holds(const wire::PublicKey& client, const wire::KeyId& key, const wire::GcmNonce& nonce,
                      Clock::time_point now) const {
  const auto holder = clients_.find(client);
  if (holder == clients_.end()) return false;
  const auto entry = holder->second.entries.find(nonce);
  return entry != holder->second.entries.end() && now - entry->second.added < ttl_ &&
         keys_[entry->second.key_index] == key;
}

std::optional<NonceShare> NoncePool::take(const wire::PublicKey& client, const wire::KeyId& key,
                                          const wire::GcmNonce& nonce, Clock::time_point now) {
  const auto holder = clients_.find(client);
  if (holder == clients_.end()) return std::nullopt;
  ClientNonces& nonces = holder->second;
  const auto entry = nonces.entries.find(nonce);
  if (entry == nonces.entries.end()) return std::nullopt;
  if (now - entry->second.added >= ttl_) {
    erase(nonces, entry);
    return std::nullopt;
  }
  if (keys_[entry->second.key_index] != key) return std::nullopt;
  std::optional<NonceShare> share(std::move(entry->second.share));
  erase(nonces, entry);
  if (nonces.entries.empty()) clients_.erase(holder);
  return share;
}

void NoncePool::expire(Clock::time_point now) {
  for (auto holder = clients_.begin(); holder != clients_.end();) {
    ClientNonces& nonces = holder->second;
    while (!nonces.order.empty()) {
      const auto oldest = nonces.entries.find(nonces.order.begin()->second);
      if (now - oldest->second.added < ttl_) break;
      erase(nonces, oldest);
    }
    holder = nonces.entries.empty() ? clients_.erase(holder) : std::next(holder);
  }
}

std::size_t NoncePool::size() const noexcept { return size_; }

std::size_t NoncePool::size(const wire::PublicKey& client) const {
  const auto holder = clients_.find(client);
  return holder == clients_.end() ? 0 : holder->second.entries.size();
}

}  // namespace mpc::jobs
