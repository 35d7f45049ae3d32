#include "jobs/batch_inputs.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/transpose.hpp"
#include "jobs/nonce_pool.hpp"

namespace mpc::jobs {

void unslice_output_records(std::span<const std::uint64_t> rows, std::size_t words_per_row, std::size_t bits,
                            std::size_t instances, std::span<std::uint8_t> records) {
  const std::size_t record = (bits + 7) / 8;
  const std::size_t whole = bits / 8;
  if (records.size() != record * instances)
    throw Error(Component::Server, std::to_string(records.size()) + " record bytes for " + std::to_string(instances) +
                                       " records of " + std::to_string(record));
  if (rows.size() < bits * words_per_row || words_per_row < rss3::words_for(instances))
    throw Error(Component::Server, "output rows do not cover " + std::to_string(bits) + " bits of " +
                                       std::to_string(instances) + " instances");
  if (whole == record) {
    rss3::unslice(rows, words_per_row, 0, record, instances, records);
    return;
  }
  // The whole bytes through the transpose, then the bits of the last byte one by one.
  SecretBytes head(whole * instances);
  if (whole != 0) rss3::unslice(rows, words_per_row, 0, whole, instances, head.span());
  for (std::size_t n = 0; n < instances; ++n) {
    if (whole != 0) std::memcpy(records.data() + n * record, head.data() + n * whole, whole);
    std::uint8_t last = 0;
    for (std::size_t k = 0; k < bits % 8; ++k) {
      const std::uint64_t word = rows[(whole * 8 + k) * words_per_row + n / 64];
      last = static_cast<std::uint8_t>(last | (((word >> (n % 64)) & 1) << k));
    }
    records[n * record + whole] = last;
  }
}

namespace {

std::uint64_t load_big_endian(const std::uint8_t* bytes) {
  std::uint64_t value;
  std::memcpy(&value, bytes, sizeof value);
  return std::endian::native == std::endian::little ? __builtin_bswap64(value) : value;
}

void store_big_endian(std::uint64_t value, std::uint8_t* bytes) {
  if constexpr (std::endian::native == std::endian::little) value = __builtin_bswap64(value);
  std::memcpy(bytes, &value, sizeof value);
}

}  // namespace

std::array<std::uint8_t, 16> add_to_counter(const std::array<std::uint8_t, 16>& counter, std::uint64_t offset) {
  // Two 64-bit halves, not sixteen bytes with a carry each: a keystream job computes one
  // counter per block on the shell's thread.
  const std::uint64_t low = load_big_endian(counter.data() + 8) + offset;
  const std::uint64_t high = load_big_endian(counter.data()) + (low < offset ? 1 : 0);
  std::array<std::uint8_t, 16> out;
  store_big_endian(high, out.data());
  store_big_endian(low, out.data() + 8);
  return out;
}

void broadcast_bits(std::span<std::uint64_t> component, std::size_t words_per_row, std::size_t first_row,
                    std::span<const std::uint8_t> value, std::size_t first, std::size_t count) {
  if (count == 0) return;
  const std::size_t last = first + count;  // exclusive
  const std::size_t first_word = first / 64;
  const std::size_t last_word = (last - 1) / 64;
  const std::uint64_t head_mask = ~0ull << (first % 64);
  const std::uint64_t tail_mask = (last % 64) == 0 ? ~0ull : (~0ull >> (64 - last % 64));
  for (std::size_t bit = 0; bit < value.size() * 8; ++bit) {
    // Constant time in the key bit: the fill is all ones or all zeros, no branch on it.
    const std::uint64_t fill = 0 - static_cast<std::uint64_t>((value[bit / 8] >> (bit % 8)) & 1);
    std::uint64_t* row = component.data() + (first_row + bit) * words_per_row;
    if (first_word == last_word) {
      const std::uint64_t mask = head_mask & tail_mask;
      row[first_word] = (row[first_word] & ~mask) | (fill & mask);
      continue;
    }
    row[first_word] = (row[first_word] & ~head_mask) | (fill & head_mask);
    // The words in between are the slice's alone: plain stores, which the compiler vectorises.
    std::fill(row + first_word + 1, row + last_word, fill);
    row[last_word] = (row[last_word] & ~tail_mask) | (fill & tail_mask);
  }
}

void public_blocks(const wire::ComputeRequest& request, std::uint32_t first_block, std::uint32_t count,
                   std::span<std::uint8_t> out) {
  if (request.operation == wire::Operation::CtrKeystream) {
    for (std::uint32_t i = 0; i < count; ++i) {
      const auto block = add_to_counter(request.counter, static_cast<std::uint64_t>(first_block) + i);
      std::memcpy(out.data() + static_cast<std::size_t>(i) * 16, block.data(), 16);
    }
  } else {
    std::memcpy(out.data(), request.input.data() + static_cast<std::size_t>(first_block) * 16,
                static_cast<std::size_t>(count) * 16);
  }
}

void prefetch_blocks(std::uint64_t epoch, std::uint32_t first_nonce, std::uint32_t nonces, std::uint32_t per_nonce,
                     std::span<std::uint8_t> out) {
  if (out.size() != static_cast<std::size_t>(nonces) * per_nonce * 16)
    throw Error(Component::Server, "prefetch block buffer does not match its nonces");
  std::size_t at = 0;
  for (std::uint32_t k = 0; k < nonces; ++k) {
    const auto nonce = make_gcm_nonce(epoch, first_nonce + k);
    for (std::uint32_t j = 1; j <= per_nonce; ++j, at += 16) {
      const auto block = gcm_counter_block(nonce, j);
      std::memcpy(out.data() + at, block.data(), 16);
    }
  }
}

void open_blocks(const wire::GcmNonce& nonce, std::uint32_t first_block, std::uint32_t count,
                 std::span<std::uint8_t> out) {
  if (out.size() != static_cast<std::size_t>(count) * 16)
    throw Error(Component::Server, "open block buffer does not match its instances");
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto block = gcm_counter_block(nonce, first_block + i + 1);
    std::memcpy(out.data() + static_cast<std::size_t>(i) * 16, block.data(), 16);
  }
}

}  // namespace mpc::jobs
