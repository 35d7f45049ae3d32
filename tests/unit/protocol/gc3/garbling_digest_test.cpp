#include "protocol/gc3/garbling_digest.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <sodium.h>

#include <vector>

#include "common/error.hpp"

namespace mpc::gc3 {
namespace {

std::vector<std::uint8_t> random_bytes(std::size_t size) {
  std::vector<std::uint8_t> bytes(size);
  randombytes_buf(bytes.data(), bytes.size());
  return bytes;
}

GarblingDigest::Value digest_whole(const std::vector<std::uint8_t>& key, const std::vector<std::uint8_t>& data,
                                   GarblingDigest::Backend backend = GarblingDigest::Backend::Auto) {
  GarblingDigest digest(key, backend);
  digest.add(data);
  return digest.finish();
}

// Every backend this CPU runs: OpenSSL's, and the VPCLMULQDQ one where the CPU has it.
std::vector<GarblingDigest::Backend> backends() {
  std::vector<GarblingDigest::Backend> all{GarblingDigest::Backend::OpenSsl};
  const std::vector<std::uint8_t> key(32, 1);
  if (GarblingDigest(key).backend() == GarblingDigest::Backend::Vpclmul)
    all.push_back(GarblingDigest::Backend::Vpclmul);
  return all;
}

// The tag AES-256-GCM gives additional data alone, by OpenSSL's one-shot AEAD interface.
GarblingDigest::Value openssl_gmac(const std::vector<std::uint8_t>& key, const std::vector<std::uint8_t>& data) {
  EVP_CIPHER_CTX* context = EVP_CIPHER_CTX_new();
  const std::uint8_t nonce[12] = {};
  GarblingDigest::Value tag{};
  int written = 0;
  std::uint8_t none[16];
  EXPECT_EQ(EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nullptr, key.data(), nonce), 1);
  EXPECT_EQ(EVP_EncryptUpdate(context, nullptr, &written, data.data(), static_cast<int>(data.size())), 1);
  EXPECT_EQ(EVP_EncryptFinal_ex(context, none, &written), 1);
  EXPECT_EQ(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, tag.data()), 1);
  EVP_CIPHER_CTX_free(context);
  return tag;
}

TEST(GarblingDigest, IsTheGcmTagOfTheBytesAsAdditionalData) {
  for (const auto backend : backends()) {
    const auto key = random_bytes(32);
    for (std::size_t size : {0, 1, 15, 16, 17, 4096, 100003}) {
      const auto data = random_bytes(size);
      EXPECT_EQ(digest_whole(key, data, backend), openssl_gmac(key, data)) << size << " bytes";
    }
  }
}

// Around the sixteen-block runs the VPCLMULQDQ backend hashes at a time: every length up to
// three runs and a block, and keys whose hash key has its top bit set or clear.
TEST(GarblingDigest, BackendsAgreeAtEveryLengthAroundARun) {
  const auto data = random_bytes(3 * 256 + 17);
  for (int round = 0; round < 4; ++round) {
    const auto key = random_bytes(32);
    for (std::size_t size = 0; size <= data.size(); ++size) {
      const std::vector<std::uint8_t> part(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(size));
      const auto expected = openssl_gmac(key, part);
      for (const auto backend : backends())
        ASSERT_EQ(digest_whole(key, part, backend), expected) << size << " bytes, round " << round;
    }
  }
}

TEST(GarblingDigest, DoesNotDependOnHowTheBytesAreSplit) {
  // The garbler digests what it sends, the evaluator what it receives, in other pieces.
  for (const auto backend : backends()) {
    const auto key = random_bytes(32);
    const auto data = random_bytes(300001);
    const auto whole = openssl_gmac(key, data);
    for (std::size_t piece : {1, 7, 16, 32, 33, 255, 257, 1023, 1024, 1025, 4099, 65536}) {
      GarblingDigest digest(key, backend);
      for (std::size_t at = 0; at < data.size(); at += piece)
        digest.add({data.data() + at, std::min(piece, data.size() - at)});
      EXPECT_EQ(digest.finish(), whole) << "pieces of " << piece;
    }
  }
}

TEST(GarblingDigest, AnyChangedBitOrAnotherKeyChangesIt) {
  for (const auto backend : backends()) {
    const auto key = random_bytes(32);
    auto data = random_bytes(5000);
    const auto honest = digest_whole(key, data, backend);
    for (std::size_t bit : {0, 7, 8 * 16, 8 * 2500 + 3, 8 * 5000 - 1}) {
      data[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
      EXPECT_NE(digest_whole(key, data, backend), honest) << "bit " << bit;
      data[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    }
    auto longer = data;
    longer.push_back(0);  // a zero byte appended: the length is digested too
    EXPECT_NE(digest_whole(key, longer, backend), honest);
    EXPECT_NE(digest_whole(random_bytes(32), data, backend), honest);
  }
}

TEST(GarblingDigest, RefusesAWrongKeyLengthAndUseAfterTheEnd) {
  for (const auto backend : backends()) {
    EXPECT_THROW(GarblingDigest(random_bytes(16), backend), Error);
    GarblingDigest digest(random_bytes(32), backend);
    (void)digest.finish();
    const std::uint8_t byte = 1;
    EXPECT_THROW(digest.add({&byte, 1}), Error);
    EXPECT_THROW((void)digest.finish(), Error);
  }
}

}  // namespace
}  // namespace mpc::gc3
