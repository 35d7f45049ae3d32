// Wire labels of a garbled circuit: 128-bit blocks that, with the garbler's offset delta, give
// away the wires' values, so every buffer of them wipes itself when it goes away.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/secret.hpp"
#include "protocol/two_party/block.hpp"

namespace mpc::gc2 {

using two_party::Block;

class Labels {
 public:
  Labels() = default;
  explicit Labels(std::size_t count) : blocks_(count) {}
  Labels(const Labels&) = delete;
  Labels& operator=(const Labels&) = delete;
  Labels(Labels&& other) noexcept : blocks_(std::move(other.blocks_)) {}
  Labels& operator=(Labels&& other) noexcept {
    if (this != &other) {
      clear();
      blocks_ = std::move(other.blocks_);
    }
    return *this;
  }
  ~Labels() { clear(); }

  void clear() noexcept {
    wipe(blocks_.data(), blocks_.size() * sizeof(Block));
    blocks_.clear();
  }
  // Resizing wipes what was there first (the vector may move its storage).
  void assign_zero(std::size_t count) {
    clear();
    blocks_.resize(count);
  }
  Block* data() noexcept { return blocks_.data(); }
  const Block* data() const noexcept { return blocks_.data(); }
  std::size_t size() const noexcept { return blocks_.size(); }
  Block& operator[](std::size_t i) { return blocks_[i]; }
  const Block& operator[](std::size_t i) const { return blocks_[i]; }
  std::span<Block> span() noexcept { return blocks_; }
  std::span<const Block> span() const noexcept { return blocks_; }
  operator std::span<const Block>() const noexcept { return blocks_; }

 private:
  std::vector<Block> blocks_;
};

// The bits of `bytes` one per byte, byte b bit k at b * 8 + k: the circuits' input order, as
// garbler_input_labels() and OT choices take them.
inline std::vector<std::uint8_t> bits_of(std::span<const std::uint8_t> bytes) {
  std::vector<std::uint8_t> bits(bytes.size() * 8);
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = (bytes[i / 8] >> (i % 8)) & 1;
  return bits;
}

// One instance's input labels: the `first` rows (a key's), then the `second` (public ones).
inline Labels concatenated(std::span<const Block> first, std::span<const Block> second) {
  Labels out(first.size() + second.size());
  std::copy(first.begin(), first.end(), out.data());
  std::copy(second.begin(), second.end(), out.data() + first.size());
  return out;
}

}  // namespace mpc::gc2
