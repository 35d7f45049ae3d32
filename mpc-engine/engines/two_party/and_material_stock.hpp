// The AND material of authenticated garbling (protocol/auth2: a triple and an output mask per
// AND gate, a mask per input) that a server of a two-server cluster of security = "active" keeps
// made ahead, and the job sessions that use it. The leader announces batches like lut2's masked
// tables (two_party_engine.hpp): one auth2 session per pool epoch, its OT extension continued
// over each batch's stream, so every entry of an epoch is authenticated under the same two
// deltas. A job takes the range of entries the leader assigned it and a job session on its own
// stream with that epoch's deltas. A new epoch (the leader's start, a failed batch, a restarted
// peer) opens a new session, with new deltas.
//
// The entries made in the epoch left last stay, with its session's deltas, until the next new
// epoch: a batch that failed (a peer that did not answer in time) leaves the session's state
// unknown, not the batches before it, which passed their checks. Jobs the leader assigns ranges
// of that epoch take them as before; no batch of it is made any more, so no tweak of it is used
// twice. An epoch that made nothing before it was left (its first batch failed too) leaves the
// one before it kept. A follower keeps them whether or not its leader still draws on them: one
// pool's memory at most, wiped at the next new epoch.
//
// The session's OT extension is a state both servers advance alike, so an epoch's batches run
// one after another, in the order of their first entries, as the leader made them: a batch
// announced while the one before it still ends on another thread (a pair standing by works on a
// thread of its own) waits for it.
//
// Tweaks: a batch's leaky ANDs hash under kBatchTweaksPerEntry tweaks per entry from its first
// entry, a job under kJobTweaksPerEntry per entry from its first: ranges no other batch or job
// of the epoch takes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "protocol/auth2/and_triples.hpp"
#include "protocol/auth2/auth_bits.hpp"
#include "protocol/two_party/channel.hpp"
#include "protocol/two_party/numbered_pool.hpp"

namespace mpc::two_party_engine {

inline constexpr std::uint64_t kJobTweaksPerEntry = 4;
// How long a batch waits for the one before it: that one ends or fails within its stream's
// timeout once it runs, but a standing pair's thread runs only when the cores are idle.
inline constexpr std::chrono::seconds kBatchOrderWait{30};

class AndMaterialStock {
 public:
  // party: 0 (server 1, the garbler) or 1.
  explicit AndMaterialStock(int party) : party_(party) {}

  // A job's entries [start, start + count) of `epoch` (waiting at most `wait` for a batch still
  // being made) and a job session over `peer` with that epoch's deltas. Throws
  // two_party::PoolEmpty when they do not come (the range is then given up).
  struct Taken {
    Taken(std::vector<auth2::AndMaterial> entries, auth2::Session job) : material(std::move(entries)), session(std::move(job)) {}
    Taken(Taken&&) = default;
    ~Taken();  // wipes the material
    std::vector<auth2::AndMaterial> material;
    auth2::Session session;
  };
  Taken take(two_party::Channel& peer, std::uint64_t epoch, std::uint64_t start, std::uint64_t count,
             std::chrono::milliseconds wait);

  // Makes entries [start, start + count) of `epoch` with the other server, once the epoch's
  // batch ending at `start` has ended (at most kBatchOrderWait).
  void preprocess(two_party::Channel& peer, std::uint64_t epoch, std::uint64_t start, std::uint64_t count);
  // Numbering starts afresh under `epoch`, with new deltas; the epoch left keeps its entries
  // made (above), and the one left before it is dropped. The epoch in use changes nothing.
  void reset(std::uint64_t epoch);
  // Whether `epoch` is the epoch left whose made entries are kept.
  bool holds_left_epoch(std::uint64_t epoch) const;
  std::string describe() const;

 private:
  using Pool = two_party::NumberedPool<auth2::AndMaterial>;
  struct Epoch {
    std::uint64_t id = 0;
    std::shared_ptr<auth2::Session> session;  // made by the epoch's first batch
    std::shared_ptr<Pool> pool = std::make_shared<Pool>("AND-material");
  };

  int party_;
  mutable std::mutex mutex_;
  Epoch current_;
  Epoch left_;                           // the epoch left last, its made entries only
  std::uint64_t next_batch_start_ = 0;   // of current_: where the batch to run next starts
  std::condition_variable batch_ended_;
};

}  // namespace mpc::two_party_engine
