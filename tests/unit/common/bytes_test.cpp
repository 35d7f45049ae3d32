#include "common/bytes.hpp"

#include <gtest/gtest.h>

namespace mpc {
namespace {

TEST(ByteWriterReader, RoundTripsEveryWidthLittleEndian) {
  std::vector<std::uint8_t> buffer;
  ByteWriter writer(buffer);
  writer.u8(0xab);
  writer.u16(0x1234);
  writer.u32(0xdeadbeef);
  writer.u64(0x0102030405060708ull);
  writer.short_string("krbtgt/EXAMPLE.COM");
  EXPECT_EQ(buffer[1], 0x34);  // little-endian on the wire
  EXPECT_EQ(buffer[2], 0x12);
  ByteReader reader(buffer, Component::Wire);
  EXPECT_EQ(reader.u8(), 0xab);
  EXPECT_EQ(reader.u16(), 0x1234);
  EXPECT_EQ(reader.u32(), 0xdeadbeefu);
  EXPECT_EQ(reader.u64(), 0x0102030405060708ull);
  EXPECT_EQ(reader.short_string(64), "krbtgt/EXAMPLE.COM");
  EXPECT_NO_THROW(reader.expect_end());
}

TEST(ByteReader, RejectsEveryTruncation) {
  std::vector<std::uint8_t> buffer;
  ByteWriter writer(buffer);
  writer.u32(7);
  writer.short_string("abc");
  for (std::size_t length = 0; length < buffer.size(); ++length) {
    ByteReader reader{std::span<const std::uint8_t>(buffer).first(length), Component::Wire};
    EXPECT_THROW(
        {
          reader.u32();
          reader.short_string(64);
        },
        FormatError)
        << "prefix of " << length << " bytes";
  }
}

TEST(ByteReader, RejectsTrailingBytesAndOverlongStrings) {
  std::vector<std::uint8_t> buffer{3, 0, 'a', 'b', 'c', 9};
  ByteReader reader(buffer, Component::Wire);
  EXPECT_THROW(reader.short_string(2), FormatError);
  ByteReader again(buffer, Component::Wire);
  EXPECT_EQ(again.short_string(3), "abc");
  EXPECT_THROW(again.expect_end(), FormatError);
}

TEST(Hex, RoundTripsAndRejectsGarbage) {
  const std::vector<std::uint8_t> bytes{0x00, 0x7f, 0x80, 0xff};
  EXPECT_EQ(to_hex(bytes), "007f80ff");
  EXPECT_EQ(from_hex("00 7F\n80ff", Component::Tool), bytes);
  EXPECT_THROW(from_hex("0g", Component::Tool), FormatError);
  EXPECT_THROW(from_hex("abc", Component::Tool), FormatError);
}

}  // namespace
}  // namespace mpc
