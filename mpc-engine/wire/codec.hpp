// Encoding helpers shared by the wire formats (internal to mpc_wire and its tests).
#pragma once

#include <cstddef>
#include <string>

#include "common/bytes.hpp"
#include "wire/key_id.hpp"

namespace mpc::wire {

// Longest error or abort detail string any message may carry.
inline constexpr std::size_t kMaxErrorBytes = 1024;
// Bytes of the smallest encoded key id (1-byte name).
inline constexpr std::size_t kMinKeyIdBytes = 2 + 1 + 4 + 1;

// short string name | u32 version | u8 algorithm. Throws FormatError(Wire) on an invalid id.
void write_key_id(ByteWriter& writer, const KeyId& key);
KeyId read_key_id(ByteReader& reader);
std::size_t encoded_key_id_bytes(const KeyId& key) noexcept;

// Throws FormatError(Wire) unless `value` is a KeyAlgorithm.
KeyAlgorithm checked_algorithm(std::uint8_t value);

}  // namespace mpc::wire
