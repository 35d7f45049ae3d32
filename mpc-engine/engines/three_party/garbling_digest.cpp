#include "engines/three_party/garbling_digest.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <climits>

#include "common/error.hpp"

namespace mpc::three_party_engine {
namespace {

EVP_CIPHER_CTX* native(void* context) { return static_cast<EVP_CIPHER_CTX*>(context); }

[[noreturn]] void fail(const char* step) {
  throw Error(Component::Server, std::string("garbling digest: OpenSSL AES-256-GCM ") + step + " failed");
}

}  // namespace

GarblingDigest::GarblingDigest(std::span<const std::uint8_t> key) {
  if (key.size() != kKeyBytes) throw Error(Component::Server, "a garbling digest key has 32 bytes");
  context_ = EVP_CIPHER_CTX_new();
  if (context_ == nullptr) fail("context");
  // The key is this digest's alone, so a fixed nonce never repeats under it.
  const std::uint8_t nonce[12] = {};
  if (EVP_EncryptInit_ex(native(context_), EVP_aes_256_gcm(), nullptr, key.data(), nonce) != 1) {
    EVP_CIPHER_CTX_free(native(context_));
    fail("key setup");
  }
}

// Freeing the context wipes its key schedule and hash key.
GarblingDigest::~GarblingDigest() { EVP_CIPHER_CTX_free(native(context_)); }

void GarblingDigest::add(std::span<const std::uint8_t> bytes) {
  if (finished_) throw Error(Component::Server, "garbling digest: bytes added after the end");
  while (!bytes.empty()) {
    const std::size_t part = std::min<std::size_t>(bytes.size(), INT_MAX / 2);
    int written = 0;
    if (EVP_EncryptUpdate(native(context_), nullptr, &written, bytes.data(), static_cast<int>(part)) != 1)
      fail("additional data");
    bytes = bytes.subspan(part);
  }
}

GarblingDigest::Value GarblingDigest::finish() {
  if (finished_) throw Error(Component::Server, "garbling digest: finished twice");
  finished_ = true;
  Value out{};
  std::uint8_t none[16];  // GCM writes nothing at the end; OpenSSL wants a buffer all the same
  int written = 0;
  if (EVP_EncryptFinal_ex(native(context_), none, &written) != 1) fail("final");
  if (EVP_CIPHER_CTX_ctrl(native(context_), EVP_CTRL_GCM_GET_TAG, static_cast<int>(out.size()), out.data()) != 1)
    fail("tag");
  return out;
}

}  // namespace mpc::three_party_engine
