#include "node/job_key.hpp"

#include <sodium.h>

#include <cstring>

namespace mpc::node {
namespace {

struct HashKey {
  HashKey() { crypto_shorthash_keygen(bytes); }
  unsigned char bytes[crypto_shorthash_KEYBYTES];
};

}  // namespace

std::size_t JobKeyHash::operator()(const JobKey& key) const noexcept {
  static const HashKey hash_key;
  unsigned char input[sizeof key.client + sizeof key.request];
  std::memcpy(input, key.client.data(), sizeof key.client);
  std::memcpy(input + sizeof key.client, key.request.data(), sizeof key.request);
  unsigned char out[crypto_shorthash_BYTES];
  crypto_shorthash(out, input, sizeof input, hash_key.bytes);
  std::size_t value;
  static_assert(sizeof value <= sizeof out);
  std::memcpy(&value, out, sizeof value);
  return value;
}

}  // namespace mpc::node
