#include "protocol/gc3/batch_streams.hpp"

#include <sodium.h>

namespace mpc::gc3 {
namespace {

void hash_batch_id(crypto_generichash_state& state, const BatchId& id) {
  const auto bytes = batch_id_bytes(id);
  crypto_generichash_update(&state, bytes.data(), bytes.size());
}

}  // namespace

std::array<std::uint8_t, 12> batch_id_bytes(const BatchId& id) {
  std::array<std::uint8_t, 12> bytes{};
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(id.epoch >> (8 * i));
  for (int i = 0; i < 4; ++i) bytes[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(id.sequence >> (8 * i));
  return bytes;
}

SecretBytes batch_stream(const rss3::PrfKey& key, std::string_view purpose, const BatchId& id, std::size_t bytes) {
  unsigned char seed[randombytes_SEEDBYTES];
  crypto_generichash_state state;
  crypto_generichash_init(&state, key.data(), key.size(), sizeof seed);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(purpose.data()), purpose.size());
  hash_batch_id(state, id);
  crypto_generichash_final(&state, seed, sizeof seed);
  SecretBytes out(bytes);
  if (bytes != 0) randombytes_buf_deterministic(out.data(), bytes, seed);
  wipe(seed, sizeof seed);
  wipe(&state, sizeof state);
  return out;
}

}  // namespace mpc::gc3
