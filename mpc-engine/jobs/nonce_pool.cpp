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

wire::GcmNonce prefetch_nonce(std::uint64_t epoch, std::uint32_t counter, bool local_masks) {
  return make_gcm_nonce(epoch, local_masks ? counter | wire::kLocalMaskCounterBit : counter);
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
    if (static_cast<std::uint64_t>(range.first) + range.count > wire::kGcmCountersPerEpoch) return false;
    if (last && range.first <= *last) return false;
    last = range.first + (range.count - 1);
  }
  epoch_ = epoch;
  last_ = last;
  return true;
}

NoncePool::NoncePool(std::size_t per_client, std::chrono::seconds ttl) : per_client_(per_client), ttl_(ttl) {
  if (per_client_ == 0) throw Error(Component::Server, "GCM nonce pool needs room for at least one nonce per client");
}

// Each shelf wipes its shares as the map destroys it.
NoncePool::~NoncePool() = default;

void NoncePool::drop(Clients::iterator holder, const wire::GcmNonce& nonce) {
  if (holder->second.erase(nonce)) --size_;
  if (holder->second.empty()) clients_.erase(holder);
}

bool NoncePool::put(const wire::PublicKey& client, const wire::KeyId& key, const wire::GcmNonce& nonce,
                    NonceShare share, Clock::time_point now) {
  const auto holder = clients_.try_emplace(client, per_client_, ttl_).first;
  if (holder->second.contains(nonce)) {
    drop(holder, nonce);
    return false;
  }
  size_ += 1;
  size_ -= holder->second.add(key, nonce, std::move(share), now);
  return true;
}

bool NoncePool::holds(const wire::PublicKey& client, const wire::KeyId& key, const wire::GcmNonce& nonce,
                      Clock::time_point now) const {
  const auto holder = clients_.find(client);
  return holder != clients_.end() && holder->second.find(key, nonce, now) != nullptr;
}

std::optional<NonceShare> NoncePool::take(const wire::PublicKey& client, const wire::KeyId& key,
                                          const wire::GcmNonce& nonce, Clock::time_point now) {
  const auto holder = clients_.find(client);
  if (holder == clients_.end()) return std::nullopt;
  NonceShelf::Found found = NonceShelf::Found::Absent;
  NonceShare* share = holder->second.find(key, nonce, now, &found);
  if (found == NonceShelf::Found::Expired) drop(holder, nonce);
  if (share == nullptr) return std::nullopt;
  std::optional<NonceShare> out(std::move(*share));
  drop(holder, nonce);
  return out;
}

void NoncePool::expire(Clock::time_point now) {
  for (auto holder = clients_.begin(); holder != clients_.end();) {
    size_ -= holder->second.expire(now);
    holder = holder->second.empty() ? clients_.erase(holder) : std::next(holder);
  }
}

std::size_t NoncePool::size(const wire::PublicKey& client) const {
  const auto holder = clients_.find(client);
  return holder == clients_.end() ? 0 : holder->second.size();
}

}  // namespace mpc::jobs
