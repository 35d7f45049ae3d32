// The refusals both engines share (jobs/request_checks.hpp) and the usage rule of the key table
// (wire::krb_usage_refusal): which requests are refused, with which status, and what the
// client is told.
#include <gtest/gtest.h>

#include <string>

#include "jobs/request_checks.hpp"

namespace mpc::jobs {
namespace {

constexpr RequestLimits kLimits{1000, 64};

wire::KeyId key(wire::KeyAlgorithm algorithm) { return wire::KeyId{"checks/key", 1, algorithm}; }

TEST(RequestChecks, ComputeJobsNeedAPlainAesKeyAndFitMaxJobBlocks) {
  wire::ComputeRequest request;
  request.key = key(wire::KeyAlgorithm::Aes128);
  request.blocks = 1000;
  EXPECT_FALSE(compute_refusal(request, kLimits));
  request.blocks = 1001;
  const auto large = compute_refusal(request, kLimits);
  ASSERT_TRUE(large);
  EXPECT_EQ(large->status, wire::Status::TooLarge);
  EXPECT_NE(large->detail.find("max_job_blocks 1000"), std::string::npos) << large->detail;
  request.blocks = 1;
  request.key = key(wire::KeyAlgorithm::Aes256Gcm);
  const auto gcm = compute_refusal(request, kLimits);
  ASSERT_TRUE(gcm);
  EXPECT_EQ(gcm->status, wire::Status::BadRequest);
}

TEST(RequestChecks, PrefetchesCountTheirNoncesAndInstances) {
  wire::GcmPrefetchRequest request{{}, key(wire::KeyAlgorithm::Aes256Gcm), 64, 14};
  EXPECT_FALSE(prefetch_refusal(request, kLimits));  // 64 x 15 = 960 instances
  request.count = 65;
  ASSERT_TRUE(prefetch_refusal(request, kLimits));
  EXPECT_NE(prefetch_refusal(request, kLimits)->detail.find("gcm_nonces_per_client"), std::string::npos);
  request.count = 64;
  request.blocks_per_nonce = 15;  // 64 x 16 = 1024
  ASSERT_TRUE(prefetch_refusal(request, kLimits));
  EXPECT_EQ(prefetch_refusal(request, kLimits)->status, wire::Status::TooLarge);
  request.count = 0;
  EXPECT_EQ(prefetch_refusal(request, kLimits)->status, wire::Status::BadRequest);
  request.count = 1;
  request.key = key(wire::KeyAlgorithm::Aes256);
  EXPECT_EQ(prefetch_refusal(request, kLimits)->status, wire::Status::BadRequest);
}

TEST(RequestChecks, GcmInputMustBeCoveredByTheStoredPowers) {
  const std::vector<std::uint8_t> aad(16 * 511), text(16 * 512), longer(16 * 513);
  EXPECT_FALSE(gcm_input_refusal("tag", key(wire::KeyAlgorithm::Aes256Gcm), aad, text));  // 1024 blocks
  const auto refused = gcm_input_refusal("open", key(wire::KeyAlgorithm::Aes256Gcm), aad, longer);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->detail, "GCM open input too long");
  EXPECT_TRUE(gcm_input_refusal("tag", key(wire::KeyAlgorithm::Aes128), {}, {}));
}

TEST(RequestChecks, AnUnknownKeyIsNamed) {
  const wire::Refusal refused = unknown_key(key(wire::KeyAlgorithm::Aes128));
  EXPECT_EQ(refused.status, wire::Status::UnknownKey);
  EXPECT_NE(refused.detail.find("checks/key"), std::string::npos);
  EXPECT_NE(refused.detail.find("not found"), std::string::npos);
}

TEST(KrbUsageRule, EveryUsageServesExactlyWhatAKdcDoes) {
  using wire::KrbOperation;
  for (const auto [usage, encrypt, decrypt, checksum] :
       std::initializer_list<std::tuple<std::uint32_t, bool, bool, bool>>{
           {1, false, true, false}, {2, true, true, false}, {3, true, false, false},
           {17, false, false, true}, {56, false, false, true}, {4, false, false, false}, {0, false, false, false}}) {
    EXPECT_EQ(!wire::krb_usage_refusal(KrbOperation::Encrypt, usage), encrypt) << usage;
    EXPECT_EQ(!wire::krb_usage_refusal(KrbOperation::Decrypt, usage), decrypt) << usage;
    EXPECT_EQ(!wire::krb_usage_refusal(KrbOperation::Checksum, usage), checksum) << usage;
  }
  const auto forged = wire::krb_usage_refusal(KrbOperation::Encrypt, 1);
  ASSERT_TRUE(forged);
  EXPECT_NE(forged->find("preauthentication"), std::string::npos) << *forged;
  EXPECT_NE(forged->find("1: decrypt, 2: encrypt and decrypt, 3: encrypt, 17: checksum, 56: checksum"),
            std::string::npos)
      << *forged;
  const auto unknown = wire::krb_usage_refusal(KrbOperation::Decrypt, 7);
  ASSERT_TRUE(unknown);
  EXPECT_NE(unknown->find("not one whose keys the servers hold"), std::string::npos) << *unknown;
}

}  // namespace
}  // namespace mpc::jobs
