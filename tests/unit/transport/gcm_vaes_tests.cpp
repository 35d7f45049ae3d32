// The link cipher's kernels at each register width this CPU runs (gcm_vaes.hpp,
// ghash_vpclmul.hpp), against OpenSSL's AES-256-GCM: so that a machine with AVX-512 tests the
// AVX2 kernels too, whichever FrameCipher picks.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <vector>

#include "transport/gcm_vaes.hpp"
#include "transport/ghash_vpclmul.hpp"

namespace mpc::transport::detail {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes pattern(std::size_t size, std::uint8_t seed) {
  Bytes out(size);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& byte : out) {
    x = x * 1103515245u + 12345u;
    byte = static_cast<std::uint8_t>(x >> 16);
  }
  return out;
}

// OpenSSL's AES-256-GCM: the ciphertext followed by the 16-byte tag.
Bytes openssl_seal(const Bytes& key, const Bytes& nonce, const Bytes& aad, const Bytes& text) {
  EVP_CIPHER_CTX* context = EVP_CIPHER_CTX_new();
  Bytes out(text.size() + 16);
  int written = 0;
  EXPECT_EQ(EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nullptr, key.data(), nonce.data()), 1);
  EXPECT_EQ(EVP_EncryptUpdate(context, nullptr, &written, aad.data(), static_cast<int>(aad.size())), 1);
  EXPECT_EQ(EVP_EncryptUpdate(context, out.data(), &written, text.data(), static_cast<int>(text.size())), 1);
  EXPECT_EQ(EVP_EncryptFinal_ex(context, out.data() + text.size(), &written), 1);
  EXPECT_EQ(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, out.data() + text.size()), 1);
  EVP_CIPHER_CTX_free(context);
  return out;
}

std::vector<int> widths() {
  std::vector<int> out;
  for (const int width : {512, 256})
    if (gcm_vaes_kernels(width) != nullptr) out.push_back(width);
  return out;
}

TEST(GcmVaes, EachWidthSealsAndOpensAsOpenSsl) {
  if (widths().empty()) GTEST_SKIP() << "no VAES with VPCLMULQDQ on this CPU";
  const Bytes key = pattern(32, 7), nonce = pattern(12, 8);
  std::vector<std::size_t> lengths;
  for (std::size_t length = 0; length <= 600; ++length) lengths.push_back(length);
  for (const std::size_t length : {4095u, 65536u, 100003u}) lengths.push_back(length);
  for (const int width : widths()) {
    const GcmVaesKernels& gcm = *gcm_vaes_kernels(width);
    GcmVaesKey expanded;
    gcm.set_key(key.data(), expanded);
    for (const std::size_t length : lengths) {
      const Bytes text = pattern(length, static_cast<std::uint8_t>(length));
      const Bytes aad = pattern(length % 37, 3);
      const Bytes expected = openssl_seal(key, nonce, aad, text);
      // Encrypted in three parts split at odd offsets, as the frames' parts come.
      Bytes sealed(length + 16, 0xee);
      const std::size_t first = length / 3, second = length - length / 5;
      gcm.encrypt(expanded, nonce.data(), 0, text.data(), sealed.data(), first);
      gcm.encrypt(expanded, nonce.data(), first, text.data() + first, sealed.data() + first, second - first);
      gcm.encrypt(expanded, nonce.data(), second, text.data() + second, sealed.data() + second, length - second);
      gcm.tag(expanded, nonce.data(), aad.data(), aad.size(), sealed.data(), length, sealed.data() + length);
      ASSERT_EQ(sealed, expected) << "width " << width << ", " << length << " bytes";
      Bytes opened(expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(length));
      ASSERT_TRUE(gcm.open(expanded, nonce.data(), aad.data(), aad.size(), opened.data(), length,
                           expected.data() + length));
      ASSERT_EQ(opened, text) << "width " << width << ", " << length << " bytes";
      Bytes forged_tag(expected.begin() + static_cast<std::ptrdiff_t>(length), expected.end());
      forged_tag[length % 16] ^= 1;
      Bytes untouched(expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(length));
      ASSERT_FALSE(gcm.open(expanded, nonce.data(), aad.data(), aad.size(), untouched.data(), length,
                            forged_tag.data()));
      ASSERT_TRUE(std::equal(untouched.begin(), untouched.end(), expected.begin())) << "opened despite a bad tag";
    }
  }
}

// The garbling digest feeds GHASH in parts at block boundaries: each width gives the same
// value whole and in parts, and the widths agree.
TEST(GhashVpclmul, EachWidthGivesOneValueWholeAndInParts) {
  std::vector<const GhashKernels*> kernels;
  for (const int width : {512, 256})
    if (const auto* found = ghash_vpclmul_kernels(width)) kernels.push_back(found);
  if (kernels.empty()) GTEST_SKIP() << "no VPCLMULQDQ on this CPU";
  const Bytes h = pattern(16, 1);
  const Bytes data = pattern(16 * 300 + 5, 2);
  std::vector<Bytes> values;
  for (const GhashKernels* ghash : kernels) {
    GhashPowers powers;
    ghash->powers(h.data(), powers);
    std::uint8_t whole[16] = {}, parts[16] = {};
    ghash->absorb(powers, whole, data.data(), data.size());
    std::size_t at = 0;
    for (const std::size_t part : {16u, 256u, 48u, 1024u, 16u * 100}) {
      ghash->absorb(powers, parts, data.data() + at, part);
      at += part;
    }
    ghash->absorb(powers, parts, data.data() + at, data.size() - at);
    Bytes value(16), from_parts(16);
    ghash->value(whole, value.data());
    ghash->value(parts, from_parts.data());
    EXPECT_EQ(value, from_parts);
    values.push_back(value);
  }
  for (const auto& value : values) EXPECT_EQ(value, values.front());
}

}  // namespace
}  // namespace mpc::transport::detail
