// What a server keeps of the Kerberos garblings made ahead of their batches
// (prepared_garbling.hpp) until one batch uses each: the evaluator the garbled tables and
// the commitments it checked, the garblers the output wires' zero labels. Entries are named
// by the batch that prepared them (epoch, sequence) and taken out by the one batch that
// evaluates them, so no garbling is ever evaluated twice. Bounded in bytes; an entry not
// used within `life` is dropped, and so is every entry of an epoch the leader has left.
// Safe to use from the batch workers and the shell's thread at once.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "protocol/gc3/batch.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "protocol/gc2/labels.hpp"

namespace mpc::gc3 {

// Bytes in front of a kept garbled stream, so that its tables, after the stream's header, lie
// 16-byte aligned and the evaluator reads them where they are.
inline constexpr std::size_t kStreamLead = (16 - gc2::kStreamHeaderBytes % 16) % 16;

struct PreparedGarbling {
  ProgramName program{};               // the batch's program_name
  gc2::Labels zero_out;                 // garblers: the output wires' zero labels
  // Evaluator: kStreamLead bytes, then the garbled stream as party 1 sent it.
  std::vector<std::uint8_t> tables;
  std::span<std::uint8_t> stream() { return std::span(tables).subspan(std::min(kStreamLead, tables.size())); }
  std::vector<std::uint8_t> committed;  // evaluator: hashes of both labels of its input wires
  std::chrono::steady_clock::time_point made{};
  std::size_t bytes() const { return zero_out.size() * sizeof(gc2::Block) + tables.size() + committed.size(); }
};

class PreparedGarblings {
 public:
  PreparedGarblings(std::size_t capacity_bytes, std::chrono::seconds life);

  // Keeps `entry` as batch (epoch, sequence)'s; false when it does not fit (after dropping
  // what expired) or that batch already left one.
  bool put(std::uint64_t epoch, std::uint32_t sequence, PreparedGarbling entry,
           std::chrono::steady_clock::time_point now);
  // Takes out batch (epoch, sequence)'s entry; nullopt when there is none (never made here,
  // used, expired, dropped, or this server restarted since).
  std::optional<PreparedGarbling> take(std::uint64_t epoch, std::uint32_t sequence,
                                       std::chrono::steady_clock::time_point now);
  // Drops every entry of another epoch: a leader that restarted names none of them again.
  void keep_epoch(std::uint64_t epoch);

  // A buffer of `bytes` bytes for a garbling's tables: one that a used garbling left (its
  // pages mapped, nothing to zero: a login's 10 MB of tables otherwise cost the evaluator a
  // page fault per 4 KiB and a zero-fill each time), else a new one. The evaluator received
  // every byte of the tables it held, so a buffer passes between garblings without a wipe.
  std::vector<std::uint8_t> table_buffer(std::size_t bytes);
  // Keeps the tables of a used garbling for table_buffer (at most kSpareTableBuffers).
  void recycle(std::vector<std::uint8_t> tables);
  static constexpr std::size_t kSpareTableBuffers = 4;

  std::size_t size() const;
  std::size_t bytes() const;

 private:
  void drop_expired(std::chrono::steady_clock::time_point now);

  const std::size_t capacity_;
  const std::chrono::seconds life_;
  mutable std::mutex mutex_;
  std::map<std::pair<std::uint64_t, std::uint32_t>, PreparedGarbling> entries_;
  std::size_t bytes_ = 0;
  std::uint64_t epoch_ = 0;
  std::vector<std::vector<std::uint8_t>> spare_tables_;
};

}  // namespace mpc::gc3
