// What a server keeps of a GCM nonce once it has tagged a ticket or a checksum with it: its
// share of the tag mask AES_K(N || 1) and the masked shares of the nonce's keystream, so that
// opening that ticket later (each TGS that presents it) needs no AES between the servers
// (docs/ticket-format.md, Reopen).
//
// Kept by nonce: the leader hands a nonce out once, whatever the key, and any client may
// reopen a ticket, as any client may open one. Bounded in number (the oldest entry makes room
// for a new one) and in time; a nonce not found costs the client a full open, nothing more.
// Secrets in memory only: wiped when evicted, expired or when the store goes away, and lost
// on restart.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "jobs/nonce_shelf.hpp"
#include "wire/client_messages.hpp"

namespace mpc::jobs {

class TaggedNonces {
 public:
  using Clock = std::chrono::steady_clock;

  // capacity 0 keeps nothing.
  TaggedNonces(std::size_t capacity, std::chrono::seconds ttl);
  TaggedNonces(const TaggedNonces&) = delete;
  TaggedNonces& operator=(const TaggedNonces&) = delete;

  // Keeps the share of a nonce just tagged under `key`. A nonce kept already is replaced.
  void keep(const wire::KeyId& key, const wire::GcmNonce& nonce, NonceShare share, Clock::time_point now);
  // The share kept for the nonce under `key`, or nullptr (none, expired, or another key).
  // Valid until the next keep() or expire().
  [[nodiscard]] const NonceShare* find(const wire::KeyId& key, const wire::GcmNonce& nonce,
                                       Clock::time_point now) const {
    return shelf_.find(key, nonce, now);
  }
  // Drops every entry older than the TTL.
  void expire(Clock::time_point now) { shelf_.expire(now); }
  std::size_t size() const noexcept { return shelf_.size(); }

 private:
  bool keeps_;
  NonceShelf shelf_;
};

}  // namespace mpc::jobs
