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

// Words holding secrets in bulk (an AND transcript's planes, a check's streams): 64-byte
// aligned and not zeroed when made, since every user writes what it reads and a batch's planes
// run to megabytes; wiped when shrunk to nothing, reassigned or destroyed.
class SecretWords {
 public:
  SecretWords() = default;
  explicit SecretWords(std::size_t count) { resize(count); }
  SecretWords(const SecretWords&) = delete;
  SecretWords& operator=(const SecretWords&) = delete;
  SecretWords(SecretWords&& other) noexcept;
  SecretWords& operator=(SecretWords&& other) noexcept;
  ~SecretWords() { release(); }

  // `count` words; their contents are unspecified. Keeps the memory when it shrinks.
  void resize(std::size_t count);
  // Wipes the words in use and makes the size zero, keeping the memory.
  void clear() noexcept;
  // Wipes everything and returns the memory.
  void release() noexcept;
  std::uint64_t* data() noexcept { return data_; }
  const std::uint64_t* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::span<std::uint64_t> span() noexcept { return {data_, size_}; }
  std::span<const std::uint64_t> span() const noexcept { return {data_, size_}; }
  std::uint64_t& operator[](std::size_t i) noexcept { return data_[i]; }
  const std::uint64_t& operator[](std::size_t i) const noexcept { return data_[i]; }

 private:
  std::uint64_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace mpc
