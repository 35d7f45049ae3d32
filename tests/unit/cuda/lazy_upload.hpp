// tests/unit/cuda/lazy_upload.hpp: a StagingEngine (cuda/staging_pool.hpp) for CPU tests,
// built like cuda/device_upload.hpp but with a copy queue that runs as late as a DMA engine
// is allowed to: the copies of issued pieces wait in order, and run only when something
// waits for them (wait_slot() for a slot, complete_group() where the emulated device waits
// for a group's event). So a slot refilled or wiped before its copy ran, or rows read before
// their group was waited for, show up as wrong bytes.
//
// It also checks the engine's contract: issue() never runs on two threads at once, pieces
// come in order, each group opens before its first piece and closes after its last.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/staging_pool.hpp"

namespace mpc::cuda::test {

class LazyUpload final : public detail::StagingEngine {
 public:
  struct Destination {
    std::uint8_t* base = nullptr;
    std::uint64_t pitch = 0;
    std::uint64_t column_origin = 0;
  };
  using GroupHook = std::function<void(std::uint32_t group)>;

  LazyUpload(std::size_t slots, std::uint64_t slot_bytes)
      : slot_bytes_(slot_bytes), slots_(slots, std::vector<std::uint8_t>(slot_bytes, 0)) {}

  void configure(std::vector<Destination> destinations, GroupHook open = {}, GroupHook close = {}) {
    std::lock_guard<std::mutex> lock(mutex_);
    destinations_ = std::move(destinations);
    open_ = std::move(open);
    close_ = std::move(close);
    queue_.clear();
    next_piece_ = 0;
    open_group_ = -1;
    closed_.clear();
  }

  std::size_t slots() const noexcept override { return slots_.size(); }
  std::uint64_t slot_bytes() const noexcept override { return slot_bytes_; }
  std::uint8_t* slot(std::size_t index) noexcept override { return slots_[index].data(); }

  void open_group(std::uint32_t group) override {
    enter();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (open_group_ != -1) violation("group " + std::to_string(group) + " opened inside another");
      open_group_ = group;
    }
    if (open_) open_(group);
    leave();
  }

  void issue(const detail::StagingPlan& plan, std::uint32_t piece, std::size_t index) override {
    enter();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (piece != next_piece_) violation("piece " + std::to_string(piece) + " issued out of order");
      if (open_group_ != static_cast<std::int64_t>(plan.pieces[piece].group))
        violation("piece " + std::to_string(piece) + " issued outside its group");
      ++next_piece_;
      queue_.push_back(Entry{&plan, piece, index, -1});
      ++issues_;
    }
    leave();
  }

  void close_group(std::uint32_t group) override {
    enter();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (open_group_ != static_cast<std::int64_t>(group)) violation("group closed without being open");
      open_group_ = -1;
      queue_.push_back(Entry{nullptr, 0, 0, group});
    }
    if (close_) close_(group);
    leave();
  }

  void wait_slot(std::size_t index) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t last = queue_.size();
    for (std::size_t i = 0; i < queue_.size(); ++i)
      if (queue_[i].plan != nullptr && queue_[i].slot == index) last = i;
    if (last != queue_.size()) run_through(last);
  }

  // The emulated device waits for group `group`: every copy up to its close has run. False
  // when the group was never closed (a wait on an event nobody recorded).
  bool complete_group(std::uint32_t group) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < queue_.size(); ++i)
      if (queue_[i].plan == nullptr && queue_[i].group == static_cast<std::int64_t>(group)) {
        run_through(i);
        return true;
      }
    return closed_.size() > group && closed_[group];
  }

  std::string violations() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return violations_;
  }
  std::uint64_t issues() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return issues_;
  }

 private:
  struct Entry {
    const detail::StagingPlan* plan;  // null: a group's close
    std::uint32_t piece;
    std::size_t slot;
    std::int64_t group;
  };

  void enter() {
    if (inside_.fetch_add(1) != 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      violation("two threads inside the engine at once");
    }
  }
  void leave() { inside_.fetch_sub(1); }
  void violation(const std::string& what) { violations_ += what + "\n"; }

  // Runs queue entries 0..i (the copies a DMA engine would have made by then).
  void run_through(std::size_t i) {
    for (std::size_t k = 0; k <= i; ++k) {
      const Entry& e = queue_.front();
      if (e.plan == nullptr) {
        if (closed_.size() <= static_cast<std::size_t>(e.group)) closed_.resize(static_cast<std::size_t>(e.group) + 1);
        closed_[static_cast<std::size_t>(e.group)] = true;
      } else {
        const detail::StagingPiece& piece = e.plan->pieces[e.piece];
        for (std::uint32_t c = piece.first_copy; c < piece.first_copy + piece.copies; ++c) {
          const detail::StagingCopy& copy = e.plan->copies[c];
          const Destination& to = destinations_.at(copy.matrix);
          for (std::uint64_t r = 0; r < copy.rows; ++r)
            std::memcpy(to.base + (copy.row + r) * to.pitch + (copy.column - to.column_origin),
                        slots_[e.slot].data() + copy.offset + r * copy.width, copy.width);
        }
      }
      queue_.pop_front();
    }
  }

  std::uint64_t slot_bytes_;
  std::vector<std::vector<std::uint8_t>> slots_;
  mutable std::mutex mutex_;
  std::atomic<int> inside_{0};
  std::vector<Destination> destinations_;
  GroupHook open_, close_;
  std::deque<Entry> queue_;
  std::uint32_t next_piece_ = 0;
  std::int64_t open_group_ = -1;
  std::vector<bool> closed_;
  std::uint64_t issues_ = 0;
  std::string violations_;
};

}  // namespace mpc::cuda::test
