// Sealed key shares (wire/sealed_share.hpp): the server whose key a share is sealed to opens
// it for the key id it was sealed for, and nobody else; every seal is fresh; altered,
// truncated or re-labelled seals are refused.
#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <vector>

#include "common/error.hpp"
#include "wire/sealed_share.hpp"

namespace mpc::wire {
namespace {

using Bytes = std::vector<std::uint8_t>;

struct Server {
  SealKey public_key{};
  SecretBytes secret_key{32};
  Server() {
    if (sodium_init() < 0) ADD_FAILURE() << "libsodium initialisation failed";
    crypto_box_keypair(public_key.data(), secret_key.data());
  }
};

Bytes random_share(std::size_t bytes) {
  Bytes out(bytes);
  randombytes_buf(out.data(), out.size());
  return out;
}

bool contains(const Bytes& haystack, const Bytes& needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) != haystack.end();
}

TEST(SealedShare, OpensForItsServerAndKeyId) {
  const Server server;
  const KeyId key{"kdc/alice", 3, KeyAlgorithm::Aes256CtsHmacSha1};
  const Bytes share = random_share(2 * material_bytes(key.algorithm));
  const Bytes sealed = seal_share(key, share, server.public_key);
  EXPECT_EQ(sealed.size(), share.size() + kSealedShareOverhead);
  // Neither the share nor any 16 bytes of it travel in clear.
  EXPECT_FALSE(contains(sealed, Bytes(share.begin() + 100, share.begin() + 116)));
  const SecretBytes opened = open_sealed_share(key, sealed, server.public_key, server.secret_key);
  EXPECT_EQ(Bytes(opened.span().begin(), opened.span().end()), share);
  // An ephemeral key per seal: the same share seals differently every time.
  EXPECT_NE(seal_share(key, share, server.public_key), sealed);
}

TEST(SealedShare, AnotherServerCannotOpenIt) {
  const Server server, other;
  const KeyId key{"k", 1, KeyAlgorithm::Aes128};
  const Bytes sealed = seal_share(key, random_share(176), server.public_key);
  EXPECT_THROW(open_sealed_share(key, sealed, other.public_key, other.secret_key), FormatError);
  // The right secret key with the wrong public key fails too (the nonce binds both).
  EXPECT_THROW(open_sealed_share(key, sealed, other.public_key, server.secret_key), FormatError);
}

TEST(SealedShare, AnotherKeyIdIsRefused) {
  const Server server;
  const KeyId key{"kdc/alice", 3, KeyAlgorithm::Aes128CtsHmacSha1};
  const Bytes sealed = seal_share(key, random_share(64), server.public_key);
  for (const KeyId& other : {KeyId{"kdc/alicf", 3, key.algorithm}, KeyId{"kdc/alice", 4, key.algorithm},
                             KeyId{"kdc/alice", 3, KeyAlgorithm::Aes256CtsHmacSha1}}) {
    try {
      (void)open_sealed_share(other, sealed, server.public_key, server.secret_key);
      ADD_FAILURE() << "opened for " << describe(other);
    } catch (const FormatError& error) {
      EXPECT_NE(std::string(error.what()).find("another key id"), std::string::npos) << error.what();
    }
  }
}

TEST(SealedShare, AlteredOrTruncatedSealsAreRefused) {
  const Server server;
  const KeyId key{"k", 1, KeyAlgorithm::Aes128};
  const Bytes sealed = seal_share(key, random_share(176), server.public_key);
  for (std::size_t i : {std::size_t{0}, std::size_t{31}, std::size_t{32}, std::size_t{47}, std::size_t{48},
                        sealed.size() - 1}) {
    Bytes altered = sealed;
    altered[i] ^= 0x01;
    EXPECT_THROW(open_sealed_share(key, altered, server.public_key, server.secret_key), FormatError) << i;
  }
  for (std::size_t length : {std::size_t{0}, kSealedShareOverhead - 1, kSealedShareOverhead, sealed.size() - 1})
    EXPECT_THROW(open_sealed_share(key, std::span(sealed).first(length), server.public_key, server.secret_key),
                 FormatError)
        << length;
  EXPECT_THROW(open_sealed_share(key, sealed, server.public_key, SecretBytes(31)), Error);
}

TEST(SealedShare, InvalidKeyIdOrEmptyShareIsNotSealed) {
  const Server server;
  EXPECT_THROW(seal_share(KeyId{"bad name", 1, KeyAlgorithm::Aes128}, random_share(176), server.public_key),
               FormatError);
  EXPECT_THROW(seal_share(KeyId{"k", 1, KeyAlgorithm::Aes128}, Bytes{}, server.public_key), FormatError);
}

}  // namespace
}  // namespace mpc::wire
