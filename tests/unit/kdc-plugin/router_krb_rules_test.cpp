// tests/unit/kdc-plugin/router_krb_rules_test.cpp - what the crypto router accepts for a
// protected key of enctype 17, 18, 19 or 20 (kdc-plugin/router/krb_rules.h), without an engine.
// Outside truth: MIT libk5crypto itself (this binary is not preloaded with the router):
// lengths equal krb5_c_encrypt_length / krb5_c_crypto_length, the mandatory checksum type
// equals krb5int_c_mandatory_cksumtype's, the PRF+ limit is where krb5_c_prfplus says E2BIG,
// and the bytes gathered from an iov list are exactly what krb5_c_make_checksum_iov signs.

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "krb_rules.h"

extern "C" krb5_error_code krb5int_c_mandatory_cksumtype(krb5_context, krb5_enctype,
                                                         krb5_cksumtype*);

namespace {

constexpr krb5_enctype kAes128 = ENCTYPE_AES128_CTS_HMAC_SHA1_96;
constexpr krb5_enctype kAes256 = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
constexpr krb5_enctype kAes128Sha2 = ENCTYPE_AES128_CTS_HMAC_SHA256_128;
constexpr krb5_enctype kAes256Sha2 = ENCTYPE_AES256_CTS_HMAC_SHA384_192;
constexpr krb5_enctype kServed[] = {kAes128, kAes256, kAes128Sha2, kAes256Sha2};

class RouterKrbRulesVsK5crypto : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(krb5_init_context(&ctx_), 0); }
  void TearDown() override { krb5_free_context(ctx_); }
  krb5_context ctx_ = nullptr;
};

krb5_data as_data(std::vector<uint8_t>& bytes) {
  krb5_data d{};
  d.magic = KV5M_DATA;
  d.length = static_cast<unsigned int>(bytes.size());
  d.data = reinterpret_cast<char*>(bytes.data());
  return d;
}

std::vector<uint8_t> filled(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + 31 * i);
  return v;
}

TEST(RouterKrbRules, EnctypesMapToTheEngineAlgorithms) {
  EXPECT_EQ(router_krb_algorithm(kAes128), 4);  // MPC_AES128_CTS_HMAC_SHA1_96
  EXPECT_EQ(router_krb_algorithm(kAes256), 5);  // MPC_AES256_CTS_HMAC_SHA1_96
  EXPECT_EQ(router_krb_algorithm(kAes128Sha2), 6);  // MPC_AES128_CTS_HMAC_SHA256_128
  EXPECT_EQ(router_krb_algorithm(kAes256Sha2), 7);  // MPC_AES256_CTS_HMAC_SHA384_192
  for (krb5_enctype other : {0, 1, 16, 21, 23, 25, 26, -19792, 0x1ff})
    EXPECT_EQ(router_krb_algorithm(other), 0) << other;
  EXPECT_STREQ(router_krb_enctype_name(kAes128), "aes128-cts-hmac-sha1-96");
  EXPECT_STREQ(router_krb_enctype_name(kAes256), "aes256-cts-hmac-sha1-96");
  EXPECT_STREQ(router_krb_enctype_name(kAes128Sha2), "aes128-cts-hmac-sha256-128");
  EXPECT_STREQ(router_krb_enctype_name(kAes256Sha2), "aes256-cts-hmac-sha384-192");
  EXPECT_STREQ(router_krb_enctype_name(23), "unknown");
}

TEST_F(RouterKrbRulesVsK5crypto, EnctypeNamesAreLibk5cryptos) {
  for (krb5_enctype e : kServed) {
    char name[64] = {0};
    ASSERT_EQ(krb5_enctype_to_name(e, FALSE, name, sizeof(name)), 0);
    EXPECT_STREQ(router_krb_enctype_name(e), name) << e;
  }
}

TEST_F(RouterKrbRulesVsK5crypto, MandatoryChecksumTypesAreLibk5cryptos) {
  for (krb5_enctype e : kServed) {
    krb5_cksumtype theirs = 0;
    ASSERT_EQ(krb5int_c_mandatory_cksumtype(ctx_, e, &theirs), 0);
    EXPECT_EQ(router_krb_cksumtype(e), theirs) << e;
    size_t length = 0;
    ASSERT_EQ(krb5_c_checksum_length(ctx_, theirs, &length), 0);
    EXPECT_EQ(router_krb_mac_len(e), length) << e;
  }
  EXPECT_EQ(router_krb_cksumtype(kAes128), 15);
  EXPECT_EQ(router_krb_cksumtype(kAes256), 16);
  EXPECT_EQ(router_krb_cksumtype(kAes128Sha2), 19);
  EXPECT_EQ(router_krb_cksumtype(kAes256Sha2), 20);
  EXPECT_EQ(router_krb_mac_len(kAes128Sha2), 16u);
  EXPECT_EQ(router_krb_mac_len(kAes256Sha2), size_t{ROUTER_KRB_MAX_MAC_LEN});
  for (krb5_enctype other : {0, 23, -19792}) {
    EXPECT_EQ(router_krb_cksumtype(other), 0);
    EXPECT_EQ(router_krb_mac_len(other), 0u);
  }
}

TEST(RouterKrbRules, ChecksumTypeZeroIsTheKeysOwnAndNoOtherTypeIsAccepted) {
  krb5_cksumtype type = -1;
  EXPECT_EQ(router_krb_resolve_cksumtype(kAes128, 0, &type), 0);
  EXPECT_EQ(type, 15);
  EXPECT_EQ(router_krb_resolve_cksumtype(kAes128, 15, &type), 0);
  EXPECT_EQ(type, 15);
  EXPECT_EQ(router_krb_resolve_cksumtype(kAes256, 0, &type), 0);
  EXPECT_EQ(type, 16);
  EXPECT_EQ(router_krb_resolve_cksumtype(kAes256, 16, &type), 0);
  EXPECT_EQ(type, 16);
  EXPECT_EQ(router_krb_resolve_cksumtype(kAes128Sha2, 0, &type), 0);
  EXPECT_EQ(type, 19);
  EXPECT_EQ(router_krb_resolve_cksumtype(kAes128Sha2, 19, &type), 0);
  EXPECT_EQ(type, 19);
  EXPECT_EQ(router_krb_resolve_cksumtype(kAes256Sha2, 0, &type), 0);
  EXPECT_EQ(type, 20);
  EXPECT_EQ(router_krb_resolve_cksumtype(kAes256Sha2, 20, &type), 0);
  EXPECT_EQ(type, 20);
  // Unkeyed types, the private GMAC, an unknown one: never; and every served type but the
  // enctype's own.
  for (krb5_enctype e : kServed) {
    for (krb5_cksumtype other : {1, 7, 8, 14, 15, 16, 19, 20, -19792, 12345}) {
      if (other == router_krb_cksumtype(e)) continue;
      type = -1;
      EXPECT_EQ(router_krb_resolve_cksumtype(e, other, &type), KRB5_BAD_ENCTYPE) << e << " " << other;
      EXPECT_EQ(type, 0);
    }
  }
  EXPECT_EQ(router_krb_resolve_cksumtype(23, 0, &type), KRB5_BAD_ENCTYPE);
}

TEST(RouterKrbRules, OnlyTheUsagesTheEngineHoldsAreServed) {
  const std::set<krb5_keyusage> served = {1, 2, 3, 17, 56};
  for (krb5_keyusage usage = -2; usage < 1100; ++usage)
    EXPECT_EQ(router_krb_usage_served(usage) != 0, served.count(usage) == 1) << usage;
  for (krb5_keyusage usage : {512, 513, 514, 1024, 0x7fffffff})
    EXPECT_FALSE(router_krb_usage_served(usage)) << usage;
}

TEST_F(RouterKrbRulesVsK5crypto, EncryptLengthIsLibk5cryptosUpToTheEngineLimit) {
  for (krb5_enctype e : kServed) {
    unsigned int header = 0, trailer = 0;
    ASSERT_EQ(krb5_c_crypto_length(ctx_, e, KRB5_CRYPTO_TYPE_HEADER, &header), 0);
    ASSERT_EQ(krb5_c_crypto_length(ctx_, e, KRB5_CRYPTO_TYPE_TRAILER, &trailer), 0);
    EXPECT_EQ(header, unsigned{ROUTER_KRB_CONFOUNDER_LEN});
    EXPECT_EQ(trailer, router_krb_mac_len(e));
    for (size_t plain = 0; plain <= ROUTER_KRB_MAX_DATA - ROUTER_KRB_CONFOUNDER_LEN; ++plain) {
      size_t theirs = 0, ours = 0;
      ASSERT_EQ(krb5_c_encrypt_length(ctx_, e, plain, &theirs), 0);
      ASSERT_EQ(router_krb_encrypt_length(e, plain, &ours), 0) << plain;
      ASSERT_EQ(ours, theirs) << plain;
    }
    size_t total = 1;
    EXPECT_EQ(router_krb_encrypt_length(e, 4081, &total), KRB5_BAD_MSIZE);
    EXPECT_EQ(total, 0u);
    EXPECT_EQ(router_krb_encrypt_length(e, SIZE_MAX, &total), KRB5_BAD_MSIZE);
  }
  size_t total = 1;
  EXPECT_EQ(router_krb_encrypt_length(23, 10, &total), KRB5_BAD_ENCTYPE);
  EXPECT_EQ(total, 0u);
}

TEST(RouterKrbRules, PlainLengthNeedsConfounderAndMacAndFitsOneEngineCall) {
  for (krb5_enctype e : kServed) {
    const size_t overhead = 16 + router_krb_mac_len(e);  // 28, 28, 32, 40
    size_t plain = 1;
    for (size_t cipher = 0; cipher < overhead; ++cipher) {
      EXPECT_EQ(router_krb_plain_length(e, cipher, &plain), KRB5_BAD_MSIZE) << cipher;
      EXPECT_EQ(plain, 0u);
    }
    EXPECT_EQ(router_krb_plain_length(e, overhead, &plain), 0);
    EXPECT_EQ(plain, 0u);
    EXPECT_EQ(router_krb_plain_length(e, overhead + 33, &plain), 0);
    EXPECT_EQ(plain, 33u);
    EXPECT_EQ(router_krb_plain_length(e, 4096, &plain), 0);
    EXPECT_EQ(plain, 4096 - overhead);
    EXPECT_EQ(router_krb_plain_length(e, 4097, &plain), KRB5_BAD_MSIZE);
    EXPECT_EQ(router_krb_plain_length(e, SIZE_MAX, &plain), KRB5_BAD_MSIZE);
  }
  size_t plain = 1;
  EXPECT_EQ(router_krb_plain_length(23, 100, &plain), KRB5_BAD_ENCTYPE);
  EXPECT_EQ(plain, 0u);
}

// An iov list with every buffer type, each with distinct bytes.
struct IovList {
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<krb5_crypto_iov> iov;

  void add(krb5_cryptotype flags, std::vector<uint8_t> bytes) {
    buffers.push_back(std::move(bytes));
    iov.push_back(krb5_crypto_iov{flags, as_data(buffers.back())});
  }
  void rebind() {  // buffers may have moved while growing
    for (size_t i = 0; i < iov.size(); ++i) iov[i].data = as_data(buffers[i]);
  }
};

TEST_F(RouterKrbRulesVsK5crypto, GatheredBuffersAreWhatLibk5cryptoChecksums) {
  IovList list;
  list.add(KRB5_CRYPTO_TYPE_SIGN_ONLY, filled(7, 0x10));
  list.add(KRB5_CRYPTO_TYPE_HEADER, filled(16, 0x20));
  list.add(KRB5_CRYPTO_TYPE_EMPTY, filled(9, 0x30));
  list.add(KRB5_CRYPTO_TYPE_DATA, filled(33, 0x40));
  list.add(KRB5_CRYPTO_TYPE_CHECKSUM, std::vector<uint8_t>(ROUTER_KRB_MAX_MAC_LEN, 0));
  list.add(KRB5_CRYPTO_TYPE_TRAILER, filled(5, 0x50));
  list.add(KRB5_CRYPTO_TYPE_PADDING, filled(3, 0x60));
  list.add(KRB5_CRYPTO_TYPE_DATA, {});
  list.add(KRB5_CRYPTO_TYPE_SIGN_ONLY, filled(21, 0x70));
  list.rebind();

  const size_t n = router_krb_signed_length(list.iov.data(), list.iov.size());
  EXPECT_EQ(n, 7u + 16 + 33 + 3 + 21);
  std::vector<uint8_t> gathered(n);
  router_krb_gather_signed(list.iov.data(), list.iov.size(), gathered.data());
  std::vector<uint8_t> expected;
  for (size_t i : {0, 1, 3, 6, 8})
    expected.insert(expected.end(), list.buffers[i].begin(), list.buffers[i].end());
  EXPECT_EQ(gathered, expected);

  krb5_crypto_iov* checksum = router_krb_checksum_iov(list.iov.data(), list.iov.size());
  ASSERT_EQ(checksum, &list.iov[4]);
  EXPECT_EQ(router_krb_checksum_iov(list.iov.data(), 4), nullptr);

  // libk5crypto's HMAC over the iov list equals its HMAC over the gathered bytes.
  for (krb5_enctype e : kServed) {
    krb5_keyblock keyblock{};
    ASSERT_EQ(krb5_c_make_random_key(ctx_, e, &keyblock), 0);
    krb5_keyblock* key = &keyblock;
    const size_t mac_len = router_krb_mac_len(e);
    for (krb5_keyusage usage : {17, 56}) {
      checksum->data.length = static_cast<unsigned int>(mac_len);
      ASSERT_EQ(krb5_c_make_checksum_iov(ctx_, 0, key, usage, list.iov.data(), list.iov.size()),
                0);
      krb5_data whole = as_data(gathered);
      krb5_checksum flat{};
      ASSERT_EQ(krb5_c_make_checksum(ctx_, 0, key, usage, &whole, &flat), 0);
      ASSERT_EQ(flat.length, mac_len);
      ASSERT_EQ(checksum->data.length, mac_len);
      EXPECT_EQ(std::memcmp(flat.contents, checksum->data.data, mac_len), 0);
      krb5_free_checksum_contents(ctx_, &flat);
    }
    krb5_free_keyblock_contents(ctx_, key);
  }
}

TEST(RouterKrbRules, EmptyAndUnsignedListsGatherNothing) {
  EXPECT_EQ(router_krb_signed_length(nullptr, 0), 0u);
  router_krb_gather_signed(nullptr, 0, nullptr);
  IovList list;
  list.add(KRB5_CRYPTO_TYPE_TRAILER, filled(4, 1));
  list.add(KRB5_CRYPTO_TYPE_EMPTY, filled(4, 2));
  list.add(KRB5_CRYPTO_TYPE_CHECKSUM, filled(12, 3));
  list.rebind();
  EXPECT_EQ(router_krb_signed_length(list.iov.data(), list.iov.size()), 0u);
  router_krb_gather_signed(list.iov.data(), list.iov.size(), nullptr);
}

}  // namespace
