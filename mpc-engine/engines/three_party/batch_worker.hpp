// Evaluates batches on a thread of its own, so a server can keep more than one
// batch in flight: while one batch waits for its neighbour's layer message, the
// next one computes. That fills the gaps a strictly sequential ring leaves.
//
// The main thread owns the jobs: it hands a worker a BatchTask (copies of the key
// shares and public blocks it needs) and collects the masked output shares. The layer
// and abort messages of the worker's batch reach its inbox from whichever thread
// received them (batch_frames.hpp). A worker sends its layer messages over a lane of
// its own to the next party (data_plane.hpp); the receiver matches them to the batch by
// (epoch, sequence).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "circuits/program.hpp"
#include "common/log.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/evaluator.hpp"
#include "protocol/rss3/shares.hpp"
#include "jobs/krb_circuit_cache.hpp"
#include "node/peer_links.hpp"
#include "engines/three_party/frame_buffers.hpp"
#include "engines/three_party/prf_keys.hpp"
#include "node/wakeup.hpp"
#include "protocol/gc3/prepared_garblings.hpp"
#include "settings/server_settings.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::three_party_engine {

using gc3::PreparedGarblings;

// A batch's circuit takes, per instance, in this order: `key_rows` secret rows that are the
// same for all instances of a slice (a key share, broadcast), a public record of
// `public_bytes` bytes (the constant sharing (0, c)), and a secret record of `secret_bytes`
// bytes; it gives an output record of ceil(num_outputs / 8) bytes (byte b, bit k = output
// b * 8 + k; bits beyond num_outputs are 0). AES jobs: round keys, the 16-byte block, and
// for the GCM tag check a secret block; Kerberos jobs: see krb_jobs.hpp.
struct SliceInput {
  std::uint32_t blocks = 0;  // instances
  SecretBytes key_share;     // x || a of the key rows; empty: this slice is evaluated on zeros
  std::vector<std::uint8_t> public_records;  // blocks * public_bytes
  // x || a, blocks * secret_bytes bytes each; empty stands for shares of zero.
  SecretBytes secret_records;
  // > 0: keep the raw output share of instances 0, keep_every, 2 * keep_every, ... of the
  // slice (AES_K(N || 1) of each prefetched nonce, which is never opened).
  std::uint32_t keep_every = 0;
};

struct BatchTask {
  wire::BatchHeader header;
  // Shared: a Kerberos program may leave the circuit cache while a worker evaluates it.
  // Empty for a Kerberos batch until the worker takes it from `krb_circuits` (compiling it
  // there if needed: the main thread never waits on a compile).
  std::shared_ptr<const circuits::Program> program;
  jobs::KrbCircuitCache* krb_circuits = nullptr;
  std::size_t key_rows = 0;
  std::size_t public_bytes = 0;
  std::size_t secret_bytes = 0;
  std::size_t instances = 0;
  std::vector<SliceInput> slices;  // in header order
};

struct BatchResult {
  wire::BatchHeader header;
  bool succeeded = false;
  std::string error;              // when !succeeded
  // How the jobs are refused when !succeeded: PeerFailure, or VerificationFailed when a
  // server's messages failed a check of active security (here or at the server that aborted).
  wire::Status failure = wire::Status::PeerFailure;
  // With VerificationFailed: the check that failed and the 0-based party whose messages failed
  // it here (or that reported it), -1 when not known (common/error.hpp, VerificationError).
  std::string failed_check;
  int failed_peer = -1;
  // A failed check that shows who deviated (DeviationFound): the peers this server can show
  // deviated (bit p: party p); `check_concluded` when it ran to its end (every message
  // exchanged), so that no peer needs telling, since each drew its own conclusion.
  std::uint8_t claims = 0;
  bool check_concluded = false;
  std::size_t record_bytes = 0;   // output bytes per instance
  rss3::ByteShare masked;         // instances * record_bytes bytes per component, in slice order
  // Per slice: x || a (record_bytes each) of each kept instance (SliceInput::keep_every),
  // raw; empty for a slice evaluated on zeros.
  std::vector<SecretBytes> kept;
  // Per slice: evaluated on the job's inputs (false: on zeros, the job was absent or refused).
  std::vector<bool> slice_used;
  rss3::EvaluationStats stats;
  std::uint64_t and_gates = 0;  // of the program, per instance
  std::uint32_t and_depth = 0;  // of the program: the rounds a layered evaluation takes
  std::chrono::microseconds elapsed{0};
};

// Builds a party's inputs for `task`, evaluates it over `exchange` and returns the
// masked output shares (or the failure). `inputs` and `outputs` are scratch, wiped however the
// batch ends; `inputs` must be a matrix that only evaluate_batch writes (new, or left wiped by
// the batch before), so that its zero-fill can be skipped.
// task.program must be set. With security = "active", every AND gate of the batch is verified
// (rss3/and_check.hpp) before any output share is made: a failed check fails the batch with
// VerificationFailed and nothing it computed leaves. `evaluator` must then keep transcripts
// (the CPU evaluator).
BatchResult evaluate_batch(BatchTask& task, rss3::Evaluator& evaluator, const PartyPrfKeys& prf_keys,
                           rss3::LayerExchange& exchange, rss3::ShareMatrix& inputs, rss3::ShareMatrix& outputs,
                           int party, settings::Security security, const Logger& log);

class NextPartyLink;

// Normal: the process's CPU priority. Background: the lowest there is (nice 19, which an
// unprivileged thread may set but never undo), for work that should take only what the
// server's other threads leave: Kerberos garblings prepared ahead.
enum class WorkerPriority : std::uint8_t { Normal, Background };

class BatchWorker {
 public:
  // `finished` is notified whenever a result becomes ready; `next_party` carries this
  // worker's frames to the next party of the ring; `prepared` keeps the Kerberos garblings made
  // ahead of their batches (shared by the server's workers); `frame_buffers` takes back the
  // frames of the layer messages it has used.
  BatchWorker(const settings::ServerSettings& settings, std::unique_ptr<NextPartyLink> next_party,
              const PartyPrfKeys& prf_keys, std::unique_ptr<rss3::Evaluator> evaluator,
              std::unique_ptr<rss3::Evaluator> gpu_evaluator, node::Wakeup& finished, const Logger& log,
              PreparedGarblings& prepared, FrameBuffers& frame_buffers,
              WorkerPriority priority = WorkerPriority::Normal);
  ~BatchWorker();
  BatchWorker(const BatchWorker&) = delete;
  BatchWorker& operator=(const BatchWorker&) = delete;

  bool idle() const;
  // Starts `task` with the messages of its batch that arrived before it; the worker must
  // be idle.
  void start(BatchTask task, std::vector<node::PeerEnvelope> early);
  // A layer or abort message of the worker's batch; dropped once that batch is over.
  void deliver(node::PeerEnvelope envelope);
  // The finished batch's result, once; empty while running or idle.
  std::optional<BatchResult> take_result();

 private:
  class Exchange;
  class Stream;
  void run();

  const WorkerPriority priority_;
  const settings::ServerSettings& settings_;
  const PartyPrfKeys& prf_keys_;
  PreparedGarblings& prepared_;
  FrameBuffers& frame_buffers_;
  std::unique_ptr<rss3::Evaluator> evaluator_;      // the SIMD CPU evaluator
  // The GPU evaluator where the server has one: batches large enough that it finishes them
  // sooner (cuda::gpu_preferred) run on it, smaller ones on the CPU, so no batch waits longer
  // for the GPU than it would for the CPU. Null without a GPU.
  std::unique_ptr<rss3::Evaluator> gpu_evaluator_;
  node::Wakeup& finished_;
  const Logger& log_;
  std::unique_ptr<NextPartyLink> next_party_;
  rss3::ShareMatrix inputs_;
  rss3::ShareMatrix outputs_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<BatchTask> task_;
  bool running_ = false;
  std::deque<node::PeerEnvelope> inbox_;
  std::optional<BatchResult> result_;
  std::thread thread_;
};

}  // namespace mpc::three_party_engine
