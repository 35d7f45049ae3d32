// Every batch epoch and GCM nonce epoch this server has ever computed under, kept on disk, so
// that no leader can bring one back: not after another epoch, not after a restart of the
// leader or of this server.
//
// Why this and not fresh randomness from every server: an epoch is what makes correlated
// randomness ids (rss3), GCM nonces (epoch || counter), prepared and dual garblings' secrets
// and pads fresh, and the leader alone draws it. Within one epoch a follower already refuses
// a batch id or a nonce that does not grow; across epochs it kept nothing, so a leader that
// alternated E1, E2, E1 had every id and nonce of E1 computed a second time. With each
// follower refusing any epoch it opened before, a replay needs the follower to take part,
// and one deviating server is all the product allows. Follower contributions to each epoch
// would give the same guarantee with one more round trip per epoch and the same question of
// what a restarted follower still holds; a ledger needs no new message and covers the
// two-party engines too (their nonce epochs share the format, and so this ledger).
//
// A server that restarts cannot tell where it stopped inside an epoch, so it refuses every
// epoch in the file, the one its leader is still in included; the leader then starts another
// (one batch retried per restart of a follower).
//
// File: 8-byte big-endian epochs, appended, each made durable (fdatasync) before the epoch is
// used. A record cut short by a crash was never confirmed, so it is dropped when read.
// Epoch 0 means "none" everywhere and is never opened.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <unordered_set>

#include "common/file_descriptor.hpp"

namespace mpc::store {

class EpochLedger {
 public:
  // Reads (creating it, mode 0600) the ledger at `path`; an empty path keeps it in memory
  // only, for tests and benchmarks that run no restart. Throws Error(Store) if the file
  // cannot be opened or read.
  explicit EpochLedger(const std::filesystem::path& path);

  // True when `epoch` was never opened here before: it is recorded (on disk before this
  // returns) and may be used once. False for 0 and for every epoch opened before. Throws
  // Error(Store) when the record cannot be made durable: nothing may run under the epoch then.
  // Safe to call from several threads.
  [[nodiscard]] bool open(std::uint64_t epoch);

  std::size_t size() const;

 private:
  const std::filesystem::path path_;
  FileDescriptor file_{-1};  // -1: in memory only
  std::size_t end_ = 0;  // bytes of whole records in the file
  mutable std::mutex mutex_;
  std::unordered_set<std::uint64_t> opened_;
};

// The ledger's file in a server's store directory.
std::filesystem::path epoch_ledger_path(const std::filesystem::path& store_directory);

}  // namespace mpc::store
