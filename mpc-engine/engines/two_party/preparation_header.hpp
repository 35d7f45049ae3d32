// The first message of a preparation stream (prepared_circuits.hpp), server 1 -> server 2:
//
//   u32 magic "GCP1" | u64 garbler instance | u64 garbling id | u64 stream bytes | shape |
//   u16 count | count shapes (what server 1 dropped since its last preparation)
//   shape: short string key name | u32 kvno | u8 algorithm | u64 label set | u8 circuit id |
//          u32 data bytes | u32 combine | u32 secret offset | u32 secret bytes | u32 public bytes
//
// little-endian, sent as a u32 length and then the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engines/two_party/prepared_shape.hpp"

namespace mpc::two_party_engine {

inline constexpr std::uint32_t kPreparationMagic = 0x31504347;  // "GCP1"
inline constexpr std::size_t kMaxDroppedPerHeader = 64;
inline constexpr std::size_t kMaxPreparationHeaderBytes = 64 * 1024;

struct PreparationHeader {
  std::uint64_t garbler = 0;  // server 1's instance: random per start, never 0
  std::uint64_t id = 0;       // the garbling's number
  std::uint64_t stream_bytes = 0;
  PreparedShape shape;
  std::vector<PreparedShape> dropped;  // at most kMaxDroppedPerHeader
};

std::vector<std::uint8_t> encode_preparation_header(const PreparationHeader& header);
// Throws FormatError(Server) for anything malformed: a wrong magic, a key name, algorithm or
// circuit id out of range, too many dropped shapes, trailing bytes.
PreparationHeader decode_preparation_header(std::span<const std::uint8_t> bytes);

}  // namespace mpc::two_party_engine
