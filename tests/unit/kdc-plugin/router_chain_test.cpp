// tests/unit/kdc-plugin/router_chain_test.cpp - the PAC checksum the crypto router makes ahead
// (kdc-plugin/router/checksum_chain.h), without an engine: it is handed out only for exactly
// its server checksum, key and usage, once; once handed out it awaits its check and blocks a
// new pair; clearing wipes it and keeps a pause of chaining.

#include <cstdint>
#include <cstring>

#include <gtest/gtest.h>

#include "checksum_chain.h"

namespace {

mpc_kdb_key_id key_of(std::uint32_t kvno) {
  mpc_kdb_key_id key{};
  std::memset(key.name_hash, 0x5a, sizeof(key.name_hash));
  key.kvno = kvno;
  key.enctype = MPC_KDC_ENCTYPE_AES256_GCM;
  return key;
}

struct Pair {
  std::uint8_t server[MPC_KDC_CHECKSUM_LEN];
  std::uint8_t kdc[MPC_KDC_CHECKSUM_LEN];
  Pair() {
    for (std::size_t i = 0; i < sizeof(server); ++i) {
      server[i] = static_cast<std::uint8_t>(i + 1);
      kdc[i] = static_cast<std::uint8_t>(0x80 | i);
    }
  }
};

TEST(ChecksumChain, ServesTheKdcChecksumOnlyForItsServerChecksumKeyAndUsage) {
  checksum_chain chain{};
  const Pair pair;
  const mpc_kdb_key_id key = key_of(3);
  EXPECT_TRUE(checksum_chain_can_hold(&chain, 1000));
  checksum_chain_hold(&chain, &key, pair.server, pair.kdc);
  std::uint8_t out[MPC_KDC_CHECKSUM_LEN] = {};

  std::uint8_t other[MPC_KDC_CHECKSUM_LEN];
  std::memcpy(other, pair.server, sizeof(other));
  other[27] ^= 1;
  EXPECT_FALSE(checksum_chain_serve(&chain, &key, KRB5_KEYUSAGE_APP_DATA_CKSUM, other, sizeof(other), out));
  EXPECT_FALSE(checksum_chain_serve(&chain, &key, KRB5_KEYUSAGE_APP_DATA_CKSUM, pair.server, 27, out));
  EXPECT_FALSE(checksum_chain_serve(&chain, &key, 64, pair.server, sizeof(pair.server), out));
  const mpc_kdb_key_id later = key_of(4);
  EXPECT_FALSE(checksum_chain_serve(&chain, &later, KRB5_KEYUSAGE_APP_DATA_CKSUM, pair.server,
                                    sizeof(pair.server), out));
  EXPECT_FALSE(checksum_chain_awaits_check(&chain, &key));
  for (std::uint8_t byte : out) EXPECT_EQ(byte, 0);

  ASSERT_TRUE(checksum_chain_serve(&chain, &key, KRB5_KEYUSAGE_APP_DATA_CKSUM, pair.server, sizeof(pair.server), out));
  EXPECT_EQ(std::memcmp(out, pair.kdc, sizeof(out)), 0);
  // Once: a second ask is made by the engine, as any other.
  EXPECT_FALSE(checksum_chain_serve(&chain, &key, KRB5_KEYUSAGE_APP_DATA_CKSUM, pair.server, sizeof(pair.server), out));
}

TEST(ChecksumChain, AServedChecksumAwaitsItsCheckAndBlocksANewPair) {
  checksum_chain chain{};
  const Pair pair;
  const mpc_kdb_key_id key = key_of(3), other = key_of(4);
  checksum_chain_hold(&chain, &key, pair.server, pair.kdc);
  // Held but not handed out: it is in nothing, so a new pair may replace it.
  EXPECT_TRUE(checksum_chain_can_hold(&chain, 1000));
  std::uint8_t out[MPC_KDC_CHECKSUM_LEN];
  ASSERT_TRUE(checksum_chain_serve(&chain, &key, KRB5_KEYUSAGE_APP_DATA_CKSUM, pair.server, sizeof(pair.server), out));
  EXPECT_TRUE(checksum_chain_awaits_check(&chain, &key));
  EXPECT_FALSE(checksum_chain_awaits_check(&chain, &other));
  EXPECT_FALSE(checksum_chain_can_hold(&chain, 1000));

  checksum_chain_clear(&chain);
  EXPECT_EQ(chain.state, CHAIN_EMPTY);
  EXPECT_FALSE(checksum_chain_awaits_check(&chain, &key));
  EXPECT_TRUE(checksum_chain_can_hold(&chain, 1000));
  const checksum_chain empty{};
  EXPECT_EQ(std::memcmp(chain.kdc_checksum, empty.kdc_checksum, sizeof(chain.kdc_checksum)), 0);
  EXPECT_EQ(std::memcmp(chain.server_checksum, empty.server_checksum, sizeof(chain.server_checksum)), 0);
}

TEST(ChecksumChain, APauseLastsUntilItsTimeAndOutlivesAClear) {
  checksum_chain chain{};
  chain.paused_until_ms = 5000;
  EXPECT_FALSE(checksum_chain_can_hold(&chain, 4999));
  checksum_chain_clear(&chain);
  EXPECT_FALSE(checksum_chain_can_hold(&chain, 4999));
  EXPECT_TRUE(checksum_chain_can_hold(&chain, 5000));
}

}  // namespace
