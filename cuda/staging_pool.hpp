// cuda/staging_pool.hpp: host threads that carry a StagingPlan (staging_plan.hpp) from
// pageable host memory into a few pinned slots, and hand each filled slot to a copy
// engine in plan order, so that the DMA of one slot overlaps the filling of the next ones.
//
// Piece i goes through slot i % slots: a worker waits until the slot's previous piece
// (i - slots) has been issued and its copy has read the slot, gathers piece i's rows into
// it, and the worker that completes the next piece in order issues it (so the engine sees
// pieces one at a time, in order, from whichever thread). Groups may be held back
// (allow()): their pieces fill but are not issued, for destinations the device is still
// reading. After the last piece, the workers wipe every slot the job used (the slots held
// secret shares or labels) once the engine has read it; finish() returns only then, and
// only then may the caller free or change the source memory.
//
// No CUDA here: the engine is an interface (cuda/device_upload.hpp is the GPU's; the CPU
// tests use a fake one whose copies complete late, to catch a slot reused too early).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda/staging_plan.hpp"

namespace mpc::cuda::detail {

// What the pool drives. issue(), open_group() and close_group() are called by one thread
// at a time, pieces in order; wait_slot() from any worker.
class StagingEngine {
 public:
  virtual ~StagingEngine() = default;
  virtual std::size_t slots() const noexcept = 0;
  virtual std::uint64_t slot_bytes() const noexcept = 0;
  virtual std::uint8_t* slot(std::size_t index) noexcept = 0;
  // On a worker thread before it touches the engine in a job (a GPU engine selects its device).
  virtual void attach_thread() {}
  // Before the first piece of `group` is issued.
  virtual void open_group(std::uint32_t group) { (void)group; }
  // Starts the copies of plan.pieces[piece] out of slot `index` (asynchronously).
  virtual void issue(const StagingPlan& plan, std::uint32_t piece, std::size_t index) = 0;
  // After the last piece of `group` was issued.
  virtual void close_group(std::uint32_t group) { (void)group; }
  // Blocks until every copy issued so far out of slot `index` has read it.
  virtual void wait_slot(std::size_t index) = 0;
};

// Row r of a source matrix starts at base + r * pitch.
struct HostRows {
  const std::uint8_t* base = nullptr;
  std::uint64_t pitch = 0;
};

class StagingPool {
 public:
  // `threads` workers (at least one). The engine must outlive the pool.
  StagingPool(StagingEngine& engine, unsigned threads);
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  // Starts moving `plan` (kept by reference: it must outlive the job) out of `sources`
  // (indexed by StagingCopy::matrix; they must stay readable until finish() or abandon()
  // returns); groups below `allowed_groups` may be issued. Throws Error(Protocol) when a
  // job is still open or the plan does not fit the engine's slots or the sources.
  void begin(const StagingPlan& plan, std::vector<HostRows> sources, std::uint32_t allowed_groups);
  // Lets pieces of groups below `groups` be issued (never lowers the bound).
  void allow(std::uint32_t groups);
  // Blocks until every piece of `group` has been issued and the group closed; at once for
  // an empty group. Throws a worker's or the engine's error, and Error(Protocol) for a
  // group not allowed.
  void wait_group(std::uint32_t group);
  // Blocks until every piece has been issued and every used slot wiped; ends the job.
  // Throws as wait_group() (the job is abandoned then).
  void finish();
  // Ends the job at once: no further piece is filled or issued; waits until no worker
  // touches the sources or the slots, then waits for the engine's copies and wipes the
  // slots. No effect without a job. Never throws.
  void abandon() noexcept;

  unsigned threads() const noexcept { return static_cast<unsigned>(workers_.size()); }

 private:
  void work();
  void fill(std::unique_lock<std::mutex>& lock);
  void wipe_slot(std::unique_lock<std::mutex>& lock);
  void issue_ready(std::unique_lock<std::mutex>& lock);
  void fail(std::unique_lock<std::mutex>& lock, std::exception_ptr error);
  bool stopped() const noexcept { return cancel_ || error_ != nullptr; }
  std::size_t last_piece_of_slot(std::size_t slot) const noexcept;

  StagingEngine& engine_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  // The job.
  bool job_ = false;
  bool cancel_ = false;
  std::exception_ptr error_;
  const StagingPlan* plan_ = nullptr;
  std::vector<HostRows> sources_;
  std::size_t slots_ = 0;
  std::uint32_t pieces_ = 0;
  std::uint32_t allowed_ = 0;       // groups that may be issued
  std::uint32_t next_fill_ = 0;     // next piece a worker takes
  std::uint32_t next_issue_ = 0;    // pieces below this have been issued
  bool issuing_ = false;            // a thread is issuing
  std::vector<char> filled_;        // per piece
  std::size_t wipe_slots_ = 0;      // slots the job used
  std::size_t next_wipe_ = 0;
  std::size_t wiped_ = 0;
  std::vector<std::uint64_t> slot_used_;  // most bytes any piece of the job put in each slot
  unsigned busy_ = 0;               // workers inside the job (reading sources or slots)
  std::vector<std::thread> workers_;
};

// Default worker count: a quarter of the host's threads, 1 to 4 (several evaluators of one
// host, e.g. three parties on one GPU, each have their own).
unsigned default_staging_threads() noexcept;

}  // namespace mpc::cuda::detail
