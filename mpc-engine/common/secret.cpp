#include "common/secret.hpp"

#include <sodium.h>

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

}  // namespace mpc
