// The share material of the most recently used keys, open in memory. Opening a stored record
// costs an LMDB read and a secretbox over up to 33 KB, and a protected login asks for several
// jobs with one key, so the last few keys used stay open. That exposes nothing new: a
// server's material is in its memory for every job anyway, and one server's share is
// uniform on its own. Entries are SecretBytes (wiped when dropped); the cache is bounded,
// and deleting or replacing a key drops it.
#pragma once

#include <cstddef>
#include <vector>

#include "common/secret.hpp"
#include "store/share_store.hpp"
#include "wire/key_id.hpp"

namespace mpc::node {

class KeyCache {
 public:
  static constexpr std::size_t kDefaultCapacity = 16;
  // `material_copies`: how many copies of a key's material a share holds (2 for a replicated
  // share, 1 for an XOR share); what a stored record holds past them is the key share's check
  // (protocol/client_checks/share_checks.hpp), dealt with a two-server cluster's shares.
  KeyCache(store::ShareStore& store, std::size_t material_copies, std::size_t capacity = kDefaultCapacity);
  // The material of `key`, or nullptr if none is stored. Valid until the next get(),
  // share_check() or forget().
  const SecretBytes* get(const wire::KeyId& key);
  // The check stored with `key`'s share, or nullptr if none is (or no key): valid as get()'s.
  const SecretBytes* share_check(const wire::KeyId& key);
  void forget(const wire::KeyId& key);
  std::size_t size() const { return open_.size(); }

 private:
  struct Open {
    wire::KeyId key;
    SecretBytes material;
    SecretBytes share_check;  // empty: none stored
  };
  Open* open(const wire::KeyId& key);

  store::ShareStore& store_;
  std::size_t material_copies_;
  std::size_t capacity_;
  std::vector<Open> open_;  // most recently used first
};

}  // namespace mpc::node
