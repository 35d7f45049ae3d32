// Each server's key/share store: LMDB, every record encrypted at rest with
// libsodium secretbox (XSalsa20-Poly1305) under the server's storage key.
//
// Record key (LMDB key): the KeyId encoded so that LMDB's byte order is the
// documented list order (names never contain 0x00):
//   name bytes | 0x00 | u32 big-endian version | u8 algorithm
// Record value:
//   24-byte random nonce | crypto_secretbox_easy(plaintext)   (16-byte MAC first)
// Key ids deleted for good keep a tombstone in a second database ("deleted"), under the same
// LMDB key, sealed the same way with the deletion time and one byte 0x01 as the share.
// The checks of a share for the pair serving without a server (pair_check) live in a third
// database ("pair_checks") under the record key and one byte more, that server's number, sealed
// the same way with that longer key; removing the key removes them.
//   plaintext = u8 format (1) | u16 LE record key length | record key
//             | u64 LE created_unix | share material
// The record key is bound in by sealing it inside the box and comparing it with
// the LMDB key on every open: a value moved or copied under another key id, a
// flipped byte or a wrong storage key all throw Error(Store); nothing is ever
// returned from a record that did not open. (secretbox, as DESIGN.md section 5
// says, rather than an AEAD with the record key as additional data: same
// guarantee, one primitive for all of the project's at-rest data, and the
// 24-byte random nonce makes random nonces safe for the life of a key.)
// Plaintext buffers are SecretBytes and wiped on every exit path.
//
// Concurrency: one ShareStore per directory per process (LMDB's rule); its
// methods may be called from any thread at once (MDB_NOTLS read transactions;
// LMDB serialises writers).
//
// Storage key file: 32 random bytes as 64 hex digits and a newline, mode 0600.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/secret.hpp"
#include "wire/key_id.hpp"

namespace mpc::store {

inline constexpr std::size_t kStorageKeyBytes = 32;
// Largest share accepted by put (and by get, as a sanity bound on stored data).
inline constexpr std::size_t kMaxShareBytes = 1u << 16;

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
  // Throws FormatError(Wire) for an invalid key name, FormatError(Store) for an unknown
  // algorithm or a share that is empty or longer than kMaxShareBytes, Error(Store) if LMDB fails.
  // False too for a key id deleted for good (remove with Removal::Final).
  [[nodiscard]] bool put(const wire::KeyId& key, const SecretBytes& share);
  // Empty if absent. Throws Error(Store) if the record fails authentication.
  std::optional<SecretBytes> get(const wire::KeyId& key) const;
  // Reusable: the id may be imported again. Final: a tombstone stays in its place (sealed like
  // a record, bound to the id), and put refuses the id from then on, restarts included.
  enum class Removal : std::uint8_t { Reusable, Final };
  [[nodiscard]] bool remove(const wire::KeyId& key, Removal how = Removal::Reusable);
  // Whether the id was deleted for good. Throws Error(Store) if its tombstone fails authentication.
  bool deleted_for_good(const wire::KeyId& key) const;
  // The checks of this server's share of `key` that server `dealer` (0-based) dealt for the pair
  // serving without it (protocol/client_checks/pair_checks.hpp). A later deal replaces an
  // earlier one. Throws as put, and FormatError(Store) for a dealer outside 0..2.
  void put_pair_check(const wire::KeyId& key, int dealer, const SecretBytes& check);
  std::optional<SecretBytes> pair_check(const wire::KeyId& key, int dealer) const;
  // Sorted by name, then version, then algorithm; only names starting with name_prefix.
  // Opens (authenticates) every listed record for its created time; throws Error(Store)
  // if one fails.
  std::vector<StoredKey> list(const std::string& name_prefix = "") const;
  std::size_t count() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

SecretBytes generate_storage_key();  // kStorageKeyBytes from the system CSPRNG
// Creates the file exclusively (never replaces one) with mode 0600; throws Error(Store).
void write_storage_key_file(const std::filesystem::path& path, const SecretBytes& key);
// Throws Error(Store) if the file is not a regular file, is readable or writable by group
// or others, or does not hold exactly 64 hex digits (optionally followed by one newline).
SecretBytes read_storage_key_file(const std::filesystem::path& path);

}  // namespace mpc::store
