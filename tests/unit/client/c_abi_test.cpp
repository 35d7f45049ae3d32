// The C interface's argument checks for the GCM calls and the algorithm rules, on a handle
// whose servers are never reached: every bad argument is MPC_EINVAL with a message, before
// any connection is attempted, and outputs are left alone.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mpc_client.h"

namespace {

class GcmArguments : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/mpc-client-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
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
    std::filesystem::remove_all(directory_);
  }
  void expect_einval(int rc, const char* what) {
    EXPECT_EQ(rc, MPC_EINVAL) << what;
    EXPECT_STRNE(mpc_client_last_error(client_), "") << what;
  }

  std::filesystem::path directory_;
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

}  // namespace
