// The C interface's argument checks for the GCM calls and the algorithm rules, on a handle
// whose servers are never reached: every bad argument is MPC_EINVAL with a message, before
// any connection is attempted, and outputs are left alone.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mpc_client.h"
#include "support/temp_dir.hpp"

namespace {

class GcmArguments : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto config = directory_ / "cluster.toml";
    std::ofstream out(config);
    // The key file does not exist: any call that gets past its argument checks fails when it
    // tries to open its connections, without a network.
    out << "protocol = \"rss3\"\nsecret_key_file = \"missing.key\"\n";
    const char* keys[] = {"N-is}5Ty!*^nVI+{14^mz(]jdNN&RA}mOY[xkAO]", "Z7747x3WVR*l]mFtqSRzd+x<8B)E.>Cr3Zhh5VE}",
                          "Lh(R6V?O0}M$Ne$u+51?SHs?vXe5f>WrOat0lSiy"};
    for (int party = 1; party <= 3; ++party)
      out << "[[servers]]\nparty = " << party << "\nendpoint = \"inproc://mpc-client-test-" << party
          << "\"\npublic_key = \"" << keys[party - 1] << "\"\n";
    out.close();
    char error[256] = {0};
    ASSERT_EQ(mpc_client_open(config.c_str(), &client_, error, sizeof error), MPC_OK) << error;
  }
  void TearDown() override {
    mpc_client_close(client_);
  }
  void expect_einval(int rc, const char* what) {
    EXPECT_EQ(rc, MPC_EINVAL) << what;
    EXPECT_STRNE(mpc_client_last_error(client_), "") << what;
  }

  mpc::test_support::TempDir temp_{"mpc-client-test"};
  const std::filesystem::path directory_ = temp_.path();
  mpc_client* client_ = nullptr;
};

TEST_F(GcmArguments, Prefetch) {
  std::vector<uint8_t> nonces(12 * 70000, 0x55);
  std::vector<uint8_t> keystream(16 * 8, 0x66);
  EXPECT_EQ(mpc_client_gcm_prefetch(nullptr, "k", 1, 1, 0, nonces.data(), nullptr), MPC_EINVAL);
  expect_einval(mpc_client_gcm_prefetch(client_, nullptr, 1, 1, 0, nonces.data(), nullptr), "NULL name");
  expect_einval(mpc_client_gcm_prefetch(client_, "bad name", 1, 1, 0, nonces.data(), nullptr), "bad name");
  expect_einval(mpc_client_gcm_prefetch(client_, "k", 1, 0, 0, nonces.data(), nullptr), "zero count");
  expect_einval(mpc_client_gcm_prefetch(client_, "k", 1, 65537, 0, nonces.data(), nullptr), "count over 65536");
  expect_einval(mpc_client_gcm_prefetch(client_, "k", 1, 1, 4097, nonces.data(), keystream.data()), "bpn over 4096");
  expect_einval(mpc_client_gcm_prefetch(client_, "k", 1, 65536, 4096, nonces.data(), keystream.data()),
                "product over the request ceiling");
  expect_einval(mpc_client_gcm_prefetch(client_, "k", 1, 1, 0, nullptr, nullptr), "NULL nonces");
  expect_einval(mpc_client_gcm_prefetch(client_, "k", 1, 1, 1, nonces.data(), nullptr), "NULL keystream");
  expect_einval(mpc_client_gcm_prefetch(client_, "k", 1, 2, 1, keystream.data(), keystream.data() + 8),
                "overlapping outputs");
  // Valid arguments get as far as opening the connections (MPC_ECONFIG: no key file);
  // nothing is written on failure.
  EXPECT_EQ(mpc_client_gcm_prefetch(client_, "k", 1, 2, 4, nonces.data(), keystream.data()), MPC_ECONFIG);
  EXPECT_EQ(mpc_client_gcm_prefetch(client_, "k", 1, 65536, 0, nonces.data(), nullptr), MPC_ECONFIG);
  EXPECT_EQ(nonces[0], 0x55);
  EXPECT_EQ(keystream[0], 0x66);
}

TEST_F(GcmArguments, Tag) {
  const uint8_t nonce[12] = {1};
  std::vector<uint8_t> text(16 * 1024);
  uint8_t tag[16];
  std::fill(std::begin(tag), std::end(tag), 0x77);
  EXPECT_EQ(mpc_client_gcm_tag(nullptr, "k", 1, nonce, nullptr, 0, nullptr, 0, tag), MPC_EINVAL);
  expect_einval(mpc_client_gcm_tag(client_, nullptr, 1, nonce, nullptr, 0, nullptr, 0, tag), "NULL name");
  expect_einval(mpc_client_gcm_tag(client_, "k", 1, nullptr, nullptr, 0, nullptr, 0, tag), "NULL nonce");
  expect_einval(mpc_client_gcm_tag(client_, "k", 1, nonce, nullptr, 1, nullptr, 0, tag), "NULL aad");
  expect_einval(mpc_client_gcm_tag(client_, "k", 1, nonce, nullptr, 0, nullptr, 5, tag), "NULL ciphertext");
  expect_einval(mpc_client_gcm_tag(client_, "k", 1, nonce, nullptr, 0, nullptr, 0, nullptr), "NULL tag");
  // 1024 GHASH blocks is the most: 1023 blocks of text fit, one byte more does not.
  expect_einval(mpc_client_gcm_tag(client_, "k", 1, nonce, text.data(), 1, text.data(), 16 * 1022 + 1, tag),
                "over the hash block limit");
  expect_einval(mpc_client_gcm_tag(client_, "k", 1, nonce, nullptr, 0, text.data(), SIZE_MAX, tag),
                "huge length");
  EXPECT_EQ(mpc_client_gcm_tag(client_, "k", 1, nonce, nullptr, 0, text.data(), 16 * 1023, tag), MPC_ECONFIG);
  EXPECT_EQ(mpc_client_gcm_tag(client_, "k", 1, nonce, nullptr, 0, nullptr, 0, tag), MPC_ECONFIG);
  EXPECT_EQ(tag[0], 0x77);
}

TEST_F(GcmArguments, Open) {
  const uint8_t nonce[12] = {1};
  const uint8_t tag[16] = {2};
  std::vector<uint8_t> ciphertext(64, 0x33);
  std::vector<uint8_t> plaintext(64, 0x44);
  EXPECT_EQ(mpc_client_gcm_open(nullptr, "k", 1, nonce, nullptr, 0, ciphertext.data(), 64, tag, plaintext.data()),
            MPC_EINVAL);
  expect_einval(mpc_client_gcm_open(client_, "k", 1, nullptr, nullptr, 0, ciphertext.data(), 64, tag, plaintext.data()),
                "NULL nonce");
  expect_einval(mpc_client_gcm_open(client_, "k", 1, nonce, nullptr, 3, ciphertext.data(), 64, tag, plaintext.data()),
                "NULL aad");
  expect_einval(mpc_client_gcm_open(client_, "k", 1, nonce, nullptr, 0, nullptr, 64, tag, plaintext.data()),
                "NULL ciphertext");
  expect_einval(mpc_client_gcm_open(client_, "k", 1, nonce, nullptr, 0, ciphertext.data(), 64, nullptr, plaintext.data()),
                "NULL tag");
  expect_einval(mpc_client_gcm_open(client_, "k", 1, nonce, nullptr, 0, ciphertext.data(), 64, tag, nullptr),
                "NULL plaintext");
  expect_einval(mpc_client_gcm_open(client_, "k", 1, nonce, nullptr, 0, ciphertext.data(), 32, tag, ciphertext.data() + 8),
                "partly overlapping buffers");
  expect_einval(mpc_client_gcm_open(client_, "k", 1, nonce, ciphertext.data(), SIZE_MAX - 3, ciphertext.data(), 64, tag,
                                    plaintext.data()),
                "huge aad");
  // In place, an empty text with NULL buffers (a GMAC check), and plain valid calls pass
  // the checks (MPC_ECONFIG: no key file); a failure other than a bad tag leaves the output
  // as it was.
  EXPECT_EQ(mpc_client_gcm_open(client_, "k", 1, nonce, nullptr, 0, ciphertext.data(), 64, tag, ciphertext.data()),
            MPC_ECONFIG);
  EXPECT_EQ(mpc_client_gcm_open(client_, "k", 1, nonce, nullptr, 0, nullptr, 0, tag, nullptr), MPC_ECONFIG);
  EXPECT_EQ(mpc_client_gcm_open(client_, "k", 1, nonce, nullptr, 0, ciphertext.data(), 64, tag, plaintext.data()),
            MPC_ECONFIG);
  EXPECT_EQ(ciphertext, std::vector<uint8_t>(64, 0x33));
  EXPECT_EQ(plaintext, std::vector<uint8_t>(64, 0x44));
}

TEST_F(GcmArguments, GcmKeysServeOnlyTheGcmCalls) {
  const uint8_t counter[16] = {0};
  std::vector<uint8_t> in(32), out(32);
  expect_einval(mpc_client_keystream(client_, "k", 1, MPC_AES256_GCM, counter, 2, out.data()), "keystream");
  expect_einval(mpc_client_ecb_encrypt(client_, "k", 1, MPC_AES256_GCM, in.data(), 32, out.data()), "ecb encrypt");
  expect_einval(mpc_client_ecb_decrypt(client_, "k", 1, MPC_AES256_GCM, in.data(), 32, out.data()), "ecb decrypt");
  expect_einval(mpc_client_keystream(client_, "k", 1, 4, counter, 2, out.data()), "unknown algorithm");
  EXPECT_EQ(mpc_client_keystream(client_, "k", 1, MPC_AES256, counter, 2, out.data()), MPC_ECONFIG);
}

TEST_F(GcmArguments, KrbCallsCheckTheirArguments) {
  const int alg = MPC_AES256_CTS_HMAC_SHA1_96;
  const uint8_t confounder[MPC_KRB_CONFOUNDER_BYTES] = {9};
  std::vector<uint8_t> in(MPC_KRB_MAX_DATA_BYTES + 1, 0x11);
  std::vector<uint8_t> out(MPC_KRB_MAX_DATA_BYTES + 64, 0x22);
  EXPECT_EQ(mpc_client_krb_encrypt(nullptr, "k", 1, alg, 2, confounder, in.data(), 4, out.data()), MPC_EINVAL);
  expect_einval(mpc_client_krb_encrypt(client_, nullptr, 1, alg, 2, confounder, in.data(), 4, out.data()), "NULL name");
  for (uint32_t usage : {0u, 4u, 16u, 18u, 55u, 57u, 0xffffffffu}) {
    expect_einval(mpc_client_krb_encrypt(client_, "k", 1, alg, usage, confounder, in.data(), 4, out.data()), "usage");
    expect_einval(mpc_client_krb_decrypt(client_, "k", 1, alg, usage, in.data(), 40, out.data()), "usage");
    expect_einval(mpc_client_krb_checksum(client_, "k", 1, alg, usage, in.data(), 4, out.data()), "usage");
  }
  for (int wrong : {0, int{MPC_AES128}, int{MPC_AES256}, int{MPC_AES256_GCM}, 8}) {
    expect_einval(mpc_client_krb_encrypt(client_, "k", 1, wrong, 2, confounder, in.data(), 4, out.data()), "algorithm");
    expect_einval(mpc_client_krb_decrypt(client_, "k", 1, wrong, 2, in.data(), 40, out.data()), "algorithm");
    expect_einval(mpc_client_krb_checksum(client_, "k", 1, wrong, 17, in.data(), 4, out.data()), "algorithm");
  }
  expect_einval(mpc_client_krb_encrypt(client_, "k", 1, alg, 2, nullptr, in.data(), 4, out.data()), "NULL confounder");
  expect_einval(mpc_client_krb_encrypt(client_, "k", 1, alg, 2, confounder, nullptr, 4, out.data()), "NULL plaintext");
  expect_einval(mpc_client_krb_encrypt(client_, "k", 1, alg, 2, confounder, in.data(), 4, nullptr), "NULL ciphertext");
  expect_einval(mpc_client_krb_encrypt(client_, "k", 1, alg, 2, confounder, in.data(),
                                       MPC_KRB_MAX_DATA_BYTES - MPC_KRB_CONFOUNDER_BYTES + 1, out.data()),
                "plaintext over the limit");
  expect_einval(mpc_client_krb_decrypt(client_, "k", 1, alg, 2, in.data(), 27, out.data()), "short ciphertext");
  expect_einval(mpc_client_krb_decrypt(client_, "k", 1, alg, 2, nullptr, 0, nullptr), "empty ciphertext");
  expect_einval(mpc_client_krb_decrypt(client_, "k", 1, alg, 2, in.data(), MPC_KRB_MAX_DATA_BYTES + 1, out.data()),
                "ciphertext over the limit");
  expect_einval(mpc_client_krb_decrypt(client_, "k", 1, alg, 2, in.data(), 29, nullptr), "NULL plaintext");
  expect_einval(mpc_client_krb_checksum(client_, "k", 1, alg, 17, in.data(), MPC_KRB_MAX_DATA_BYTES + 1, out.data()),
                "message over the limit");
  expect_einval(mpc_client_krb_checksum(client_, "k", 1, alg, 17, nullptr, 3, out.data()), "NULL data");
  expect_einval(mpc_client_krb_checksum(client_, "k", 1, alg, 17, in.data(), 3, nullptr), "NULL checksum");
  // Usages served for other operations only.
  expect_einval(mpc_client_krb_encrypt(client_, "k", 1, alg, 1, confounder, in.data(), 4, out.data()),
                "encrypt under the preauth usage");
  expect_einval(mpc_client_krb_decrypt(client_, "k", 1, alg, 3, in.data(), 28, out.data()), "decrypt an AS-REP");
  expect_einval(mpc_client_krb_checksum(client_, "k", 1, alg, 2, in.data(), 3, out.data()), "checksum usage 2");
  // KRB-FX-CF2 jobs: the combine argument and the uses krb5kdc makes of a combined key.
  const uint8_t mask[32] = {7};
  const mpc_krb_combine challenge = {MPC_AES256_CTS_HMAC_SHA1_96, "challengelongterm", mask, 32};
  const mpc_krb_combine reply = {MPC_AES128_CTS_HMAC_SHA256_128, "replykey", mask, 16};
  expect_einval(mpc_client_krb_cf2_decrypt(client_, "k", 1, alg, nullptr, 54, in.data(), 40, out.data()), "NULL combine");
  for (const mpc_krb_combine& bad : {mpc_krb_combine{MPC_AES256, "replykey", mask, 32},
                                     mpc_krb_combine{MPC_AES256_CTS_HMAC_SHA1_96, "replykey", mask, 16},
                                     mpc_krb_combine{MPC_AES256_CTS_HMAC_SHA1_96, nullptr, mask, 32},
                                     mpc_krb_combine{MPC_AES256_CTS_HMAC_SHA1_96, "replykey", nullptr, 32}})
    expect_einval(mpc_client_krb_cf2_checksum(client_, "k", 1, alg, &bad, 56, in.data(), 3, out.data()), "combine");
  expect_einval(mpc_client_krb_cf2_encrypt(client_, "k", 1, alg, &challenge, 54, confounder, in.data(), 4, out.data()),
                "forging the client's challenge");
  expect_einval(mpc_client_krb_cf2_decrypt(client_, "k", 1, alg, &challenge, 55, in.data(), 40, out.data()),
                "decrypting the KDC's challenge");
  expect_einval(mpc_client_krb_cf2_encrypt(client_, "k", 1, alg, &reply, 55, confounder, in.data(), 4, out.data()),
                "another pepper's usage");
  expect_einval(mpc_client_krb_cf2_decrypt(client_, "k", 1, alg, &reply, 3, in.data(), 40, out.data()),
                "decrypting an AS-REP");
  // The combined key's MAC length applies: 16 + 16 bytes is too short for aes128-sha256.
  expect_einval(mpc_client_krb_cf2_decrypt(client_, "k", 1, alg, &challenge, 54, in.data(), 27, out.data()),
                "short ciphertext");
  // Valid calls, at the limits and with empty inputs as NULL, get as far as the connections
  // (MPC_ECONFIG: no key file) and write nothing.
  EXPECT_EQ(mpc_client_krb_encrypt(client_, "k", 1, alg, 2, confounder, nullptr, 0, out.data()), MPC_ECONFIG);
  EXPECT_EQ(mpc_client_krb_encrypt(client_, "k", 1, MPC_AES128_CTS_HMAC_SHA1_96, 3, confounder, in.data(),
                                   MPC_KRB_MAX_DATA_BYTES - MPC_KRB_CONFOUNDER_BYTES, out.data()),
            MPC_ECONFIG);
  EXPECT_EQ(mpc_client_krb_decrypt(client_, "k", 1, alg, 2, in.data(), 28, nullptr), MPC_ECONFIG);
  EXPECT_EQ(mpc_client_krb_decrypt(client_, "k", 1, alg, 1, in.data(), MPC_KRB_MAX_DATA_BYTES, out.data()), MPC_ECONFIG);
  EXPECT_EQ(mpc_client_krb_checksum(client_, "k", 1, alg, 17, nullptr, 0, out.data()), MPC_ECONFIG);
  EXPECT_EQ(mpc_client_krb_cf2_decrypt(client_, "k", 1, alg, &challenge, 54, in.data(), 28, out.data()), MPC_ECONFIG);
  EXPECT_EQ(mpc_client_krb_cf2_checksum(client_, "k", 1, alg, &reply, 56, nullptr, 0, out.data()), MPC_ECONFIG);
  EXPECT_EQ(mpc_client_krb_cf2_encrypt(client_, "k", 1, alg, &reply, 3, confounder, nullptr, 0, out.data()),
            MPC_ECONFIG);
  EXPECT_EQ(out, std::vector<uint8_t>(MPC_KRB_MAX_DATA_BYTES + 64, 0x22));
}

TEST_F(GcmArguments, KrbKeysServeOnlyTheKrbCalls) {
  const uint8_t counter[16] = {0};
  const uint8_t nonce[MPC_GCM_NONCE_BYTES] = {0};
  std::vector<uint8_t> in(32), out(32);
  for (int alg : {int{MPC_AES128_CTS_HMAC_SHA1_96}, int{MPC_AES256_CTS_HMAC_SHA1_96}}) {
    expect_einval(mpc_client_keystream(client_, "k", 1, alg, counter, 2, out.data()), "keystream");
    expect_einval(mpc_client_ecb_encrypt(client_, "k", 1, alg, in.data(), 32, out.data()), "ecb encrypt");
    expect_einval(mpc_client_ecb_decrypt(client_, "k", 1, alg, in.data(), 32, out.data()), "ecb decrypt");
  }
  // The GCM calls name no algorithm: they always mean an MPC_AES256_GCM key.
  EXPECT_EQ(mpc_client_gcm_tag(client_, "k", 1, nonce, nullptr, 0, nullptr, 0, out.data()), MPC_ECONFIG);
}

TEST_F(GcmArguments, ImportAndDeleteCheckTheirArguments) {
  std::vector<uint8_t> key(33, 0x42);
  EXPECT_EQ(mpc_client_import_key(nullptr, "k", 1, MPC_AES128, key.data(), 16), MPC_EINVAL);
  expect_einval(mpc_client_import_key(client_, nullptr, 1, MPC_AES128, key.data(), 16), "NULL name");
  expect_einval(mpc_client_import_key(client_, "bad name", 1, MPC_AES128, key.data(), 16), "bad name");
  expect_einval(mpc_client_import_key(client_, "k", 1, 0, key.data(), 16), "algorithm 0");
  expect_einval(mpc_client_import_key(client_, "k", 1, 8, key.data(), 16), "algorithm 8");
  expect_einval(mpc_client_import_key(client_, "k", 1, MPC_AES128, nullptr, 16), "NULL key");
  const std::pair<int, size_t> wrong_sizes[] = {{MPC_AES128, 32}, {MPC_AES256, 16}, {MPC_AES256_GCM, 16},
                                                {MPC_AES128_CTS_HMAC_SHA1_96, 32}, {MPC_AES256_CTS_HMAC_SHA1_96, 16},
                                                {MPC_AES256_CTS_HMAC_SHA1_96, 33}, {MPC_AES128, 0}};
  for (const auto& [alg, size] : wrong_sizes) expect_einval(mpc_client_import_key(client_, "k", 1, alg, key.data(), size), "size");
  const std::pair<int, size_t> right_sizes[] = {{MPC_AES128, 16}, {MPC_AES256, 32}, {MPC_AES256_GCM, 32},
                                                {MPC_AES128_CTS_HMAC_SHA1_96, 16}, {MPC_AES256_CTS_HMAC_SHA1_96, 32}};
  for (const auto& [alg, size] : right_sizes) EXPECT_EQ(mpc_client_import_key(client_, "k", 1, alg, key.data(), size), MPC_ECONFIG);
  EXPECT_EQ(key, std::vector<uint8_t>(33, 0x42));  // the caller's copy is the caller's to wipe
  EXPECT_EQ(mpc_client_delete_key(nullptr, "k", 1, MPC_AES128), MPC_EINVAL);
  expect_einval(mpc_client_delete_key(client_, nullptr, 1, MPC_AES128), "NULL name");
  expect_einval(mpc_client_delete_key(client_, "k", 1, 8), "algorithm 8");
  EXPECT_EQ(mpc_client_delete_key(client_, "k", 1, MPC_AES256_CTS_HMAC_SHA1_96), MPC_ECONFIG);
}

}  // namespace
