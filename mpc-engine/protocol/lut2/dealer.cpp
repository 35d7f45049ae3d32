#include "protocol/lut2/dealer.hpp"

#include <sodium.h>

#include <string>

#include "common/error.hpp"

namespace mpc::lut2 {

DealtBatch::~DealtBatch() {
  wipe(first_seed.data(), first_seed.size());
  wipe_entries(second);
}

void wipe_entries(std::vector<Entry>& entries) { wipe(entries.data(), entries.size() * sizeof(Entry)); }

std::vector<Entry> expand_seed(const Seed& seed, std::size_t count) { return expand_seed(seed, 0, count); }

std::vector<Entry> expand_seed(const Seed& seed, std::uint64_t first, std::size_t count) {
  constexpr std::uint64_t kEntryBytes = 33;
  constexpr std::uint64_t kChachaBlock = 64;
  constexpr std::uint64_t kStreamBytes = kChachaBlock << 32;  // 32-bit block counter
  if (first > kStreamBytes / kEntryBytes || count > kStreamBytes / kEntryBytes - first)
    throw Error(Component::Protocol, "dealer seed: entries " + std::to_string(first) + " + " + std::to_string(count) +
                                         " are past the end of the seed's stream");
  const std::uint64_t offset = first * kEntryBytes;
  const std::size_t skip = static_cast<std::size_t>(offset % kChachaBlock);
  std::vector<std::uint8_t> stream(skip + count * kEntryBytes, 0);
  const std::uint8_t nonce[crypto_stream_chacha20_ietf_NONCEBYTES] = {};
  crypto_stream_chacha20_ietf_xor_ic(stream.data(), stream.data(), stream.size(), nonce,
                                     static_cast<std::uint32_t>(offset / kChachaBlock), seed.data());
  std::vector<Entry> out(count);
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint8_t* bytes = stream.data() + skip + k * kEntryBytes;
    for (int w = 0; w < 4; ++w) {
      std::uint64_t word = 0;
      for (int b = 7; b >= 0; --b) word = (word << 8) | bytes[8 * w + b];
      out[k].one_hot[w] = word;
    }
    out[k].mask = bytes[32];
  }
  wipe(stream.data(), stream.size());
  return out;
}

DealtBatch deal(std::size_t count) {
  DealtBatch batch;
  randombytes_buf(batch.first_seed.data(), batch.first_seed.size());
  std::vector<Entry> first = expand_seed(batch.first_seed, count);
  batch.second.resize(count);
  std::vector<std::uint8_t> masks(count);
  randombytes_buf(masks.data(), masks.size());
  for (std::size_t k = 0; k < count; ++k) {
    const auto e = one_hot(masks[k]);
    for (int w = 0; w < 4; ++w) batch.second[k].one_hot[w] = first[k].one_hot[w] ^ e[w];
    batch.second[k].mask = static_cast<std::uint8_t>(first[k].mask ^ masks[k]);
  }
  wipe(masks.data(), masks.size());
  wipe_entries(first);
  return batch;
}

}  // namespace mpc::lut2
