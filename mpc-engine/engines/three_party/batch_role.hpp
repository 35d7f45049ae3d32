// What a batch's leader and its followers do differently; everything else about running a
// batch is the same on all three servers (three_party_engine.hpp).
//
// Party 1 leads: it groups the jobs every server agreed on into batches (one circuit per
// batch, big jobs split, small ones coalesced, at most max_batch_blocks instances) and
// announces each to the other two the moment a batch worker is free, with no waiting window
// (batch_leader.hpp). Parties 2 and 3 follow: they start the announced batches in order, after
// checking that the leader's header names requests they hold with the same digests, batch ids
// that only grow and GCM nonces never used before (batch_follower.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "engines/three_party/jobs.hpp"
#include "wire/client_messages.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::three_party_engine {

class BatchWorker;

// The workers a batch may run on: those of the fixed AES and GCM circuits, those of Kerberos
// circuits (and of a key's material), and the one that prepares Kerberos garblings ahead at the lowest CPU priority
// (ThreePartyEngine).
enum class WorkerPool : std::uint8_t { Fixed, Krb, Preparation };

// The pool that runs the batch `header` announces.
WorkerPool pool_of(const wire::BatchHeader& header);
// Whether `header` runs no circuit (a batch of local masks): it starts at once on the shell's
// thread, with no worker and no message between the servers.
bool runs_without_worker(const wire::BatchHeader& header);

// What a role may do with the engine it serves.
class BatchStarter {
 public:
  virtual ~BatchStarter() = default;
  virtual std::map<node::JobKey, Job>& jobs() = 0;
  // An idle worker of `pool`; nullptr if none.
  virtual BatchWorker* idle_worker(WorkerPool pool) const = 0;
  // Whether no worker of `pool` runs a batch.
  virtual bool pool_idle(WorkerPool pool) const = 0;
  // Runs `header` on this server (on `worker`, or inline when small enough). A batch that
  // runs no circuit (runs_without_worker) is given no worker.
  virtual void start_batch(const wire::BatchHeader& header, BatchWorker* worker) = 0;
  // Tells the other two to drop the batch, answers its jobs here with `status` and tells the
  // role the batch ended (BatchRole::batch_done).
  virtual void abort_batch(const wire::BatchHeader& header, wire::Status status, const std::string& detail) = 0;
  // Sends a frame to another party: false when it is unreachable.
  virtual bool send_to(int party, const std::vector<std::uint8_t>& frame) = 0;
};

class BatchRole {
 public:
  virtual ~BatchRole() = default;
  // A job handed to the engine on this server.
  virtual void job_admitted(const node::JobKey& key) = 0;
  // A batch header a peer sent.
  virtual void take_header(int from, wire::BatchHeader header) = 0;
  // Starts every batch that can start now.
  virtual void schedule(BatchStarter& starter) = 0;
  // Whether a batch could start at once (the engine's loop then does not sleep).
  virtual bool ready(const BatchStarter& starter) const = 0;
  // When a batch may start though nothing else happens (the engine's loop wakes by then).
  virtual std::optional<std::chrono::steady_clock::time_point> wake_at() const { return std::nullopt; }
  // The leader's current epoch, or the last one a follower saw.
  virtual std::uint64_t epoch() const = 0;
  // A follower refused to compute under `epoch` again (store/epoch_ledger.hpp): the leader
  // starts another if it is still in that one.
  virtual void epoch_refused(std::uint64_t epoch) { (void)epoch; }
  // A batch ended here: succeeded (its result is this server's to answer with), or failed or
  // refused, whichever way (aborted); `and_gates`: per instance, of its program (0 if unknown).
  virtual void batch_done(const wire::BatchHeader& header, bool succeeded, std::uint64_t and_gates) {
    (void)header, (void)succeeded, (void)and_gates;
  }
};

}  // namespace mpc::three_party_engine
