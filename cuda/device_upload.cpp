// cuda/device_upload.cpp: pinned slots and their copies to the device (see device_upload.hpp).
#include "cuda/device_upload.hpp"

#include <string>
#include <utility>

#include "common/error.hpp"

namespace mpc::cuda::detail {

DeviceUpload::DeviceUpload(int device, std::size_t slots, std::uint64_t slot_bytes)
    : device_(device), slot_bytes_(slot_bytes), slots_(slots) {
  if (slots == 0 || slot_bytes == 0) throw Error(Component::Protocol, "staging: no slots");
  for (PinnedBuffer& slot : slots_) slot.allocate(static_cast<std::size_t>(slot_bytes));
  // The staging threads wait on these while others still fill slots: they sleep.
  for (std::size_t s = 0; s < slots; ++s) read_.push_back(std::make_unique<Event>(false, Event::Wait::Sleep));
}

void DeviceUpload::configure(cudaStream_t stream, std::vector<Destination> destinations, GroupHook open,
                             GroupHook close) {
  stream_ = stream;
  destinations_ = std::move(destinations);
  open_ = std::move(open);
  close_ = std::move(close);
}

void DeviceUpload::attach_thread() { check(cudaSetDevice(device_), "cudaSetDevice"); }

void DeviceUpload::open_group(std::uint32_t group) {
  if (open_) open_(group);
}

void DeviceUpload::close_group(std::uint32_t group) {
  if (close_) close_(group);
}

void DeviceUpload::issue(const StagingPlan& plan, std::uint32_t piece, std::size_t index) {
  const StagingPiece& p = plan.pieces[piece];
  const std::uint8_t* slot = slots_[index].data();
  const int interval = timeline_.begin(Timeline::kInput, stream_);
  for (std::uint32_t c = p.first_copy; c < p.first_copy + p.copies; ++c) {
    const StagingCopy& copy = plan.copies[c];
    if (copy.matrix >= destinations_.size() || copy.column < destinations_[copy.matrix].column_origin)
      throw Error(Component::Protocol, "staging: a copy without a destination");
    const Destination& to = destinations_[copy.matrix];
    check(cudaMemcpy2DAsync(to.base + copy.row * to.pitch + (copy.column - to.column_origin), to.pitch,
                            slot + copy.offset, copy.width, copy.width, copy.rows, cudaMemcpyHostToDevice, stream_),
          "staged upload");
  }
  timeline_.end(interval, stream_);
  check(cudaEventRecord(read_[index]->get(), stream_), "event");
}

void DeviceUpload::wait_slot(std::size_t index) {
  check(cudaEventSynchronize(read_[index]->get()), "staged upload");
}

}  // namespace mpc::cuda::detail
