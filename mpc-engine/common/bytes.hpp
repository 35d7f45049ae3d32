// Bounds-checked little-endian encoding for wire formats and stored records.
// Every read checks the remaining length and throws FormatError naming the component.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace mpc {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t value) { out_.push_back(value); }
  void u16(std::uint16_t value);
  void u32(std::uint32_t value);
  void u64(std::uint64_t value);
  void bytes(std::span<const std::uint8_t> data) { out_.insert(out_.end(), data.begin(), data.end()); }
  // u16 length prefix, then the bytes.
  void short_string(std::string_view text);

 private:
  std::vector<std::uint8_t>& out_;
};

class ByteReader {
 public:
  ByteReader(std::span<const std::uint8_t> data, Component component) : data_(data), component_(component) {}
  std::uint8_t u8();
  std::uint16_t u16();
  std::uint32_t u32();
  std::uint64_t u64();
  std::span<const std::uint8_t> bytes(std::size_t count);
  template <std::size_t N>
  std::array<std::uint8_t, N> array() {
    auto view = bytes(N);
    std::array<std::uint8_t, N> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = view[i];
    return out;
  }
  std::string short_string(std::size_t max_length);
  std::size_t remaining() const noexcept { return data_.size() - offset_; }
  std::span<const std::uint8_t> rest() noexcept;
  // Throws unless every byte was consumed: trailing garbage is an error, not ignored.
  void expect_end() const;

 private:
  void need(std::size_t count) const;
  std::span<const std::uint8_t> data_;
  std::size_t offset_ = 0;
  Component component_;
};

std::string to_hex(std::span<const std::uint8_t> data);
// Accepts upper or lower case; ignores ASCII whitespace; throws FormatError on anything else.
std::vector<std::uint8_t> from_hex(std::string_view text, Component component);

}  // namespace mpc
