// cuda/timeline.hpp: GPU time per kind of work in one evaluation, from timing events
// recorded around each kernel and copy (CudaOptions::profile). Off, every call is a no-op
// and no timing event is created. Internal to the library.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <memory>
#include <vector>

#include "cuda/cuda_resources.hpp"

namespace mpc::cuda::detail {

class Timeline {
 public:
  enum Kind { kPass, kAlpha, kInput, kMessageUp, kMessageDown, kSpan, kKinds };

  void reset(bool on) {
    on_ = on;
    used_ = 0;
    intervals_.clear();
  }
  bool on() const noexcept { return on_; }

  // Opens an interval of `kind` on `stream`; returns its handle (-1 when off).
  int begin(Kind kind, cudaStream_t stream) {
    if (!on_) return -1;
    Interval interval{kind, next(), nullptr};
    check(cudaEventRecord(interval.begin, stream), "timing event");
    intervals_.push_back(interval);
    return static_cast<int>(intervals_.size() - 1);
  }
  void end(int handle, cudaStream_t stream) {
    if (handle < 0) return;
    Interval& interval = intervals_[static_cast<std::size_t>(handle)];
    interval.end = next();
    check(cudaEventRecord(interval.end, stream), "timing event");
  }

  // Milliseconds per kind; waits for every event (call after the evaluation's last sync).
  std::array<double, kKinds> totals() const {
    std::array<double, kKinds> ms{};
    for (const Interval& interval : intervals_) {
      if (interval.end == nullptr) continue;
      check(cudaEventSynchronize(interval.end), "timing event");
      float elapsed = 0;
      check(cudaEventElapsedTime(&elapsed, interval.begin, interval.end), "timing event");
      ms[interval.kind] += elapsed;
    }
    return ms;
  }

 private:
  struct Interval {
    Kind kind;
    cudaEvent_t begin;
    cudaEvent_t end;
  };

  cudaEvent_t next() {
    if (used_ == events_.size()) events_.push_back(std::make_unique<Event>(true));
    return events_[used_++]->get();
  }

  bool on_ = false;
  std::size_t used_ = 0;
  std::vector<std::unique_ptr<Event>> events_;  // kept across evaluations
  std::vector<Interval> intervals_;
};

}  // namespace mpc::cuda::detail
