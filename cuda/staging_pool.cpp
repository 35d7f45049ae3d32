// cuda/staging_pool.cpp: workers of a StagingPool (see staging_pool.hpp).
//
// Every shared field is guarded by mutex_; a worker drops the lock only to gather rows
// into a slot, to wipe one, or to call the engine, and counts itself in busy_ meanwhile,
// so that abandon() can wait until nobody touches the sources or the slots.
#include "cuda/staging_pool.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::cuda::detail {

unsigned default_staging_threads() noexcept {
  return std::clamp(std::thread::hardware_concurrency() / 4, 1u, 4u);
}

StagingPool::StagingPool(StagingEngine& engine, unsigned threads) : engine_(engine) {
  const unsigned count = std::max(1u, threads);
  workers_.reserve(count);
  try {
    for (unsigned t = 0; t < count; ++t) workers_.emplace_back([this] { work(); });
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (auto& w : workers_) w.join();
    throw;
  }
}

StagingPool::~StagingPool() {
  abandon();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  for (auto& w : workers_) w.join();
}

void StagingPool::begin(const StagingPlan& plan, std::vector<HostRows> sources, std::uint32_t allowed_groups) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (job_) throw Error(Component::Protocol, "staging: a job is still open");
  const std::size_t slots = engine_.slots();
  if (slots == 0 || plan.slot_bytes > engine_.slot_bytes())
    throw Error(Component::Protocol, "staging: the plan's pieces (" + std::to_string(plan.slot_bytes) +
                                         " bytes) do not fit the slots (" + std::to_string(engine_.slot_bytes()) + ")");
  if (plan.group_pieces.empty() || plan.group_pieces.back() != plan.pieces.size())
    throw Error(Component::Protocol, "staging: malformed plan");
  for (const StagingPiece& piece : plan.pieces) {
    if (piece.bytes > plan.slot_bytes || piece.first_copy > plan.copies.size() ||
        piece.copies > plan.copies.size() - piece.first_copy)
      throw Error(Component::Protocol, "staging: malformed plan");
    for (std::uint32_t c = piece.first_copy; c < piece.first_copy + piece.copies; ++c) {
      const StagingCopy& copy = plan.copies[c];
      if (copy.matrix >= sources.size() || sources[copy.matrix].base == nullptr || copy.width == 0 ||
          copy.offset > piece.bytes || copy.rows > (piece.bytes - copy.offset) / copy.width)
        throw Error(Component::Protocol, "staging: a copy outside its piece or without a source");
    }
  }
  plan_ = &plan;
  sources_ = std::move(sources);
  slots_ = slots;
  pieces_ = static_cast<std::uint32_t>(plan.pieces.size());
  allowed_ = allowed_groups;
  next_fill_ = next_issue_ = 0;
  issuing_ = false;
  filled_.assign(pieces_, 0);
  wipe_slots_ = std::min<std::size_t>(slots_, pieces_);
  next_wipe_ = wiped_ = 0;
  slot_used_.assign(slots_, 0);
  for (std::uint32_t i = 0; i < pieces_; ++i)
    slot_used_[i % slots_] = std::max(slot_used_[i % slots_], plan.pieces[i].bytes);
  busy_ = 0;
  cancel_ = false;
  error_ = nullptr;
  job_ = true;
  lock.unlock();
  changed_.notify_all();
}

void StagingPool::allow(std::uint32_t groups) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!job_ || groups <= allowed_) return;
  allowed_ = groups;
  issue_ready(lock);
}

void StagingPool::wait_group(std::uint32_t group) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!job_ || group >= plan_->groups()) throw Error(Component::Protocol, "staging: no such group");
  const std::uint32_t end = plan_->group_pieces[group + 1];
  if (plan_->group_pieces[group] == end) return;
  if (group >= allowed_) throw Error(Component::Protocol, "staging: waiting for a group that may not go up");
  changed_.wait(lock, [&] { return stopped() || next_issue_ >= end; });
  if (error_) std::rethrow_exception(error_);
  if (next_issue_ < end) throw Error(Component::Protocol, "staging: abandoned");
}

void StagingPool::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!job_) return;
  changed_.wait(lock, [&] { return stopped() || (next_issue_ == pieces_ && wiped_ == wipe_slots_ && busy_ == 0); });
  if (stopped()) {
    const std::exception_ptr error = error_;
    lock.unlock();
    abandon();
    if (error) std::rethrow_exception(error);
    throw Error(Component::Protocol, "staging: abandoned");
  }
  job_ = false;
  plan_ = nullptr;
  sources_.clear();
}

void StagingPool::abandon() noexcept {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!job_) return;
  cancel_ = true;
  changed_.notify_all();
  changed_.wait(lock, [&] { return busy_ == 0; });
  const std::vector<std::uint64_t> used = slot_used_;
  job_ = false;
  plan_ = nullptr;
  sources_.clear();
  lock.unlock();
  for (std::size_t s = 0; s < used.size(); ++s) {
    if (used[s] == 0) continue;
    try {
      engine_.attach_thread();
      engine_.wait_slot(s);
    } catch (...) {
      // A failed device reads nothing any more: wipe regardless.
    }
    wipe(engine_.slot(s), static_cast<std::size_t>(used[s]));
  }
}

void StagingPool::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] {
      return stop_ || (job_ && !stopped() && (next_fill_ < pieces_ || next_wipe_ < wipe_slots_));
    });
    if (stop_) return;
    if (next_fill_ < pieces_)
      fill(lock);
    else
      wipe_slot(lock);
  }
}

std::size_t StagingPool::last_piece_of_slot(std::size_t slot) const noexcept {
  return pieces_ - 1 - (pieces_ - 1 - slot) % slots_;
}

void StagingPool::fill(std::unique_lock<std::mutex>& lock) {
  const std::uint32_t i = next_fill_++;
  const std::size_t slot = i % slots_;
  ++busy_;
  // The slot's previous piece must have gone to the engine (and, below, been read by it).
  changed_.wait(lock, [&] { return stopped() || i < slots_ || next_issue_ > i - slots_; });
  if (stopped()) {
    --busy_;
    changed_.notify_all();
    return;
  }
  const StagingPlan& plan = *plan_;
  lock.unlock();
  std::exception_ptr error;
  try {
    engine_.attach_thread();
    if (i >= slots_) engine_.wait_slot(slot);
    std::uint8_t* out = engine_.slot(slot);
    const StagingPiece& piece = plan.pieces[i];
    for (std::uint32_t c = piece.first_copy; c < piece.first_copy + piece.copies; ++c) {
      const StagingCopy& copy = plan.copies[c];
      const HostRows& source = sources_[copy.matrix];
      const std::uint8_t* from = source.base + copy.row * source.pitch + copy.column;
      if (copy.column == 0 && copy.width == source.pitch) {
        std::memcpy(out + copy.offset, from, copy.rows * copy.width);
      } else {
        for (std::uint64_t r = 0; r < copy.rows; ++r)
          std::memcpy(out + copy.offset + r * copy.width, from + r * source.pitch, copy.width);
      }
    }
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  if (error) {
    fail(lock, error);
  } else {
    filled_[i] = 1;
    issue_ready(lock);
  }
  --busy_;
  changed_.notify_all();
}

void StagingPool::issue_ready(std::unique_lock<std::mutex>& lock) {
  if (issuing_) return;  // the thread issuing now will see this piece
  issuing_ = true;
  while (!stopped() && next_issue_ < pieces_ && filled_[next_issue_] != 0 &&
         plan_->pieces[next_issue_].group < allowed_) {
    const std::uint32_t k = next_issue_;
    const StagingPlan& plan = *plan_;
    const std::uint32_t group = plan.pieces[k].group;
    lock.unlock();
    std::exception_ptr error;
    try {
      engine_.attach_thread();
      if (plan.group_pieces[group] == k) engine_.open_group(group);
      engine_.issue(plan, k, k % slots_);
      if (plan.group_pieces[group + 1] == k + 1) engine_.close_group(group);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error) {
      fail(lock, error);
      break;
    }
    next_issue_ = k + 1;
    changed_.notify_all();
  }
  issuing_ = false;
}

void StagingPool::wipe_slot(std::unique_lock<std::mutex>& lock) {
  const std::size_t slot = next_wipe_++;
  ++busy_;
  const std::size_t last = last_piece_of_slot(slot);
  changed_.wait(lock, [&] { return stopped() || next_issue_ > last; });
  if (stopped()) {
    --busy_;
    changed_.notify_all();
    return;
  }
  const std::uint64_t bytes = slot_used_[slot];
  lock.unlock();
  std::exception_ptr error;
  try {
    engine_.attach_thread();
    engine_.wait_slot(slot);
    wipe(engine_.slot(slot), static_cast<std::size_t>(bytes));
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  if (error)
    fail(lock, error);
  else
    ++wiped_;
  --busy_;
  changed_.notify_all();
}

void StagingPool::fail(std::unique_lock<std::mutex>& lock, std::exception_ptr error) {
  (void)lock;
  if (!error_) error_ = std::move(error);
  changed_.notify_all();
}

}  // namespace mpc::cuda::detail
