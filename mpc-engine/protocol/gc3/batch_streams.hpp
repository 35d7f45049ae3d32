// What the garbling protocols draw per batch from a key one pair of servers shares: streams under
// the batch's id, and byte views of labels.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/secret.hpp"
#include "protocol/gc2/labels.hpp"
#include "protocol/gc3/batch.hpp"
#include "protocol/rss3/correlated_randomness.hpp"

namespace mpc::gc3 {

// The batch's id as the streams, digests and signed messages hash it: epoch (8 bytes) || sequence (4 bytes),
// little-endian.
std::array<std::uint8_t, 12> batch_id_bytes(const BatchId& id);

// `bytes` bytes of a ChaCha20 stream seeded with BLAKE2b, keyed with a key both ends of an edge
// hold, of the purpose and the batch's id (never repeated under one key).
SecretBytes batch_stream(const rss3::PrfKey& key, std::string_view purpose, const BatchId& id, std::size_t bytes);

inline std::span<const std::uint8_t> bytes_of(const gc2::Labels& labels) {
  return {reinterpret_cast<const std::uint8_t*>(labels.data()), labels.size() * sizeof(gc2::Block)};
}
inline std::span<std::uint8_t> bytes_of(gc2::Labels& labels) {
  return {reinterpret_cast<std::uint8_t*>(labels.data()), labels.size() * sizeof(gc2::Block)};
}

}  // namespace mpc::gc3
