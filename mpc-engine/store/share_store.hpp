// Each server's key/share store: LMDB, every record encrypted at rest with
// libsodium secretbox (XSalsa20-Poly1305) under the server's storage key.
//
// Record key: the encoded KeyId (name, version, algorithm). Record value:
// 24-byte random nonce | secretbox(u64 created_unix | share material), with the
// record key bound in as well (the box is over key || plaintext, so a value moved
// under another key id fails to open).
//
// Storage key file: 32 random bytes as 64 hex digits on one line, mode 0600.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/secret.hpp"
#include "wire/key_id.hpp"

namespace mpc::store {

struct StoredKey {
  wire::KeyId key;
  std::uint64_t created_unix = 0;
};

class ShareStore {
 public:
  // Opens (creating if needed) the LMDB environment in `directory` (created 0700).
  // Throws Error(Store) on failure, or if the storage key is not 32 bytes.
  ShareStore(const std::filesystem::path& directory, const SecretBytes& storage_key,
             std::size_t map_size_bytes = 1ull << 30);
  ~ShareStore();
  ShareStore(const ShareStore&) = delete;
  ShareStore& operator=(const ShareStore&) = delete;

  // False (and nothing written) if the key id already exists: versions are never overwritten.
  [[nodiscard]] bool put(const wire::KeyId& key, const SecretBytes& share);
  // Empty if absent. Throws Error(Store) if the record fails authentication.
  std::optional<SecretBytes> get(const wire::KeyId& key) const;
  [[nodiscard]] bool remove(const wire::KeyId& key);
  // Sorted by name, then version, then algorithm.
  std::vector<StoredKey> list(const std::string& name_prefix = "") const;
  std::size_t count() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

SecretBytes generate_storage_key();
void write_storage_key_file(const std::filesystem::path& path, const SecretBytes& key);  // creates 0600
// Throws Error(Store) if the file is readable or writable by group or others, or malformed.
SecretBytes read_storage_key_file(const std::filesystem::path& path);

}  // namespace mpc::store
