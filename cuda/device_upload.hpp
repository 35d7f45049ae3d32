// cuda/device_upload.hpp: the GPU's StagingEngine (staging_pool.hpp): pinned slots, each
// piece's rows copied up by 2D copies on one stream, an event per slot (when the DMA has
// read it) and hooks per group (the owner records the event its kernels wait on, or makes
// the stream wait until the device has finished with a destination). Internal to the
// library (needs the CUDA runtime headers).
//
// Slots hold secret shares or labels while a job runs; StagingPool wipes them at the end of
// each job, PinnedBuffer again when they are freed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cuda/cuda_resources.hpp"
#include "cuda/staging_pool.hpp"
#include "cuda/timeline.hpp"

namespace mpc::cuda::detail {

class DeviceUpload final : public StagingEngine {
 public:
  // Matrix m of a plan lands at base + row * pitch + (column - column_origin).
  struct Destination {
    std::uint8_t* base = nullptr;
    std::uint64_t pitch = 0;
    std::uint64_t column_origin = 0;
  };
  using GroupHook = std::function<void(std::uint32_t group)>;

  // Allocates `slots` pinned slots of `slot_bytes` on `device` (the current device).
  DeviceUpload(int device, std::size_t slots, std::uint64_t slot_bytes);

  // Where the next job's matrices go and on which stream; hooks may be empty. Call only
  // while no job runs.
  void configure(cudaStream_t stream, std::vector<Destination> destinations, GroupHook open = {},
                 GroupHook close = {});
  // GPU time of the copies (Timeline::kInput), when switched on by timeline().reset(true).
  Timeline& timeline() noexcept { return timeline_; }

  std::size_t slots() const noexcept override { return slots_.size(); }
  std::uint64_t slot_bytes() const noexcept override { return slot_bytes_; }
  std::uint8_t* slot(std::size_t index) noexcept override { return slots_[index].data(); }
  void attach_thread() override;
  void open_group(std::uint32_t group) override;
  void issue(const StagingPlan& plan, std::uint32_t piece, std::size_t index) override;
  void close_group(std::uint32_t group) override;
  void wait_slot(std::size_t index) override;

 private:
  int device_;
  std::uint64_t slot_bytes_;
  std::vector<PinnedBuffer> slots_;
  std::vector<std::unique_ptr<Event>> read_;  // per slot: its last copy has read it
  cudaStream_t stream_ = nullptr;
  std::vector<Destination> destinations_;
  GroupHook open_, close_;
  Timeline timeline_;
};

// Slot count for `threads` workers: one being filled by each, one in the DMA queue per
// worker, and two more so that a worker never waits for the copy of the piece before.
inline std::size_t staging_slots_for(unsigned threads) { return 2 * static_cast<std::size_t>(threads) + 2; }
// Default bytes per slot: a 4 MiB copy runs at the full PCIe rate.
inline constexpr std::uint64_t kDefaultStagingSlotBytes = std::uint64_t{4} << 20;

}  // namespace mpc::cuda::detail
