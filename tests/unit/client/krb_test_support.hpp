// Cleartext RFC 3962 pieces for the Kerberos key tests, built on OpenSSL's AES and SHA-1 and
// independent of the code under test: AES of one block, CBC with ciphertext stealing, and
// HMAC-SHA1 finished from a stored 40-byte HMAC state.
#pragma once

#include <openssl/evp.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/sha1_reference.hpp"

namespace mpc::client::krb_test {

using Bytes = std::vector<std::uint8_t>;

inline Bytes aes_block(const Bytes& key, std::span<const std::uint8_t> block, bool decrypt = false) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  const EVP_CIPHER* cipher = key.size() == 16 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
  Bytes out(32);
  int length = 0;
  EXPECT_EQ(EVP_CipherInit_ex(ctx, cipher, nullptr, key.data(), nullptr, decrypt ? 0 : 1), 1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  EXPECT_EQ(EVP_CipherUpdate(ctx, out.data(), &length, block.data(), 16), 1);
  EVP_CIPHER_CTX_free(ctx);
  out.resize(16);
  return out;
}

inline Bytes xor_bytes(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  Bytes out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = static_cast<std::uint8_t>(a[i] ^ b[i]);
  return out;
}

// RFC 3962 section 5: CBC with a zero IV over the zero-padded input, then the last two
// ciphertext blocks swapped and the (new) last one truncated to the input's length; a single
// block is plain CBC. Input of at least 16 bytes.
inline Bytes cts_encrypt(const Bytes& key, const Bytes& plaintext) {
  const std::size_t blocks = (plaintext.size() + 15) / 16;
  Bytes padded = plaintext;
  padded.resize(blocks * 16, 0);
  Bytes cbc;
  Bytes previous(16, 0);
  for (std::size_t i = 0; i < blocks; ++i) {
    previous = aes_block(key, xor_bytes(std::span(padded).subspan(16 * i, 16), previous));
    cbc.insert(cbc.end(), previous.begin(), previous.end());
  }
  if (blocks == 1) return cbc;
  const std::size_t last = plaintext.size() - 16 * (blocks - 1);
  Bytes out(cbc.begin(), cbc.begin() + static_cast<std::ptrdiff_t>(16 * (blocks - 2)));
  out.insert(out.end(), cbc.begin() + static_cast<std::ptrdiff_t>(16 * (blocks - 1)), cbc.end());
  out.insert(out.end(), cbc.begin() + static_cast<std::ptrdiff_t>(16 * (blocks - 2)),
             cbc.begin() + static_cast<std::ptrdiff_t>(16 * (blocks - 2) + last));
  return out;
}

inline Bytes cts_decrypt(const Bytes& key, const Bytes& ciphertext) {
  const std::size_t blocks = (ciphertext.size() + 15) / 16;
  if (blocks == 1) return aes_block(key, ciphertext, true);
  const std::size_t last = ciphertext.size() - 16 * (blocks - 1);
  // Undo the swap: the full block at n-2 is C_n; the tail is C_{n-1} truncated, whose missing
  // bytes are the tail of D(C_n) (the padding was zeros).
  const std::span<const std::uint8_t> c(ciphertext);
  const Bytes cn(c.begin() + static_cast<std::ptrdiff_t>(16 * (blocks - 2)),
                 c.begin() + static_cast<std::ptrdiff_t>(16 * (blocks - 1)));
  const Bytes z = aes_block(key, cn, true);
  Bytes cn1(c.begin() + static_cast<std::ptrdiff_t>(16 * (blocks - 1)), c.end());
  const Bytes pn = xor_bytes(std::span(z).first(last), cn1);
  cn1.insert(cn1.end(), z.begin() + static_cast<std::ptrdiff_t>(last), z.end());
  Bytes cbc(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(16 * (blocks - 2)));
  cbc.insert(cbc.end(), cn1.begin(), cn1.end());
  Bytes out;
  Bytes previous(16, 0);
  for (std::size_t i = 0; i + 1 < blocks; ++i) {
    const Bytes block(cbc.begin() + static_cast<std::ptrdiff_t>(16 * i), cbc.begin() + static_cast<std::ptrdiff_t>(16 * i + 16));
    const Bytes p = xor_bytes(aes_block(key, block, true), previous);
    out.insert(out.end(), p.begin(), p.end());
    previous = block;
  }
  out.insert(out.end(), pn.begin(), pn.end());
  return out;
}

inline circuits::Sha1State state_from(std::span<const std::uint8_t> bytes) {
  circuits::Sha1State state{};
  for (std::size_t i = 0; i < 5; ++i)
    state[i] = static_cast<std::uint32_t>(bytes[4 * i]) << 24 | static_cast<std::uint32_t>(bytes[4 * i + 1]) << 16 |
               static_cast<std::uint32_t>(bytes[4 * i + 2]) << 8 | bytes[4 * i + 3];
  return state;
}

// SHA-1 of `message` continued from `state`, which has already absorbed `prefix_bytes`.
inline Bytes sha1_continue(circuits::Sha1State state, std::size_t prefix_bytes, const Bytes& message) {
  Bytes padded = message;
  padded.push_back(0x80);
  while (padded.size() % 64 != 56) padded.push_back(0);
  const std::uint64_t bits = 8 * static_cast<std::uint64_t>(prefix_bytes + message.size());
  for (int shift = 56; shift >= 0; shift -= 8) padded.push_back(static_cast<std::uint8_t>(bits >> shift));
  for (std::size_t offset = 0; offset < padded.size(); offset += 64)
    circuits::sha1_compress(state, std::span<const std::uint8_t, 64>(padded.data() + offset, 64));
  const auto digest = circuits::sha1_state_bytes(state);
  return Bytes(digest.begin(), digest.end());
}

// HMAC-SHA1(K, message) from the 40-byte state of K: inner and outer hashes continue after
// their one key block.
inline Bytes hmac_from_state(std::span<const std::uint8_t> state, const Bytes& message) {
  const Bytes inner = sha1_continue(state_from(state.first(20)), 64, message);
  return sha1_continue(state_from(state.subspan(20, 20)), 64, inner);
}

}  // namespace mpc::client::krb_test
