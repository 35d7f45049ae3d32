#include "protocol/two_party/fixed_key_hash.hpp"

#include <openssl/evp.h>

#include <memory>
#include <mutex>

#include "common/error.hpp"
#include "protocol/two_party/fixed_key_aesni.hpp"

namespace mpc::two_party {
namespace {

struct Permutation {
  bool aesni = detail::aesni_supported();
  detail::FixedRoundKeys round_keys{};
  Permutation() {
    if (aesni) detail::aesni_expand_key(kFixedKey, round_keys);
  }
};

const Permutation& permutation() {
  static const Permutation instance;
  return instance;
}

// OpenSSL's AES-128-ECB under the fixed key, one context per thread.
void openssl_permute(Block* blocks, std::size_t n) {
  struct Context {
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    Context() {
      if (ctx == nullptr || EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nullptr, kFixedKey, nullptr) != 1)
        throw Error(Component::Protocol, "OpenSSL AES-128-ECB unavailable");
      EVP_CIPHER_CTX_set_padding(ctx, 0);
    }
    ~Context() { EVP_CIPHER_CTX_free(ctx); }
  };
  thread_local Context context;
  auto* bytes = reinterpret_cast<unsigned char*>(blocks);
  std::size_t done = 0;
  while (done < n) {
    const std::size_t chunk = std::min<std::size_t>(n - done, 1u << 20);
    int written = 0;
    if (EVP_EncryptUpdate(context.ctx, bytes + done * 16, &written, bytes + done * 16, static_cast<int>(chunk * 16)) !=
        1)
      throw Error(Component::Protocol, "OpenSSL AES-128-ECB failed");
    done += chunk;
  }
}

Block sigma(Block x) { return {x.hi, x.lo ^ x.hi}; }

}  // namespace

void fixed_key_permute(Block* blocks, std::size_t n) {
  const Permutation& pi = permutation();
  if (pi.aesni)
    detail::aesni_encrypt_in_place(pi.round_keys, blocks, n);
  else
    openssl_permute(blocks, n);
}

bool fixed_key_hash_uses_aesni() { return permutation().aesni; }

void tccr_hash(const Block* in, Block* out, std::size_t n, std::uint64_t tweak_high, std::uint64_t first_tweak,
               std::uint64_t tweak_step) {
  const Permutation& pi = permutation();
  if (pi.aesni) {
    detail::aesni_tccr(pi.round_keys, in, out, n, tweak_high, first_tweak, tweak_step);
    return;
  }
  // Portable: sigma and the tweak into a buffer, pi over it, then the feed-forward.
  constexpr std::size_t kChunk = 1024;
  Block buffer[kChunk];
  Block sig[kChunk];
  for (std::size_t start = 0; start < n; start += kChunk) {
    const std::size_t count = std::min(kChunk, n - start);
    for (std::size_t e = 0; e < count; ++e) {
      sig[e] = sigma(in[start + e]);
      buffer[e] = sig[e] ^ Block{first_tweak + (start + e) * tweak_step, tweak_high};
    }
    openssl_permute(buffer, count);
    for (std::size_t e = 0; e < count; ++e) out[start + e] = buffer[e] ^ sig[e];
  }
}

}  // namespace mpc::two_party
