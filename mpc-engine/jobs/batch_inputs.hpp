// Turns the jobs of one batch into the circuit's bitsliced input shares and the
// batch's output shares back into per-job results.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/rss3/shares.hpp"
#include "wire/client_messages.hpp"

namespace mpc::jobs {

// Output rows [0, bits) of `instances` instances as records of ceil(bits / 8) bytes, back to
// back: bit k of byte b of record n is row b * 8 + k of instance n; bits beyond `bits` are 0.
void unslice_output_records(std::span<const std::uint64_t> rows, std::size_t words_per_row, std::size_t bits,
                            std::size_t instances, std::span<std::uint8_t> records);

// counter + offset as 128-bit big-endian integers, wrapping like OpenSSL's CTR mode.
std::array<std::uint8_t, 16> add_to_counter(const std::array<std::uint8_t, 16>& counter, std::uint64_t offset);

// Sets bits [first, first + count) of every row in [first_row, first_row + bits) of one
// component to the corresponding bit of `value` (bit j = bit j % 8 of byte j / 8).
void broadcast_bits(std::span<std::uint64_t> component, std::size_t words_per_row, std::size_t first_row,
                    std::span<const std::uint8_t> value, std::size_t first, std::size_t count);

// The public blocks of instances [first_block, first_block + count) of a request:
// counter blocks for CTR, the given blocks for ECB.
void public_blocks(const wire::ComputeRequest& request, std::uint32_t first_block, std::uint32_t count,
                   std::span<std::uint8_t> out);

// The public blocks of a GCM prefetch slice: `nonces` nonces epoch || first_nonce + k, each
// as N || 1 (the tag mask) then N || 2 .. N || per_nonce (its keystream).
void prefetch_blocks(std::uint64_t epoch, std::uint32_t first_nonce, std::uint32_t nonces, std::uint32_t per_nonce,
                     std::span<std::uint8_t> out);

// The public blocks of instances [first_block, first_block + count) of a GCM open of
// `nonce`: instance i is N || i + 1 (instance 0 the tag mask, the others the keystream).
void open_blocks(const wire::GcmNonce& nonce, std::uint32_t first_block, std::uint32_t count,
                 std::span<std::uint8_t> out);

}  // namespace mpc::jobs
