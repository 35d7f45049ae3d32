// Messages between the two servers of a lut2 cluster and the lookup-table dealer
// (mpc-lut-dealer, protocol/lut2/dealer.hpp). One ZeroMQ frame each, little-endian, over a
// CurveZMQ link on which the dealer admits exactly the two servers' keys and each server pins
// the dealer's key:
//
//   u8 version (=1) | u8 type | body
//
//   Hello          server -> dealer   (empty)                  "send my batches here"
//   BatchRequest   server 1 -> dealer u64 request | u32 count
//   BatchSeed      dealer -> server 1 u64 request | u64 batch | u32 count | 32-byte seed
//   BatchEntries   dealer -> server 2 u64 batch | u32 count | count x 33-byte entry
//   BatchRefused   dealer -> server 1 u64 request | short string reason
//
// An entry is its four one-hot words (little-endian u64) and then its mask byte: the layout of
// lut2::expand_seed's stream. A batch id is a fresh random non-zero 64-bit number per batch;
// the dealer keeps nothing after sending one, so a batch is never dealt twice.
//
// The seed and the entries are secret (each one server's shares): the decoded messages wipe
// them when destroyed, and callers wipe the encoded frames after sending them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "protocol/lut2/dealer.hpp"
#include "protocol/lut2/masked_table.hpp"

namespace mpc::wire {

// The most entries one batch may hold (about 2.2 MB to server 2).
inline constexpr std::uint32_t kMaxDealerBatchEntries = 1u << 16;
inline constexpr std::size_t kDealerEntryBytes = 33;
inline constexpr std::size_t kMaxDealerReasonBytes = 1024;
// Largest frame either side may receive (a BatchEntries of kMaxDealerBatchEntries).
inline constexpr std::size_t kMaxDealerFrameBytes = 2 + 8 + 4 + kMaxDealerBatchEntries * kDealerEntryBytes;

struct DealerHello {};

struct DealerBatchRequest {
  std::uint64_t request = 0;  // the asking server's number, echoed in the answer
  std::uint32_t count = 0;    // 1..kMaxDealerBatchEntries
};

struct DealerBatchSeed {
  std::uint64_t request = 0;
  std::uint64_t batch = 0;  // non-zero
  std::uint32_t count = 0;
  lut2::Seed seed{};
  DealerBatchSeed() = default;
  DealerBatchSeed(const DealerBatchSeed& other) = default;
  DealerBatchSeed& operator=(const DealerBatchSeed& other) = default;
  ~DealerBatchSeed();
};

struct DealerBatchEntries {
  std::uint64_t batch = 0;  // non-zero
  std::vector<lut2::Entry> entries;  // 1..kMaxDealerBatchEntries
  DealerBatchEntries() = default;
  DealerBatchEntries(DealerBatchEntries&& other) noexcept = default;
  DealerBatchEntries& operator=(DealerBatchEntries&& other) noexcept;
  DealerBatchEntries(const DealerBatchEntries&) = delete;
  DealerBatchEntries& operator=(const DealerBatchEntries&) = delete;
  ~DealerBatchEntries();
};

struct DealerBatchRefused {
  std::uint64_t request = 0;
  std::string reason;
};

using DealerMessage =
    std::variant<DealerHello, DealerBatchRequest, DealerBatchSeed, DealerBatchEntries, DealerBatchRefused>;

// Throws FormatError(Wire) for a message that may not be sent (a zero batch id, a count out
// of range, a reason that is too long is cut instead).
std::vector<std::uint8_t> encode_dealer(const DealerMessage& message);
// The same for a batch's entries, without copying them into a DealerMessage.
std::vector<std::uint8_t> encode_dealer(const DealerBatchEntries& message);
// Throws FormatError(Wire) for anything malformed: unknown version or type, a count of zero or
// over kMaxDealerBatchEntries, a zero batch id, an entry count that disagrees with the frame's
// length, trailing bytes.
DealerMessage decode_dealer(std::span<const std::uint8_t> frame);

}  // namespace mpc::wire
