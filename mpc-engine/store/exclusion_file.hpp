// The server an operator took out of service (wire::ExclusionRequest), kept on disk so that a
// restart brings nobody back: an excluded server returns only when an operator readmits it.
// Beside it, this server's disputes (node/disputes.hpp), kept so that a restart does not hand
// a server caught deviating a new seat in the pair.
//
// Beside them, how many readmissions this server has taken: a restart keeps telling a readmission
// it missed (peers that count more) from one it took.
//
// Files: one line "party <0..2> since <unix ms> reason <text to the end of the line>", and one
// line "distrusts <0..7> suspended <0|1> failed_pairs <0..7> readmissions <n> reason <text>" (a
// record without "failed_pairs" or "readmissions" holds none), each replaced whole (written beside it, made durable, renamed
// over it); no file: nobody is excluded, no dispute, no readmission.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace mpc::store {

struct Exclusion {
  int party = 0;  // 0-based
  std::uint64_t since_unix_ms = 0;
  std::string reason;
  bool operator==(const Exclusion&) const = default;
};

// nullopt when there is no file. Throws Error(Store) for a file that cannot be read or does not
// hold one record (a damaged file is not taken as "nobody excluded").
std::optional<Exclusion> read_exclusion(const std::filesystem::path& path);
// Replaces the record (nullopt removes it), durably before it returns. Throws Error(Store) for a
// reason holding a line break or a write that fails; the old record then stays.
void write_exclusion(const std::filesystem::path& path, const std::optional<Exclusion>& exclusion);

// The record's file in a server's store directory.
std::filesystem::path exclusion_path(const std::filesystem::path& store_directory);

struct Disputes {
  std::uint8_t distrusts = 0;  // bit p: in a dispute with party p
  bool three_party_suspended = false;
  std::uint8_t failed_pairs = 0;  // bit m: the pair serving without party m failed (node/disputes.hpp)
  std::uint32_t readmissions = 0;  // node/membership.hpp
  std::string reason;  // the last failed check
  bool operator==(const Disputes&) const = default;
};

// As read_exclusion and write_exclusion; nullopt: no dispute and no readmission.
std::optional<Disputes> read_disputes(const std::filesystem::path& path);
void write_disputes(const std::filesystem::path& path, const std::optional<Disputes>& disputes);
std::filesystem::path disputes_path(const std::filesystem::path& store_directory);

}  // namespace mpc::store
