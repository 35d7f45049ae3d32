// cuda/cuda_resources.hpp: owning handles for CUDA runtime objects (device and pinned host
// memory, streams, events) and the error check of the GPU back end. Internal to the
// library (needs the CUDA runtime headers). Destructors never throw and ignore errors (a
// failed context); pinned memory is wiped before it is freed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::cuda::detail {

[[noreturn]] inline void throw_cuda(cudaError_t status, const char* what) {
  throw Error(Component::Protocol, std::string("CUDA: ") + what + ": " + cudaGetErrorName(status) + " (" +
                                       cudaGetErrorString(status) + ")");
}

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw_cuda(status, what);
}

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(); }
  void allocate(std::size_t bytes, const char* what) {
    release();
    if (bytes == 0) return;
    check(cudaMalloc(&data_, bytes), what);
    bytes_ = bytes;
  }
  // Zeroes the contents before freeing them (device memory may go to another process).
  void release() noexcept {
    if (data_ != nullptr) {
      (void)cudaMemset(data_, 0, bytes_);
      (void)cudaFree(data_);
    }
    data_ = nullptr;
    bytes_ = 0;
  }
  template <class T>
  T* as(std::size_t offset = 0) const noexcept {
    return reinterpret_cast<T*>(static_cast<std::uint8_t*>(data_) + offset);
  }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { release(); }
  void allocate(std::size_t bytes) {
    release();
    if (bytes == 0) return;
    check(cudaHostAlloc(&data_, bytes, cudaHostAllocDefault), "pinned host allocation");
    bytes_ = bytes;
  }
  void release() noexcept {
    if (data_ != nullptr) {
      wipe(data_, bytes_);
      (void)cudaFreeHost(data_);
    }
    data_ = nullptr;
    bytes_ = 0;
  }
  std::uint8_t* data() const noexcept { return static_cast<std::uint8_t*>(data_); }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

class Stream {
 public:
  Stream() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream creation"); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { (void)cudaStreamDestroy(stream_); }
  cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  enum class Wait { Spin, Sleep };
  // Sleep: a host thread synchronising on the event yields its core rather than spinning
  // (for waits by helper threads, which must not take cores from the ones still working).
  explicit Event(bool timing = false, Wait wait = Wait::Spin) {
    const unsigned flags = (timing ? cudaEventDefault : cudaEventDisableTiming) |
                           (wait == Wait::Sleep ? cudaEventBlockingSync : 0u);
    check(cudaEventCreateWithFlags(&event_, flags), "event creation");
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { (void)cudaEventDestroy(event_); }
  cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace mpc::cuda::detail
