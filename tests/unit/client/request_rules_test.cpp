// The client library checks each request once, in ClusterClient, before it opens a connection
// (wire::validate_request and the Kerberos rules): what breaks a rule is InvalidRequest, which
// the C interface answers MPC_EINVAL. The servers here are never reached, so a request that
// keeps the rules fails otherwise, at its connection.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "client/cluster_client.hpp"
#include "common/secret.hpp"
#include "wire/client_messages.hpp"

namespace {

using namespace mpc;
using client::ClusterClient;
using client::InvalidRequest;
using wire::KeyAlgorithm;

settings::ClusterSettings unreachable_cluster() {
  settings::ClusterSettings settings;
  settings.secret_key_file = "/nonexistent/mpc-client-rules.key";
  settings.timeout = std::chrono::milliseconds(200);
  for (int party = 0; party < 3; ++party)
    settings.servers.push_back({party, "inproc://mpc-request-rules-" + std::to_string(party), "", {}});
  return settings;
}

class RequestRules : public ::testing::Test {
 protected:
  ClusterClient client_{unreachable_cluster()};
  const wire::KeyId aes_{"rules/aes", 1, KeyAlgorithm::Aes128};
  const wire::KeyId gcm_{"rules/gcm", 1, KeyAlgorithm::Aes256Gcm};
  const wire::KeyId krb_{"rules/krb", 1, KeyAlgorithm::Aes128CtsHmacSha1};
  const std::array<std::uint8_t, 16> counter_{};
  const wire::GcmNonce nonce_{};
};

TEST_F(RequestRules, AesRequestsOfNoBlockTooManyOrAnotherKeyAreRefused) {
  EXPECT_THROW(client_.keystream(aes_, counter_, 0), InvalidRequest);
  EXPECT_THROW(client_.keystream(aes_, counter_, wire::kMaxRequestBlocks + 1), InvalidRequest);
  EXPECT_THROW(client_.keystream(gcm_, counter_, 1), InvalidRequest);
  EXPECT_THROW(client_.keystream(krb_, counter_, 1), InvalidRequest);
  const std::vector<std::uint8_t> partial(15), whole(32);
  EXPECT_THROW(client_.ecb_encrypt(aes_, partial), InvalidRequest);
  EXPECT_THROW(client_.ecb_decrypt(aes_, {}), InvalidRequest);
  EXPECT_THROW(client_.ecb_encrypt(krb_, whole), InvalidRequest);
}

TEST_F(RequestRules, GcmRequestsOutOfTheirBoundsAreRefusedBeforeTheInputIsCopied) {
  EXPECT_THROW(client_.gcm_prefetch(gcm_, 0, 1), InvalidRequest);
  EXPECT_THROW(client_.gcm_prefetch(gcm_, 1, wire::kMaxGcmBlocksPerNonce + 1), InvalidRequest);
  EXPECT_THROW(client_.gcm_prefetch(aes_, 1, 1), InvalidRequest);
  EXPECT_THROW(client_.gcm_tag(aes_, nonce_, {}, {}), InvalidRequest);
  // A length no buffer has: refused on the length alone, nothing read.
  const std::uint8_t byte = 0;
  const std::span<const std::uint8_t> huge(&byte, std::size_t{1} << 40);
  EXPECT_THROW(client_.gcm_tag(gcm_, nonce_, {}, huge), InvalidRequest);
  EXPECT_THROW(client_.gcm_open(gcm_, nonce_, huge, {}, wire::GcmTagBytes{}), InvalidRequest);
  const std::vector<std::uint8_t> prefix(wire::kMaxGcmChainPrefixBytes + 1);
  wire::GcmNonce other = nonce_;
  other[0] = 1;
  EXPECT_THROW(client_.gcm_tag_chained(gcm_, nonce_, {}, other, prefix), InvalidRequest);
  EXPECT_THROW(client_.gcm_tag_chained(gcm_, nonce_, {}, nonce_, {}), InvalidRequest);
}

TEST_F(RequestRules, KerberosRequestsBreakingAUsageOrALengthAreRefused) {
  const std::vector<std::uint8_t> data(40);
  const std::array<std::uint8_t, wire::kKrbConfounderBytes> confounder{};
  EXPECT_THROW(client_.krb_checksum(krb_, 4, data), InvalidRequest);  // not a usage a KDC uses
  EXPECT_THROW(client_.krb_encrypt(krb_, 1, confounder, data), InvalidRequest);  // usage 1: decrypt only
  EXPECT_THROW(client_.krb_decrypt(krb_, 2, std::vector<std::uint8_t>(20)), InvalidRequest);  // < confounder + MAC
  EXPECT_THROW(client_.krb_checksum(aes_, 17, data), InvalidRequest);
  const std::span<const std::uint8_t> huge(data.data(), wire::kKrbMaxDataBytes + 1);
  EXPECT_THROW(client_.krb_checksum(krb_, 17, huge), InvalidRequest);
}

TEST_F(RequestRules, KeysOfAnotherLengthBadNamesAndTimeoutsAreRefused) {
  EXPECT_THROW(client_.import_key(aes_, SecretBytes(15)), InvalidRequest);
  EXPECT_THROW(client_.import_key({"bad name", 1, KeyAlgorithm::Aes128}, SecretBytes(16)), InvalidRequest);
  EXPECT_THROW(client_.delete_key({"", 1, KeyAlgorithm::Aes128}), InvalidRequest);
  EXPECT_THROW(client_.set_timeout(std::chrono::milliseconds(0)), InvalidRequest);
  EXPECT_THROW(client_.set_timeout(std::chrono::milliseconds(600001)), InvalidRequest);
}

// A request that keeps every rule gets past them: it fails only where the servers are needed.
TEST_F(RequestRules, ARequestKeepingTheRulesFailsOnlyAtItsConnection) {
  try {
    (void)client_.keystream(aes_, counter_, 1);
    FAIL() << "served without servers";
  } catch (const InvalidRequest& error) {
    FAIL() << "refused as invalid: " << error.what();
  } catch (const Error&) {
  }
}

}  // namespace
