// The key algorithm table against what each algorithm is by its standard: the share-material
// layout its rows imply, the C interface's numbers, and the look-ups.
#include "keys/key_algorithms.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "client/mpc_client.h"
#include "common/error.hpp"
#include "wire/codec.hpp"
#include "wire/key_id.hpp"

namespace mpc::wire {
namespace {

TEST(KeyAlgorithms, RowsAreUniqueAndTheEnumNamesEach) {
  std::set<int> ids;
  std::set<std::string> names;
  std::set<std::int32_t> enctypes;
  for (const auto& row : mpc_key_algorithms) {
    EXPECT_TRUE(ids.insert(row.id).second) << row.id;
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    if (row.enctype != 0) {
      EXPECT_TRUE(enctypes.insert(row.enctype).second) << row.enctype;
    }
    EXPECT_EQ(checked_algorithm(static_cast<std::uint8_t>(row.id)), static_cast<KeyAlgorithm>(row.id));
    EXPECT_STREQ(algorithm_name(static_cast<KeyAlgorithm>(row.id)), row.name);
    EXPECT_EQ(parse_algorithm(row.name), static_cast<KeyAlgorithm>(row.id));
    EXPECT_EQ(mpc_key_algorithm_by_name(row.name), &row);
    if (row.enctype != 0) {
      EXPECT_EQ(mpc_key_algorithm_by_enctype(row.enctype), &row);
    }
  }
  EXPECT_EQ(mpc_key_algorithm_by_id(0), nullptr);
  EXPECT_EQ(mpc_key_algorithm_by_id(8), nullptr);
  EXPECT_EQ(mpc_key_algorithm_by_enctype(0), nullptr);
  EXPECT_EQ(mpc_key_algorithm_by_enctype(23), nullptr);  // rc4-hmac: never served
  EXPECT_EQ(mpc_key_algorithm_by_name("aes128-cts"), nullptr);
  EXPECT_EQ(mpc_key_algorithm_by_name("aes128-cts-hmac-sha1-96x"), nullptr);
  EXPECT_EQ(mpc_key_algorithm_by_name(nullptr), nullptr);
  EXPECT_THROW(checked_algorithm(0), FormatError);
  EXPECT_THROW(checked_algorithm(8), FormatError);
}

TEST(KeyAlgorithms, NumbersAreTheCInterfaces) {
  EXPECT_EQ(mpc_key_algorithm_by_id(MPC_AES128)->key_bytes, 16u);
  EXPECT_EQ(mpc_key_algorithm_by_id(MPC_AES256)->key_bytes, 32u);
  EXPECT_EQ(mpc_key_algorithm_by_id(MPC_AES256_GCM)->family, MPC_KEY_FAMILY_GCM);
  EXPECT_EQ(mpc_key_algorithm_by_id(MPC_AES128_CTS_HMAC_SHA1_96)->enctype, 17);
  EXPECT_EQ(mpc_key_algorithm_by_id(MPC_AES256_CTS_HMAC_SHA1_96)->enctype, 18);
  EXPECT_EQ(mpc_key_algorithm_by_id(MPC_AES128_CTS_HMAC_SHA256_128)->enctype, 19);
  EXPECT_EQ(mpc_key_algorithm_by_id(MPC_AES256_CTS_HMAC_SHA384_192)->enctype, 20);
}

// RFC 3962 section 7 and RFC 8009 section 6: checksum types, MAC and PRF lengths; FIPS 197:
// key and round counts.
TEST(KeyAlgorithms, FactsOfEachStandard) {
  struct Expected {
    KeyAlgorithm algorithm;
    std::int32_t cksumtype;
    std::uint32_t key, rounds, mac, prf, state;
  };
  for (const Expected& e : {Expected{KeyAlgorithm::Aes128CtsHmacSha1, 15, 16, 10, 12, 16, 40},
                            Expected{KeyAlgorithm::Aes256CtsHmacSha1, 16, 32, 14, 12, 16, 40},
                            Expected{KeyAlgorithm::Aes128CtsHmacSha256, 19, 16, 10, 16, 32, 64},
                            Expected{KeyAlgorithm::Aes256CtsHmacSha384, 20, 32, 14, 24, 48, 128}}) {
    const auto& row = algorithm_row(e.algorithm);
    EXPECT_EQ(row.cksumtype, e.cksumtype) << row.name;
    EXPECT_EQ(row.key_bytes, e.key) << row.name;
    EXPECT_EQ(row.aes_rounds, e.rounds) << row.name;
    EXPECT_EQ(krb_mac_bytes(e.algorithm), e.mac) << row.name;
    EXPECT_EQ(krb_prf_bytes(e.algorithm), e.prf) << row.name;
    EXPECT_EQ(krb_hmac_state_bytes(e.algorithm), e.state) << row.name;
    EXPECT_TRUE(is_krb_algorithm(e.algorithm));
  }
  EXPECT_FALSE(is_krb_algorithm(KeyAlgorithm::Aes256Gcm));
  EXPECT_THROW(krb_mac_bytes(KeyAlgorithm::Aes128), FormatError);
  EXPECT_EQ(MPC_KEY_MAX_MAC_BYTES, 24);
}

// Each row's material length is what its layout adds up to, offset by offset.
TEST(KeyAlgorithms, MaterialLengthsFollowTheLayout) {
  EXPECT_EQ(material_bytes(KeyAlgorithm::Aes128), 11u * 16);
  EXPECT_EQ(material_bytes(KeyAlgorithm::Aes256), 15u * 16);
  EXPECT_EQ(material_bytes(KeyAlgorithm::Aes256Gcm), kGcmRoundKeyBytes + kGcmHashPowers * 16);
  for (const auto algorithm : {KeyAlgorithm::Aes128CtsHmacSha1, KeyAlgorithm::Aes256CtsHmacSha1,
                               KeyAlgorithm::Aes128CtsHmacSha256, KeyAlgorithm::Aes256CtsHmacSha384}) {
    const std::size_t round_keys = (aes_rounds(algorithm) + 1) * 16;
    const std::size_t state = krb_hmac_state_bytes(algorithm);
    for (std::size_t u = 0; u < kKrbUsageCount; ++u) {
      EXPECT_EQ(krb_ke_offset(algorithm, u), u * (round_keys + 2 * state));
      EXPECT_EQ(krb_ki_offset(algorithm, u), krb_ke_offset(algorithm, u) + round_keys);
      EXPECT_EQ(krb_kc_offset(algorithm, u), krb_ki_offset(algorithm, u) + state);
    }
    const std::size_t prf_part = is_krb_sha2_algorithm(algorithm) ? state : round_keys;
    EXPECT_EQ(material_bytes(algorithm), krb_prf_offset(algorithm) + prf_part) << algorithm_name(algorithm);
  }
  EXPECT_EQ(krb_usage_index(17), 3u);
  EXPECT_FALSE(krb_usage_index(4).has_value());
}

}  // namespace
}  // namespace mpc::wire
