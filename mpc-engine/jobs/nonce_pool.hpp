// GCM nonces of the AES-256-GCM jobs (docs/ticket-format.md): how the leader numbers them,
// how a follower checks the numbers it is given, and the pool in which each server keeps
// its share of AES_K(N || 1) between a prefetch and the one tag that may use it.
//
// A nonce is the leader's 64-bit epoch (big-endian) || a 32-bit big-endian counter. The
// epoch is random per leader start and the counter only grows within it; a follower takes
// counters that grow within its current epoch only, and never an epoch it computed under
// before (store/epoch_ledger.hpp), so no nonce is computed twice, even for a leader that
// repeats one on purpose.
// Counters run below 2^31: the top bit marks a nonce with local masks (gcm_masks.hpp), which
// takes its counter from the same run as the others.
//
// The pool holds secrets (raw replicated shares) in memory only: entries are wiped when
// taken, expired, evicted or when the pool goes away, and a server restart loses them
// all, which is what the client contract promises (MPC_ENONCE: prefetch again).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/secret.hpp"
#include "jobs/nonce_shelf.hpp"
#include "wire/client_messages.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::jobs {

wire::GcmNonce make_gcm_nonce(std::uint64_t epoch, std::uint32_t counter);
// The nonce of counter `counter` (below 2^31) of `epoch` in a prefetch with or without local
// masks: with them, the counter's top bit is set.
wire::GcmNonce prefetch_nonce(std::uint64_t epoch, std::uint32_t counter, bool local_masks);
// N || be32(block): the AES input of GCM block `block` of nonce N (1 masks the tag, 2.. are
// the keystream).
std::array<std::uint8_t, 16> gcm_counter_block(const wire::GcmNonce& nonce, std::uint32_t block);
std::uint64_t gcm_nonce_epoch(const wire::GcmNonce& nonce);
std::uint32_t gcm_nonce_counter(const wire::GcmNonce& nonce);
// The nonce in hex, for messages and logs.
std::string describe_nonce(const wire::GcmNonce& nonce);

// Leader side: the next counter of the current epoch. take() never wraps; when a range no
// longer fits the caller moves to a new epoch and calls restart().
class NonceCounter {
 public:
  explicit NonceCounter(std::uint64_t next = 0) : next_(next) {}
  [[nodiscard]] bool fits(std::uint32_t count) const noexcept { return next_ + count <= kEnd; }
  // First counter of `count` fresh ones; the caller checked fits(count).
  std::uint32_t take(std::uint32_t count);
  void restart() noexcept { next_ = 0; }

 private:
  static constexpr std::uint64_t kEnd = wire::kGcmCountersPerEpoch;
  std::uint64_t next_;
};

struct NonceRange {
  std::uint32_t first = 0;
  std::uint32_t count = 0;  // > 0
};

// Follower side: a party computes AES_K(N || 1) for a nonce at most once, even if a leader
// (or whoever can speak for it) repeats a batch's nonces under a new batch id.
class NonceGuard {
 public:
  // True, and remembered, when every range lies strictly above the previous one and above
  // every range accepted before in `epoch`; false (nothing remembered) otherwise. Another
  // epoch starts afresh: the caller lets only an epoch it never computed under begin.
  [[nodiscard]] bool accept(std::uint64_t epoch, std::span<const NonceRange> ranges);

 private:
  std::uint64_t epoch_ = 0;
  std::optional<std::uint32_t> last_;  // highest counter accepted in epoch_
};

// Shares kept per (authenticated client key, nonce), each usable once, by the key it was
// made under only. Bounded per client (the oldest entry is dropped for a new one) and in
// time (entries older than the TTL are gone). `now` must never go backwards.
class NoncePool {
 public:
  using Clock = std::chrono::steady_clock;

  NoncePool(std::size_t per_client, std::chrono::seconds ttl);
  ~NoncePool();
  NoncePool(const NoncePool&) = delete;
  NoncePool& operator=(const NoncePool&) = delete;

  // False if the client already had an entry for this nonce: a nonce seen twice is never
  // served, so that entry is dropped too.
  [[nodiscard]] bool put(const wire::PublicKey& client, const wire::KeyId& key, const wire::GcmNonce& nonce,
                         NonceShare share, Clock::time_point now);
  // The entry, removed; empty when there is none, when it expired (removed too) or when it
  // was made under another key (left in place).
  [[nodiscard]] std::optional<NonceShare> take(const wire::PublicKey& client, const wire::KeyId& key,
                                               const wire::GcmNonce& nonce, Clock::time_point now);
  // Whether take() would find the entry now (it stays in place).
  [[nodiscard]] bool holds(const wire::PublicKey& client, const wire::KeyId& key, const wire::GcmNonce& nonce,
                           Clock::time_point now) const;
  // Drops every entry older than the TTL.
  void expire(Clock::time_point now);

  std::size_t size() const noexcept { return size_; }
  std::size_t size(const wire::PublicKey& client) const;

 private:
  using Clients = std::map<wire::PublicKey, NonceShelf>;
  void drop(Clients::iterator holder, const wire::GcmNonce& nonce);

  std::size_t per_client_;
  std::chrono::seconds ttl_;
  Clients clients_;
  std::size_t size_ = 0;
};

}  // namespace mpc::jobs
