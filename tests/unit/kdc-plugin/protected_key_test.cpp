// The protected-key format (kdc-plugin/kdb/protected_key.h) against the key-algorithm table
// (mpc-engine/keys/key_algorithms.h) it takes its facts from: the private enctype and checksum
// type, the tag length, and the engine algorithm of each user enctype. Outside truth for the
// standard enctypes: RFC 3962 / RFC 8009 numbers as MIT krb5.h spells them.
#include <gtest/gtest.h>

#include <krb5/krb5.h>

#include "keys/key_algorithms.h"
#include "protected_key.h"

namespace {

constexpr const mpc_key_algorithm_info* gcm_row = mpc_key_algorithm_by_name("aes256-gcm");

static_assert(MPC_KDC_ENCTYPE_AES256_GCM == gcm_row->enctype);
static_assert(MPC_KDC_CKSUMTYPE_GMAC == gcm_row->cksumtype);
static_assert(MPC_KDC_TAG_LEN == gcm_row->mac_bytes);
static_assert(MPC_KDC_ENCTYPE_AES256_GCM < 0, "negative enctypes are for local use");

TEST(ProtectedKey, UserEnctypesMapToTheirEngineAlgorithms) {
  EXPECT_EQ(MPC_KDC_USER_ALGORITHM(ENCTYPE_AES128_CTS_HMAC_SHA1_96), 4);     // MPC_AES128_CTS_HMAC_SHA1_96
  EXPECT_EQ(MPC_KDC_USER_ALGORITHM(ENCTYPE_AES256_CTS_HMAC_SHA1_96), 5);     // MPC_AES256_CTS_HMAC_SHA1_96
  EXPECT_EQ(MPC_KDC_USER_ALGORITHM(ENCTYPE_AES128_CTS_HMAC_SHA256_128), 6);  // MPC_AES128_CTS_HMAC_SHA256_128
  EXPECT_EQ(MPC_KDC_USER_ALGORITHM(ENCTYPE_AES256_CTS_HMAC_SHA384_192), 7);  // MPC_AES256_CTS_HMAC_SHA384_192
}

TEST(ProtectedKey, OtherEnctypesHaveNoUserAlgorithm) {
  for (int32_t enctype : {0, 1, 16, 21, 23, 25, 26, MPC_KDC_ENCTYPE_AES256_GCM, 0x1ff})
    EXPECT_EQ(MPC_KDC_USER_ALGORITHM(enctype), 0) << enctype;
}

TEST(ProtectedKey, LengthsOfTheFormat) {
  EXPECT_EQ(MPC_KDC_ENCRYPT_OVERHEAD, 28);
  EXPECT_EQ(MPC_KDC_CHECKSUM_LEN, 28);
  EXPECT_EQ(sizeof(MPC_KDC_MARKER), static_cast<size_t>(MPC_KDC_MARKER_LEN));
  EXPECT_EQ(sizeof(MPC_KDC_USER_MARKER), static_cast<size_t>(MPC_KDC_USER_MARKER_LEN));
}

}  // namespace
