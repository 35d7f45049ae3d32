#include "common/secret.hpp"

#include <sodium.h>

#include <cstdlib>
#include <new>

namespace mpc {

void wipe(void* data, std::size_t size) noexcept {
  if (data != nullptr && size != 0) sodium_memzero(data, size);
}

bool equal_constant_time(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) noexcept {
  if (a.size() != b.size()) return false;
  std::uint8_t difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) difference |= static_cast<std::uint8_t>(a[i] ^ b[i]);
  return difference == 0;
}

SecretBytes& SecretBytes::operator=(const SecretBytes& other) {
  if (this != &other) {
    clear();
    bytes_ = other.bytes_;
  }
  return *this;
}

SecretBytes& SecretBytes::operator=(SecretBytes&& other) noexcept {
  if (this != &other) {
    clear();
    bytes_ = std::move(other.bytes_);
  }
  return *this;
}

void SecretBytes::clear() noexcept {
  wipe(bytes_.data(), bytes_.size());
  bytes_.clear();
}

void SecretBytes::resize(std::size_t size) {
  // Grow through a fresh buffer so no unwiped copy is left behind by reallocation.
  std::vector<std::uint8_t> next(size);
  const std::size_t kept = size < bytes_.size() ? size : bytes_.size();
  for (std::size_t i = 0; i < kept; ++i) next[i] = bytes_[i];
  clear();
  bytes_ = std::move(next);
}

SecretWords::SecretWords(SecretWords&& other) noexcept
    : data_(other.data_), size_(other.size_), capacity_(other.capacity_) {
  other.data_ = nullptr;
  other.size_ = other.capacity_ = 0;
}

SecretWords& SecretWords::operator=(SecretWords&& other) noexcept {
  if (this != &other) {
    release();
    data_ = other.data_;
    size_ = other.size_;
    capacity_ = other.capacity_;
    other.data_ = nullptr;
    other.size_ = other.capacity_ = 0;
  }
  return *this;
}

void SecretWords::resize(std::size_t count) {
  if (count > capacity_) {
    release();
    if (count > (SIZE_MAX - 63) / sizeof(std::uint64_t)) throw std::bad_alloc();
    const std::size_t bytes = (count * sizeof(std::uint64_t) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) throw std::bad_alloc();
    data_ = static_cast<std::uint64_t*>(p);
    capacity_ = bytes / sizeof(std::uint64_t);
  } else if (count < size_) {
    wipe(data_ + count, (size_ - count) * sizeof(std::uint64_t));
  }
  size_ = count;
}

void SecretWords::clear() noexcept {
  wipe(data_, size_ * sizeof(std::uint64_t));
  size_ = 0;
}

void SecretWords::release() noexcept {
  if (data_ != nullptr) {
    wipe(data_, size_ * sizeof(std::uint64_t));  // words past size_ were wiped when they left it
    std::free(data_);
  }
  data_ = nullptr;
  size_ = capacity_ = 0;
}

}  // namespace mpc
