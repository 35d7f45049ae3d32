// Key handles (kdc-plugin/kdb/handle.h): known answers computed independently with
// Python's hashlib/hmac, round trips, and every way a handle must be refused.
#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "handle.h"

namespace {

using Bytes = std::vector<uint8_t>;

Bytes from_hex(const std::string &hex) {
  Bytes out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::array<uint8_t, MPC_KDB_HANDLE_KEY_LEN> key_of(uint8_t start, uint8_t step) {
  std::array<uint8_t, MPC_KDB_HANDLE_KEY_LEN> key{};
  for (size_t i = 0; i < key.size(); i++) key[i] = static_cast<uint8_t>(start + step * i);
  return key;
}

mpc_kdb_key_id id_for(const std::string &name, uint32_t kvno, int32_t enctype) {
  mpc_kdb_key_id id{};
  EXPECT_EQ(mpc_kdb_name_hash(name.data(), name.size(), id.name_hash), 0);
  id.kvno = kvno;
  id.enctype = enctype;
  return id;
}

Bytes encode(const std::array<uint8_t, MPC_KDB_HANDLE_KEY_LEN> &key, const mpc_kdb_key_id &id) {
  Bytes out(MPC_KDB_HANDLE_LEN);
  EXPECT_EQ(mpc_kdb_handle_encode(key.data(), &id, out.data()), 0);
  return out;
}

// Re-computes the tag of a (modified) body, as only a holder of the key could.
void retag(const std::array<uint8_t, MPC_KDB_HANDLE_KEY_LEN> &key, Bytes &handle) {
  unsigned int len = 0;
  ASSERT_NE(HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), handle.data(), MPC_KDB_HANDLE_TAG_OFFSET,
                 handle.data() + MPC_KDB_HANDLE_TAG_OFFSET, &len),
            nullptr);
  ASSERT_EQ(len, static_cast<unsigned int>(MPC_KDB_HANDLE_TAG_LEN));
}

TEST(KdbHandle, SizesMatchTheirFunctionTwins) {
  EXPECT_EQ(mpc_kdb_handle_len(), static_cast<size_t>(MPC_KDB_HANDLE_LEN));
  EXPECT_EQ(mpc_kdb_handle_key_len(), static_cast<size_t>(MPC_KDB_HANDLE_KEY_LEN));
  // Longer than every real key (aes256/camellia256: 32), so libk5crypto refuses it.
  EXPECT_GT(MPC_KDB_HANDLE_LEN, 32);
}

TEST(KdbHandle, NameHashKnownAnswers) {
  uint8_t hash[MPC_KDB_NAME_HASH_LEN];
  const std::string name = "krbtgt/MPC.TEST@MPC.TEST";
  ASSERT_EQ(mpc_kdb_name_hash(name.data(), name.size(), hash), 0);
  EXPECT_EQ(Bytes(hash, hash + sizeof(hash)), from_hex("31a623974f190587b46458fd7e44cf59"));
  ASSERT_EQ(mpc_kdb_name_hash(nullptr, 0, hash), 0);
  EXPECT_EQ(Bytes(hash, hash + sizeof(hash)), from_hex("38e10b4b6ed99e2f6ee84ddfb7ae1fe4"));
  EXPECT_EQ(mpc_kdb_name_hash(nullptr, 3, hash), -1);
}

TEST(KdbHandle, EncodeKnownAnswers) {
  // python3: body = magic|1|0,0,0|kvno BE|enctype BE|sha256(prefix\0 name)[:16];
  //          handle = body | hmac.new(key, body, sha256)
  EXPECT_EQ(encode(key_of(0, 1), id_for("krbtgt/MPC.TEST@MPC.TEST", 2, 18)),
            from_hex("8af74d4801000000000000020000001231a623974f190587b46458fd7e44cf59"
                     "022bd912e504d456b37d14d9a21d67ee6b98183f75a7d4f0ae1c5d4d23a6f277"));
  EXPECT_EQ(encode(key_of(0xff, 0), id_for("", 0xfffffffeu, -133)),
            from_hex("8af74d4801000000fffffffeffffff7b38e10b4b6ed99e2f6ee84ddfb7ae1fe4"
                     "aabc99e7bebfeb804ff393619944d1863d0d544023f5ac24d86eb4620b1e5957"));
}

TEST(KdbHandle, VerifyReturnsTheKeyId) {
  const auto key = key_of(7, 13);
  const auto id = id_for("host/a.example@EXAMPLE", 70000, -1);
  const Bytes handle = encode(key, id);
  mpc_kdb_key_id parsed{};
  ASSERT_EQ(mpc_kdb_handle_verify(key.data(), handle.data(), handle.size(), &parsed), MPC_KDB_HANDLE_OK);
  EXPECT_EQ(parsed.kvno, 70000u);
  EXPECT_EQ(parsed.enctype, -1);
  EXPECT_EQ(0, std::memcmp(parsed.name_hash, id.name_hash, MPC_KDB_NAME_HASH_LEN));
  EXPECT_EQ(mpc_kdb_handle_verify(key.data(), handle.data(), handle.size(), nullptr), MPC_KDB_HANDLE_OK);
  EXPECT_TRUE(mpc_kdb_handle_is_candidate(handle.data(), handle.size()));
}

TEST(KdbHandle, DistinctKeysGiveDistinctHandles) {
  const auto id = id_for("u@R", 1, 17);
  EXPECT_NE(encode(key_of(1, 1), id), encode(key_of(2, 1), id));
  EXPECT_NE(encode(key_of(1, 1), id), encode(key_of(1, 1), id_for("u@R", 2, 17)));
  EXPECT_NE(encode(key_of(1, 1), id), encode(key_of(1, 1), id_for("u@R", 1, 18)));
  EXPECT_NE(encode(key_of(1, 1), id), encode(key_of(1, 1), id_for("v@R", 1, 17)));
}

TEST(KdbHandle, EveryFlippedBitIsRefused) {
  const auto key = key_of(3, 5);
  const Bytes handle = encode(key, id_for("krbtgt/R@R", 1, 18));
  for (size_t byte = 0; byte < handle.size(); byte++) {
    for (int bit = 0; bit < 8; bit++) {
      Bytes tampered = handle;
      tampered[byte] ^= static_cast<uint8_t>(1u << bit);
      mpc_kdb_key_id parsed{};
      parsed.kvno = 99;
      const auto status = mpc_kdb_handle_verify(key.data(), tampered.data(), tampered.size(), &parsed);
      ASSERT_NE(status, MPC_KDB_HANDLE_OK) << "byte " << byte << " bit " << bit;
      EXPECT_EQ(parsed.kvno, 0u) << "the id is zeroed on failure";
      if (byte < 4) EXPECT_EQ(status, MPC_KDB_HANDLE_BAD_MAGIC);
      else if (byte == 4) EXPECT_EQ(status, MPC_KDB_HANDLE_BAD_VERSION);
      else EXPECT_EQ(status, MPC_KDB_HANDLE_BAD_TAG);
    }
  }
}

TEST(KdbHandle, WrongKeyIsRefused) {
  const Bytes handle = encode(key_of(3, 5), id_for("krbtgt/R@R", 1, 18));
  const auto other = key_of(3, 6);
  EXPECT_EQ(mpc_kdb_handle_verify(other.data(), handle.data(), handle.size(), nullptr), MPC_KDB_HANDLE_BAD_TAG);
  EXPECT_EQ(mpc_kdb_handle_verify(nullptr, handle.data(), handle.size(), nullptr), MPC_KDB_HANDLE_CRYPTO);
}

TEST(KdbHandle, WrongLengthsAreRefused) {
  const auto key = key_of(9, 9);
  Bytes handle = encode(key, id_for("a@B", 1, 17));
  EXPECT_EQ(mpc_kdb_handle_verify(key.data(), handle.data(), handle.size() - 1, nullptr), MPC_KDB_HANDLE_BAD_LENGTH);
  EXPECT_EQ(mpc_kdb_handle_verify(key.data(), handle.data(), 0, nullptr), MPC_KDB_HANDLE_BAD_LENGTH);
  EXPECT_EQ(mpc_kdb_handle_verify(key.data(), nullptr, MPC_KDB_HANDLE_LEN, nullptr), MPC_KDB_HANDLE_BAD_LENGTH);
  handle.push_back(0);
  EXPECT_EQ(mpc_kdb_handle_verify(key.data(), handle.data(), handle.size(), nullptr), MPC_KDB_HANDLE_BAD_LENGTH);
  EXPECT_FALSE(mpc_kdb_handle_is_candidate(handle.data(), handle.size()));
  EXPECT_FALSE(mpc_kdb_handle_is_candidate(handle.data(), MPC_KDB_HANDLE_LEN - 1));
  EXPECT_FALSE(mpc_kdb_handle_is_candidate(nullptr, MPC_KDB_HANDLE_LEN));
}

TEST(KdbHandle, AuthenticatedButMalformedFieldsAreRefused) {
  const auto key = key_of(4, 4);
  Bytes handle = encode(key, id_for("a@B", 1, 17));
  handle[5] = 1;  // reserved
  retag(key, handle);
  EXPECT_EQ(mpc_kdb_handle_verify(key.data(), handle.data(), handle.size(), nullptr), MPC_KDB_HANDLE_BAD_FIELD);
  handle[5] = 0;
  handle[4] = 2;  // a future version, even correctly tagged
  retag(key, handle);
  EXPECT_EQ(mpc_kdb_handle_verify(key.data(), handle.data(), handle.size(), nullptr), MPC_KDB_HANDLE_BAD_VERSION);
}

mpc_kdb_key_id combined_id(const std::string &pepper, uint32_t mask_len) {
  mpc_kdb_key_id id = id_for("alice@EXAMPLE", 3, 18);
  id.combine.enctype = 17;
  std::snprintf(id.combine.pepper, sizeof(id.combine.pepper), "%s", pepper.c_str());
  for (uint32_t i = 0; i < mask_len; i++) id.combine.mask[i] = static_cast<uint8_t>(0xa0 + i);
  id.combine.mask_len = mask_len;
  return id;
}

Bytes encode_combined(const std::array<uint8_t, MPC_KDB_HANDLE_KEY_LEN> &key, const mpc_kdb_key_id &id) {
  Bytes out(MPC_KDB_COMBINED_HANDLE_LEN);
  EXPECT_EQ(mpc_kdb_combined_handle_encode(key.data(), &id, out.data()), 0);
  return out;
}

TEST(KdbCombinedHandle, RoundTripsTheStoredKeyAndItsCf2Part) {
  const auto key = key_of(5, 3);
  const mpc_kdb_key_id id = combined_id("challengelongterm", 16);
  const Bytes handle = encode_combined(key, id);
  EXPECT_TRUE(mpc_kdb_handle_is_candidate(handle.data(), handle.size()));
  mpc_kdb_key_id parsed{};
  ASSERT_EQ(mpc_kdb_handle_verify(key.data(), handle.data(), handle.size(), &parsed), MPC_KDB_HANDLE_OK);
  EXPECT_EQ(parsed.kvno, 3u);
  EXPECT_EQ(parsed.enctype, 18);
  EXPECT_EQ(0, std::memcmp(parsed.name_hash, id.name_hash, MPC_KDB_NAME_HASH_LEN));
  EXPECT_EQ(parsed.combine.enctype, 17);
  EXPECT_STREQ(parsed.combine.pepper, "challengelongterm");
  EXPECT_EQ(parsed.combine.mask_len, 16u);
  EXPECT_EQ(0, std::memcmp(parsed.combine.mask, id.combine.mask, 16));
  // A plain handle of the same key verifies with no combined part.
  const Bytes plain = encode(key, id_for("alice@EXAMPLE", 3, 18));
  ASSERT_EQ(mpc_kdb_handle_verify(key.data(), plain.data(), plain.size(), &parsed), MPC_KDB_HANDLE_OK);
  EXPECT_EQ(parsed.combine.enctype, 0);
  EXPECT_EQ(parsed.combine.mask_len, 0u);
}

TEST(KdbCombinedHandle, EveryFlippedBitIsRefused) {
  const auto key = key_of(6, 1);
  const Bytes handle = encode_combined(key, combined_id("replykey", 32));
  for (size_t byte = 0; byte < handle.size(); byte++) {
    Bytes tampered = handle;
    tampered[byte] ^= 0x10;
    mpc_kdb_key_id parsed{};
    EXPECT_NE(mpc_kdb_handle_verify(key.data(), tampered.data(), tampered.size(), &parsed), MPC_KDB_HANDLE_OK)
        << "byte " << byte;
    EXPECT_EQ(parsed.combine.mask_len, 0u);
  }
  // A plain handle's magic on a combined handle's length, and the reverse, are not handles.
  Bytes swapped = handle;
  swapped[3] = 'H';
  EXPECT_FALSE(mpc_kdb_handle_is_candidate(swapped.data(), swapped.size()));
  Bytes truncated(handle.begin(), handle.begin() + MPC_KDB_HANDLE_LEN);
  EXPECT_FALSE(mpc_kdb_handle_is_candidate(truncated.data(), truncated.size()));
}

TEST(KdbCombinedHandle, EncodeRefusesIncompleteIds) {
  const auto key = key_of(1, 2);
  Bytes out(MPC_KDB_COMBINED_HANDLE_LEN, 0x55);
  mpc_kdb_key_id no_combine = id_for("a@B", 1, 17);
  EXPECT_EQ(mpc_kdb_combined_handle_encode(key.data(), &no_combine, out.data()), -1);
  EXPECT_EQ(out, Bytes(MPC_KDB_COMBINED_HANDLE_LEN, 0));
  const mpc_kdb_key_id no_pepper = combined_id("", 16);
  EXPECT_EQ(mpc_kdb_combined_handle_encode(key.data(), &no_pepper, out.data()), -1);
  const mpc_kdb_key_id odd_mask = combined_id("replykey", 24);
  EXPECT_EQ(mpc_kdb_combined_handle_encode(key.data(), &odd_mask, out.data()), -1);
}

TEST(KdbHandle, StoredKeyFormatNeverLooksLikeAHandle) {
  // libkdb5 stores a key as a 2-byte little-endian length then the ciphertext; read
  // that way the handle magic is a negative length, which the stock decryption rejects.
  const Bytes handle = encode(key_of(0, 1), id_for("a@B", 1, 17));
  const int16_t length = static_cast<int16_t>(handle[0] | (handle[1] << 8));
  EXPECT_LT(length, 0);
}

TEST(KdbHandle, ZeroedOutputOnBadArguments) {
  Bytes out(MPC_KDB_HANDLE_LEN, 0xAA);
  const auto key = key_of(0, 1);
  EXPECT_EQ(mpc_kdb_handle_encode(key.data(), nullptr, out.data()), -1);
  EXPECT_EQ(out, Bytes(MPC_KDB_HANDLE_LEN, 0));
}

TEST(KdbHandle, StatusStringsAreDistinct) {
  std::vector<std::string> seen;
  for (int s = MPC_KDB_HANDLE_OK; s <= MPC_KDB_HANDLE_CRYPTO; s++) {
    std::string text = mpc_kdb_handle_status_string(static_cast<mpc_kdb_handle_status>(s));
    for (const auto &other : seen) EXPECT_NE(text, other);
    seen.push_back(text);
  }
}

}  // namespace
