#include "engines/three_party/garbled_krb_inputs.hpp"

#include <sodium.h>

namespace mpc::three_party_engine::garbled {
namespace {

void hash_batch_id(crypto_generichash_state& state, const wire::BatchHeader& header) {
  const auto id = batch_id(header);
  crypto_generichash_update(&state, id.data(), id.size());
}

}  // namespace

std::array<std::uint8_t, 12> batch_id(const wire::BatchHeader& header) {
  std::array<std::uint8_t, 12> id{};
  for (int i = 0; i < 8; ++i) id[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(header.epoch >> (8 * i));
  for (int i = 0; i < 4; ++i) id[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(header.sequence >> (8 * i));
  return id;
}

std::vector<std::uint8_t> key_row_bits(const BatchTask& task, KeyPart part) {
  const std::size_t key_bytes = task.key_rows / 8;
  std::vector<std::uint8_t> bits(task.key_rows * task.instances);
  std::size_t instance = 0;
  for (const SliceInput& slice : task.slices) {
    if (!slice.key_share.empty()) {
      const std::uint8_t* x = slice.key_share.data();
      const std::uint8_t* a = slice.key_share.data() + key_bytes;
      for (std::size_t r = 0; r < task.key_rows; ++r) {
        const std::size_t byte = r / 8;
        const std::uint8_t value = part == KeyPart::X   ? x[byte]
                                   : part == KeyPart::A ? a[byte]
                                                        : static_cast<std::uint8_t>(x[byte] ^ a[byte]);
        const auto bit = static_cast<std::uint8_t>((value >> (r % 8)) & 1);
        for (std::size_t n = 0; n < slice.blocks; ++n) bits[r * task.instances + instance + n] = bit;
      }
    }
    instance += slice.blocks;
  }
  return bits;
}

std::vector<std::uint8_t> public_row_bits(const BatchTask& task) {
  const std::size_t rows = task.public_bytes * 8;
  std::vector<std::uint8_t> bits(rows * task.instances);
  std::size_t instance = 0;
  for (const SliceInput& slice : task.slices) {
    for (std::size_t n = 0; n < slice.blocks && !slice.key_share.empty(); ++n) {
      const std::uint8_t* record = slice.public_records.data() + n * task.public_bytes;
      for (std::size_t r = 0; r < rows; ++r) bits[r * task.instances + instance + n] = (record[r / 8] >> (r % 8)) & 1;
    }
    instance += slice.blocks;
  }
  return bits;
}

SecretBytes batch_stream(const rss3::PrfKey& key, std::string_view purpose, const wire::BatchHeader& header,
                         std::size_t bytes) {
  unsigned char seed[randombytes_SEEDBYTES];
  crypto_generichash_state state;
  crypto_generichash_init(&state, key.data(), key.size(), sizeof seed);
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(purpose.data()), purpose.size());
  hash_batch_id(state, header);
  crypto_generichash_final(&state, seed, sizeof seed);
  SecretBytes out(bytes);
  if (bytes != 0) randombytes_buf_deterministic(out.data(), bytes, seed);
  wipe(seed, sizeof seed);
  wipe(&state, sizeof state);
  return out;
}

std::array<std::uint8_t, 32> batch_mac(const rss3::PrfKey& key, std::string_view purpose,
                                       const wire::BatchHeader& header,
                                       std::initializer_list<std::span<const std::uint8_t>> parts) {
  std::array<std::uint8_t, 32> mac{};
  crypto_generichash_state state;
  crypto_generichash_init(&state, key.data(), key.size(), mac.size());
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(purpose.data()), purpose.size());
  hash_batch_id(state, header);
  for (const auto part : parts) crypto_generichash_update(&state, part.data(), part.size());
  crypto_generichash_final(&state, mac.data(), mac.size());
  wipe(&state, sizeof state);
  return mac;
}

}  // namespace mpc::three_party_engine::garbled
