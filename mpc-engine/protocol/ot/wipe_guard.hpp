// Wipes a buffer of key material when the scope ends, on every exit path (a peer's bad point
// or a timeout throws in the middle of the OT protocols).
#pragma once

#include <cstddef>

#include "common/secret.hpp"

namespace mpc::ot {

class WipeGuard {
 public:
  WipeGuard(void* data, std::size_t size) noexcept : data_(data), size_(size) {}
  template <typename Container>
  explicit WipeGuard(Container& buffer) noexcept : WipeGuard(buffer.data(), buffer.size() * sizeof(buffer[0])) {}
  ~WipeGuard() { wipe(data_, size_); }
  WipeGuard(const WipeGuard&) = delete;
  WipeGuard& operator=(const WipeGuard&) = delete;

 private:
  void* data_;
  std::size_t size_;
};

}  // namespace mpc::ot
