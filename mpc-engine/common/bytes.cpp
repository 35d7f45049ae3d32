#include "common/bytes.hpp"

namespace mpc {

void ByteWriter::u16(std::uint16_t value) {
  for (int i = 0; i < 2; ++i) out_.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}
void ByteWriter::u32(std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}
void ByteWriter::u64(std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}
void ByteWriter::short_string(std::string_view text) {
  if (text.size() > 0xffff) throw FormatError(Component::Wire, "string longer than 65535 bytes");
  u16(static_cast<std::uint16_t>(text.size()));
  out_.insert(out_.end(), text.begin(), text.end());
}

void ByteReader::need(std::size_t count) const {
  if (count > data_.size() - offset_)
    throw FormatError(component_, "truncated input: need " + std::to_string(count) + " bytes at offset " +
                                      std::to_string(offset_) + ", have " + std::to_string(data_.size() - offset_));
}
std::uint8_t ByteReader::u8() {
  need(1);
  return data_[offset_++];
}
std::uint16_t ByteReader::u16() {
  need(2);
  std::uint16_t value = static_cast<std::uint16_t>(data_[offset_] | (data_[offset_ + 1] << 8));
  offset_ += 2;
  return value;
}
std::uint32_t ByteReader::u32() {
  need(4);
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | data_[offset_ + static_cast<std::size_t>(i)];
  offset_ += 4;
  return value;
}
std::uint64_t ByteReader::u64() {
  need(8);
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | data_[offset_ + static_cast<std::size_t>(i)];
  offset_ += 8;
  return value;
}
std::span<const std::uint8_t> ByteReader::bytes(std::size_t count) {
  need(count);
  auto view = data_.subspan(offset_, count);
  offset_ += count;
  return view;
}
std::string ByteReader::short_string(std::size_t max_length) {
  const std::size_t length = u16();
  if (length > max_length)
    throw FormatError(component_, "string of " + std::to_string(length) + " bytes exceeds limit " +
                                      std::to_string(max_length));
  auto view = bytes(length);
  return std::string(view.begin(), view.end());
}
std::span<const std::uint8_t> ByteReader::rest() noexcept {
  auto view = data_.subspan(offset_);
  offset_ = data_.size();
  return view;
}
void ByteReader::expect_end() const {
  if (offset_ != data_.size())
    throw FormatError(component_, std::to_string(data_.size() - offset_) + " trailing bytes");
}

std::string to_hex(std::span<const std::uint8_t> data) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(data.size() * 2);
  for (std::uint8_t byte : data) {
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 15]);
  }
  return out;
}

std::vector<std::uint8_t> from_hex(std::string_view text, Component component) {
  std::vector<std::uint8_t> out;
  int pending = -1;
  for (char c : text) {
    int value;
    if (c >= '0' && c <= '9') value = c - '0';
    else if (c >= 'a' && c <= 'f') value = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') value = c - 'A' + 10;
    else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    else throw FormatError(component, "invalid hex character");
    if (pending < 0) {
      pending = value;
    } else {
      out.push_back(static_cast<std::uint8_t>((pending << 4) | value));
      pending = -1;
    }
  }
  if (pending >= 0) throw FormatError(component, "odd number of hex digits");
  return out;
}

}  // namespace mpc
