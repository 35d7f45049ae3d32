// Kerberos circuits garbled ahead of time (the offline/online split of garbled circuits,
// protocol/gc2/stored_garbling.hpp; why it is safe: protocol/gc2/half_gates.hpp, "Garbling
// ahead"). A Kerberos job garbled online streams its whole garbled circuit between the
// servers while it runs (32 bytes per AND, about 8 MB for an AS-REP encryption); a job whose
// garbling was prepared moves only the active labels of its public record (16 bytes per bit)
// and server 2 evaluates from memory.
//
// Offline (Gc2Backend::prepare, store_prepared). In idle time server 1 garbles a job's circuit
// for a shape (prepared_shape.hpp: key, label set, circuit, secret rows) with the key's existing
// input labels and fresh zero labels for the public rows, keeps those zero labels and the
// decoding bits (PreparedGarbling), and streams the tables to server 2, which keeps them
// (PreparedTables). The stream is a job of its own on a number with kPreparationJobBit set,
// behind every client job on the peer link (JobStreams), and paced: at most kPreparationWindow
// chunks of kPreparationChunkBytes unacknowledged, so a client job's frames never queue behind
// megabytes of tables. Server 2 confirms what it stored; only then does server 1 count the
// garbling as confirmed.
//
// Online (Gc2Backend::krb). Server 2 offers the oldest garbling it holds for the job's shape
// in the key handshake's first message (the message it sends anyway: no round trip is added);
// server 1 takes it out of its store if it holds it and names it, or names none and garbles
// now. Server 2 evaluates the named garbling, or the live stream when none is named; an
// answer naming another garbling than the offered one fails the job (PeerError). Each garbling
// is taken out of both stores when offered or named, whatever happens next, so none is ever
// used twice. Output decoding is as online: server 1's decoding bits and server 2's colours are
// the two shares of the result.
//
// Which shapes: those of the jobs that ran (a KDC sees the same few keys and lengths again and
// again), most recently used first, kReadyPerShape garblings each as far as the budget holds
// them, refilled after each use (PreparationPlanner).
//
// Staying in step. Garblings are dropped when the key's labels change: a new label set (server
// 1 restarted, or the key was imported anew) makes the old shapes unmatchable, and each side
// drops them when it learns of the new set; a deleted key's garblings go with it
// (forget_key), and a key's new version (rotation) drops those of its older versions;
// server 2 drops everything of an older garbler instance when a preparation of a
// new one arrives. When server 2 has lost its garblings (its restart, its budget), its offers
// say it holds none of the shape and server 1 drops its own of that shape. Every mismatch runs
// the job online; none hangs or evaluates the wrong tables (a garbling is found by shape and
// id on both sides, and a kept stream must be exactly the program's size).
//
// Memory: a byte budget per server ([limits] prepared_circuits_mib, 0 disables), counted in
// stream bytes on both sides (server 1 keeps far less per garbling, but counting alike keeps
// the stores in step), least recently used shape dropped first (prepared_store.hpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/secret.hpp"
#include "protocol/gc2/labels.hpp"
#include "engines/two_party/prepared_shape.hpp"
#include "engines/two_party/prepared_store.hpp"

namespace mpc::two_party_engine {

// Preparation streams' job numbers have this bit set; the leader's client job numbers never
// do (they start below 2^63 and count up), so server 2 knows a preparation by its number.
inline constexpr std::uint64_t kPreparationJobBit = std::uint64_t{1} << 63;
// Pacing of a preparation stream: chunks of this size, at most this many unacknowledged.
inline constexpr std::size_t kPreparationChunkBytes = 128 * 1024;
inline constexpr std::size_t kPreparationWindow = 2;
inline constexpr std::size_t kDefaultPreparedBytes = std::size_t{256} << 20;

// Server 1's part of a prepared garbling: what it needs to use it, once.
struct PreparedGarbling {
  std::uint64_t id = 0;    // the garbling's number (unique under server 1's delta)
  std::size_t bytes = 0;   // its stream's size: what server 2 keeps for it
  gc2::Labels mask_zero_labels;    // of R's rows (mask_labels.hpp): secret, as these
  gc2::Labels public_zero_labels;  // with delta they give both labels of a public row: secret
  SecretBytes decoding;    // the output decoding bits: server 1's share of the result, bit by bit
  bool confirmed = false;  // server 2 said it stored the stream
};

// Server 2's part: the stream server 1 garbled (header and tables; not secret from server 2).
struct PreparedTables {
  std::uint64_t id = 0;
  std::size_t bytes = 0;
  std::uint64_t garbler = 0;  // the garbler instance (server 1's start) that made it
  std::vector<std::uint8_t> stream;
};

// Which shapes server 1 keeps prepared (see above).
class PreparationPlanner {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kReadyPerShape = 2;
  static constexpr std::size_t kMaxShapes = 256;

  // A job of `shape` ran, prepared or not; its garbling streams `bytes`.
  void used(const PreparedShape& shape, std::size_t bytes);
  // The most recently used shape with fewer than kReadyPerShape garblings held (`held`),
  // among those whose kReadyPerShape garblings fit the budget in order of use; nullopt when
  // none, or while paused after a failure.
  std::optional<PreparedShape> next(const std::function<std::size_t(const PreparedShape&)>& held,
                                    std::size_t budget, Clock::time_point now) const;
  // A preparation of `shape` failed: the shape waits for its next use, and every preparation
  // waits a backoff that doubles per failure in a row (250 ms to 30 s).
  void failed(const PreparedShape& shape, Clock::time_point now);
  void succeeded();
  // Forgets the shapes for which `forget(shape)` holds.
  void forget_if(const std::function<bool(const PreparedShape&)>& forget);
  std::size_t shapes() const;

 private:
  struct Use {
    PreparedShape shape;
    std::size_t bytes = 0;
    bool waiting = false;  // failed; prepared again after its next use
  };
  mutable std::mutex mutex_;
  std::list<Use> recent_;  // most recently used first
  Clock::time_point paused_until_{};
  std::chrono::milliseconds backoff_{0};
};

// Both servers' state of prepared garblings, in the garbled-circuit engine (Gc2Backend).
class PreparedCircuits {
 public:
  explicit PreparedCircuits(std::size_t budget_bytes);

  std::size_t budget() const { return budget_.load(); }
  void set_budget(std::size_t budget_bytes);

  PreparedStore<PreparedGarbling> garblings;  // server 1
  PreparedStore<PreparedTables> tables;       // server 2
  PreparationPlanner planner;                 // server 1

  // Server 1: shapes dropped for room, which server 2 drops too when the next preparation
  // names them (at most kMaxDroppedPerHeader are remembered, the newest).
  void note_dropped(const std::vector<PreparedShape>& shapes);
  std::vector<PreparedShape> take_dropped();
  void restore_dropped(std::vector<PreparedShape> shapes);  // a preparation that failed

  // Server 2: jobs of a shape using a garbling right now. An offer of none tells server 1 to
  // drop its own garblings of the shape, which it must not while another job uses one.
  void begin_use(const PreparedShape& shape);
  void end_use(const PreparedShape& shape);
  bool in_use(const PreparedShape& shape) const;

  // Server 2: the instance of the garbler whose preparation just arrived. A new one (server 1
  // restarted) drops every garbling of the others; returns how many.
  std::size_t garbler_seen(std::uint64_t instance);

  // Drops everything of `key` on this side (deleted, or its labels replaced): garblings,
  // tables and planned shapes, except those of label set `keep` when it is nonzero.
  void forget_key(const wire::KeyId& key, std::uint64_t keep = 0);
  // Drops everything of the keys named like `key` with a lower version (it replaced them).
  void forget_older_versions(const wire::KeyId& key);

  // Counters for the status line and the tests.
  std::atomic<std::uint64_t> made{0};     // server 1: preparations server 2 confirmed; server 2: stored
  std::atomic<std::uint64_t> used{0};     // jobs that ran on a prepared garbling
  std::atomic<std::uint64_t> online{0};   // Kerberos jobs garbled online
  std::atomic<std::uint64_t> refused{0};  // offers server 1 could not take, or preparations that failed
  std::string describe() const;

 private:
  std::atomic<std::size_t> budget_;
  mutable std::mutex mutex_;
  std::vector<PreparedShape> dropped_;
  std::map<PreparedShape, std::size_t> in_use_;
  std::uint64_t garbler_ = 0;
};

}  // namespace mpc::two_party_engine
