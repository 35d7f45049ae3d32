#include "protocol/lut2/dealer.hpp"

#include <sodium.h>

#include <cstring>

namespace mpc::lut2 {

DealtBatch::~DealtBatch() {
  wipe(first_seed.data(), first_seed.size());
  wipe_entries(second);
}

void wipe_entries(std::vector<Entry>& entries) { wipe(entries.data(), entries.size() * sizeof(Entry)); }

std::vector<Entry> expand_seed(const Seed& seed, std::size_t count) {
  constexpr std::size_t kEntryBytes = 33;
  std::vector<std::uint8_t> stream(count * kEntryBytes);
  const std::uint8_t nonce[crypto_stream_chacha20_ietf_NONCEBYTES] = {};
  crypto_stream_chacha20_ietf(stream.data(), stream.size(), nonce, seed.data());
  std::vector<Entry> out(count);
  for (std::size_t k = 0; k < count; ++k) {
    std::memcpy(out[k].one_hot.data(), stream.data() + k * kEntryBytes, 32);
    out[k].mask = stream[k * kEntryBytes + 32];
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
