// What the garbled Kerberos batches (garbled_krb_batch.hpp, garbled_krb_dual.hpp) take from a
// batch: its key rows' share components and its public records as one bit per byte, streams
// and MACs keyed by the garbling keys one pair of servers shares, and byte views of labels.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "common/secret.hpp"
#include "engines/three_party/batch_worker.hpp"
#include "protocol/gc2/labels.hpp"
#include "protocol/rss3/correlated_randomness.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::three_party_engine::garbled {

// Which part of this party's key share (x_i, a_i) to take. With a_i = x_{i-1} ^ v and
// x_0 ^ x_1 ^ x_2 = 0, the a_j are an XOR sharing of v and party i knows a_i and
// a_{i-1} = x_i ^ a_i.
enum class KeyPart { X, A, XorA };

// One bit per byte, row-major over instances (row r of instance n at r * instances + n). A slice
// without a share (the job absent here) is all zeros at every party.
std::vector<std::uint8_t> key_row_bits(const BatchTask& task, KeyPart part);

// The public records' bits, laid out like key_row_bits.
std::vector<std::uint8_t> public_row_bits(const BatchTask& task);

// The batch's id as the streams, MACs and digests hash it: epoch (8 bytes) || sequence (4 bytes),
// little-endian.
std::array<std::uint8_t, 12> batch_id(const wire::BatchHeader& header);

// `bytes` bytes of a ChaCha20 stream seeded with BLAKE2b, keyed with a key both ends of an edge
// hold, of the purpose and the batch's id (never repeated under one key).
SecretBytes batch_stream(const rss3::PrfKey& key, std::string_view purpose, const wire::BatchHeader& header,
                         std::size_t bytes);

// A 32-byte BLAKE2b MAC under such a key, of the purpose, the batch's id and `parts` in order.
std::array<std::uint8_t, 32> batch_mac(const rss3::PrfKey& key, std::string_view purpose,
                                       const wire::BatchHeader& header,
                                       std::initializer_list<std::span<const std::uint8_t>> parts);

inline std::span<const std::uint8_t> bytes_of(const gc2::Labels& labels) {
  return {reinterpret_cast<const std::uint8_t*>(labels.data()), labels.size() * sizeof(gc2::Block)};
}
inline std::span<std::uint8_t> bytes_of(gc2::Labels& labels) {
  return {reinterpret_cast<std::uint8_t*>(labels.data()), labels.size() * sizeof(gc2::Block)};
}

}  // namespace mpc::three_party_engine::garbled
