// Buffers holding secrets: wiped on every exit path, compared in constant time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mpc {

// Overwrites memory in a way the compiler cannot elide (sodium_memzero).
void wipe(void* data, std::size_t size) noexcept;

// Constant-time equality of two equal-length spans; false if lengths differ.
[[nodiscard]] bool equal_constant_time(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) noexcept;

// A byte vector that wipes itself when destroyed or reassigned.
class SecretBytes {
 public:
  SecretBytes() = default;
  explicit SecretBytes(std::size_t size) : bytes_(size) {}
  explicit SecretBytes(std::span<const std::uint8_t> data) : bytes_(data.begin(), data.end()) {}
  SecretBytes(const SecretBytes& other) = default;
  SecretBytes(SecretBytes&& other) noexcept : bytes_(std::move(other.bytes_)) {}
  SecretBytes& operator=(const SecretBytes& other);
  SecretBytes& operator=(SecretBytes&& other) noexcept;
  ~SecretBytes() { clear(); }

  void clear() noexcept;
  void resize(std::size_t size);
  std::uint8_t* data() noexcept { return bytes_.data(); }
  const std::uint8_t* data() const noexcept { return bytes_.data(); }
  std::size_t size() const noexcept { return bytes_.size(); }
  bool empty() const noexcept { return bytes_.empty(); }
  std::span<std::uint8_t> span() noexcept { return bytes_; }
  std::span<const std::uint8_t> span() const noexcept { return bytes_; }
  std::uint8_t& operator[](std::size_t i) { return bytes_[i]; }
  const std::uint8_t& operator[](std::size_t i) const { return bytes_[i]; }

 private:
  std::vector<std::uint8_t> bytes_;
};

}  // namespace mpc
