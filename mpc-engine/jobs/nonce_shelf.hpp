// Shares of GCM nonces kept by nonce, bounded in number (the oldest entry makes room for a new
// one) and in time (an entry older than the TTL is never found), each found only under the key
// it was made under: what the nonce pool keeps per client (nonce_pool.hpp) and what a server
// keeps of the nonces it tagged (tagged_nonces.hpp). Entries are wiped as they go. `now` must
// never go backwards.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <array>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/secret.hpp"
#include "wire/client_messages.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::jobs {

// One party's raw replicated share (x, a) of AES_K(N || 1) for one nonce, and the masked
// shares of its keystream blocks as the prefetch answered them (x of every block, then a of
// every block), kept for reopening the ticket (tagged_nonces.hpp).
struct NonceShare {
  std::array<std::uint8_t, 16> x{};
  std::array<std::uint8_t, 16> a{};
  SecretBytes keystream;
  NonceShare() = default;
  NonceShare(const NonceShare&) = default;
  NonceShare& operator=(const NonceShare&) = default;
  // The keystream's buffer moves from the prefetch to the pool and on to the tagged nonces.
  NonceShare(NonceShare&&) noexcept = default;
  NonceShare& operator=(NonceShare&&) noexcept = default;
  ~NonceShare();
};

class NonceShelf {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Found { Fresh, Absent, Expired, OtherKey };

  NonceShelf(std::size_t capacity, std::chrono::seconds ttl);  // capacity > 0

  // Keeps the share of a nonce not on the shelf (erase() it first otherwise). Returns how many
  // of the oldest entries it dropped to make room.
  std::size_t add(const wire::KeyId& key, const wire::GcmNonce& nonce, NonceShare share, Clock::time_point now);
  // The share kept for the nonce when it is fresh and was made under `key`, or nullptr, with
  // why in `found` when given. Valid until the shelf next changes.
  [[nodiscard]] NonceShare* find(const wire::KeyId& key, const wire::GcmNonce& nonce, Clock::time_point now,
                                 Found* found = nullptr);
  [[nodiscard]] const NonceShare* find(const wire::KeyId& key, const wire::GcmNonce& nonce,
                                       Clock::time_point now) const;
  bool contains(const wire::GcmNonce& nonce) const { return entries_.count(nonce) != 0; }  // fresh or not
  bool erase(const wire::GcmNonce& nonce);  // whether it was there
  // Drops every entry older than the TTL; returns how many.
  std::size_t expire(Clock::time_point now);
  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }

 private:
  struct Entry {
    NonceShare share;
    std::uint32_t key_index = 0;
    Clock::time_point added;
    std::uint64_t serial = 0;
  };
  // The servers choose every nonce kept here (the leader's counter), so a plain hash of its
  // bytes cannot be steered into collisions by a client, whose nonces are only looked up.
  struct NonceHash {
    std::size_t operator()(const wire::GcmNonce& nonce) const noexcept {
      return std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(nonce.data()), nonce.size()));
    }
  };
  using Entries = std::unordered_map<wire::GcmNonce, Entry, NonceHash>;
  std::uint32_t key_index(const wire::KeyId& key);
  Found look(const wire::KeyId& key, Entries::const_iterator entry, Clock::time_point now) const;
  void erase(Entries::iterator entry);

  std::size_t capacity_;
  std::chrono::seconds ttl_;
  Entries entries_;
  std::map<std::uint64_t, wire::GcmNonce> order_;  // by serial: oldest first
  std::vector<wire::KeyId> keys_;                  // interned: entries name their key by index
  std::uint64_t next_serial_ = 0;
};

}  // namespace mpc::jobs
