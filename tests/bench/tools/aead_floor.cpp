#include "bench/tools/aead_floor.hpp"

#include <sodium.h>

#include <chrono>
#include <vector>

#include "common/error.hpp"

namespace mpc::tools {
namespace {

template <typename Operation>
double bytes_per_second(double seconds, std::size_t message_bytes, Operation&& operation) {
  const auto start = std::chrono::steady_clock::now();
  std::size_t done = 0;
  for (;;) {
    for (int i = 0; i < 16; ++i) operation();
    done += 16 * message_bytes;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed >= seconds) return static_cast<double>(done) / elapsed;
  }
}

}  // namespace

AeadRate measure_xsalsa20poly1305(double seconds, std::size_t message_bytes) {
  if (sodium_init() < 0) throw Error(Component::Tool, "libsodium initialisation failed");
  std::vector<unsigned char> plain(message_bytes), sealed(message_bytes + crypto_box_MACBYTES);
  unsigned char shared[crypto_box_BEFORENMBYTES], nonce[crypto_box_NONCEBYTES];
  randombytes_buf(plain.data(), plain.size());
  randombytes_buf(shared, sizeof shared);
  randombytes_buf(nonce, sizeof nonce);
  AeadRate rate;
  rate.seal_bytes_per_second = bytes_per_second(seconds, message_bytes, [&] {
    crypto_box_easy_afternm(sealed.data(), plain.data(), plain.size(), nonce, shared);
  });
  crypto_box_easy_afternm(sealed.data(), plain.data(), plain.size(), nonce, shared);
  rate.open_bytes_per_second = bytes_per_second(seconds, message_bytes, [&] {
    if (crypto_box_open_easy_afternm(plain.data(), sealed.data(), sealed.size(), nonce, shared) != 0)
      throw Error(Component::Tool, "AEAD open failed");
  });
  return rate;
}

}  // namespace mpc::tools
