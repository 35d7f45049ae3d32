// Messages between the two servers of a two-server cluster (protocol gc2 or lut2). One
// ZeroMQ frame each, little-endian, over the CurveZMQ peer link:
//
//   u8 version (=1) | u8 type | u64 job | body
//
// Party 1 leads: it numbers the jobs and announces each one (Announce); both servers then
// run the job's protocol over its own byte stream (Data frames of that job, in order);
// either side may abandon a job (Abort); the follower says when it started (Started). Job numbers restart at a random 64-bit value when
// the leader starts, so frames of a job from before a restart never match a new one.
// Numbers with the top bit set are preparation streams (engines/two_party/preparation_header.hpp):
// party 1 starts them without an Announce, in idle time, to send a Kerberos garbling made
// ahead; they go after every client job's frames on the link.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "wire/client_messages.hpp"

namespace mpc::wire {

using ClientKey = std::array<std::uint8_t, 32>;

// What an announced job is: a client's request, or a round of lookup-table preprocessing
// (lut2, by OT or from the dealer's batch) that refills both servers' pools.
enum class TwoServerJobKind : std::uint8_t { ClientRequest = 1, LutPreprocessing = 2 };

// Body: u8 kind | 32-byte client public key | 16-byte request id | u64 lookup-table pool
// epoch | u64 pool start | u64 pool entries (lut2: the entries the job uses or fills, numbered
// within the epoch; else 0) | u64 dealer batch. A new epoch tells the follower to drop its
// pool: the leader starts one when it starts, when the follower says it started (Started), and
// whenever a job failed on the follower's side.
// For a client request the follower runs the client's own copy of the request; the leader
// only names it. A preprocessing job has a zero client key and request id. The dealer batch
// is the id of the batch the lookup-table dealer sent both servers for a preprocessing job
// with [lut] preprocessing = "dealer" (wire/dealer_messages.hpp), else 0.
struct TwoServerAnnounce {
  std::uint64_t job = 0;
  TwoServerJobKind kind = TwoServerJobKind::ClientRequest;
  ClientKey client{};
  RequestId request{};
  std::uint64_t pool_epoch = 0;
  std::uint64_t pool_start = 0;
  std::uint64_t pool_entries = 0;
  std::uint64_t dealer_batch = 0;
};

// Body: the next bytes of the job's stream (at most kMaxTwoServerDataBytes).
struct TwoServerData {
  std::uint64_t job = 0;
  std::vector<std::uint8_t> bytes;
};

// Body: short string reason.
struct TwoServerAbort {
  std::uint64_t job = 0;
  std::string reason;
};

// No body (job 0): the follower's engine started and holds no pool. The leader's pool entries
// made with it before are gone on its side, so the leader starts a new pool epoch rather than
// hand out a job's material the follower lacks.
struct TwoServerStarted {
  std::uint64_t job = 0;
};

inline constexpr std::size_t kMaxTwoServerDataBytes = 16u << 20;

using TwoServerMessage = std::variant<TwoServerAnnounce, TwoServerData, TwoServerAbort, TwoServerStarted>;

std::vector<std::uint8_t> encode_two_server(const TwoServerMessage& message);
// Throws FormatError(Wire) for anything malformed, including trailing bytes.
TwoServerMessage decode_two_server(std::span<const std::uint8_t> frame);

}  // namespace mpc::wire
