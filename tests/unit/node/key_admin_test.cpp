// tests/unit/node/key_admin_test.cpp: key administration as both kinds of server answer it:
// admin clients for every key, enrol clients for Kerberos keys only, shares of the cluster's
// form only, sealed to this server's key for the request's key id, no overwriting, no ticket
// key id imported twice, and clear refusals.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "node/key_admin.hpp"
#include "node/key_cache.hpp"
#include "store/share_store.hpp"

namespace {

using namespace mpc;
namespace fs = std::filesystem;

class KeyAdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "key_admin_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    directory = pattern;
    store = std::make_unique<store::ShareStore>(directory / "data", store::generate_storage_key());
  }
  void TearDown() override {
    store.reset();
    fs::remove_all(directory);
  }
  wire::Reply answer(wire::Request request, const std::string& role, std::size_t copies) {
    auto reply = node::answer_key_admin(request, role, *store, own, copies, "the expected form", true, log);
    EXPECT_TRUE(reply.has_value());
    return reply.value_or(wire::Reply{});
  }
  // A share of share_bytes bytes (value `fill`) sealed to `to` (this server by default).
  wire::ImportKeyRequest import(std::size_t share_bytes, std::uint8_t fill = 0x5a,
                                const transport::PublicKey* to = nullptr,
                                wire::KeyId key = {"k", 1, wire::KeyAlgorithm::Aes128}) const {
    wire::ImportKeyRequest request;
    request.key = std::move(key);
    request.sealed_share = wire::seal_share(request.key, std::vector<std::uint8_t>(share_bytes, fill),
                                            to != nullptr ? *to : own.public_key);
    return request;
  }

  fs::path directory;
  std::unique_ptr<store::ShareStore> store;
  const transport::CurveKeyPair own = transport::generate_curve_key_pair();
  Logger log{"test", LogLevel::Error};
};

TEST_F(KeyAdminTest, SharesOfTheClusterFormOnly) {
  const std::size_t material = wire::material_bytes(wire::KeyAlgorithm::Aes128);
  // A two-server server (one copy) refuses a replicated share, and the other way round.
  auto refused = answer(import(2 * material), "admin", 1);
  EXPECT_EQ(refused.status, wire::Status::BadRequest);
  EXPECT_NE(refused.error.find("the expected form"), std::string::npos);
  EXPECT_EQ(answer(import(material), "admin", 2).status, wire::Status::BadRequest);
  EXPECT_EQ(store->count(), 0u);
  EXPECT_EQ(answer(import(material), "admin", 1).status, wire::Status::Ok);
  EXPECT_EQ(answer(import(material), "admin", 1).status, wire::Status::KeyExists);
  EXPECT_EQ(store->count(), 1u);
}

// What is stored is the opened share; a share sealed to another server, for another key id,
// or not sealed at all is refused and nothing is stored.
TEST_F(KeyAdminTest, SharesAreOpenedWithThisServersKey) {
  const std::size_t material = wire::material_bytes(wire::KeyAlgorithm::Aes128);
  const transport::CurveKeyPair other = transport::generate_curve_key_pair();
  EXPECT_EQ(answer(import(material, 0x5a, &other.public_key), "admin", 1).status, wire::Status::BadRequest);
  wire::ImportKeyRequest relabelled = import(material);
  relabelled.key.version = 2;
  const auto refused = answer(relabelled, "admin", 1);
  EXPECT_EQ(refused.status, wire::Status::BadRequest);
  EXPECT_NE(refused.error.find("another key id"), std::string::npos) << refused.error;
  wire::ImportKeyRequest plain = import(material);
  plain.sealed_share.assign(material + wire::kSealedShareOverhead, 0x5a);  // the right length, not a seal
  EXPECT_EQ(answer(plain, "admin", 1).status, wire::Status::BadRequest);
  EXPECT_EQ(store->count(), 0u);

  EXPECT_EQ(answer(import(material, 0xc3), "admin", 1).status, wire::Status::Ok);
  const auto stored = store->get({"k", 1, wire::KeyAlgorithm::Aes128});
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(std::vector<std::uint8_t>(stored->span().begin(), stored->span().end()),
            std::vector<std::uint8_t>(material, 0xc3));
}

// A two-server share may come with its checks (wire::share_check_bytes), stored after it; the key
// cache hands the material and the check apart. A replicated share takes none.
TEST_F(KeyAdminTest, AnXorShareMayComeWithItsCheckWhichTheCacheKeepsApart) {
  const std::size_t material = wire::material_bytes(wire::KeyAlgorithm::Aes128);
  std::vector<std::uint8_t> checked(material, 0x11);
  const std::size_t checks = wire::share_check_bytes(wire::KeyAlgorithm::Aes128);
  checked.resize(material + checks, 0x22);
  wire::ImportKeyRequest with_check;
  with_check.key = {"k", 1, wire::KeyAlgorithm::Aes128};
  with_check.sealed_share = wire::seal_share(with_check.key, checked, own.public_key);
  EXPECT_EQ(answer(with_check, "admin", 2).status, wire::Status::BadRequest);
  EXPECT_EQ(answer(with_check, "admin", 1).status, wire::Status::Ok);
  EXPECT_EQ(answer(import(material, 0x33, nullptr, {"plain", 1, wire::KeyAlgorithm::Aes128}), "admin", 1).status,
            wire::Status::Ok);

  node::KeyCache cache(*store, 1);
  const wire::KeyId key{"k", 1, wire::KeyAlgorithm::Aes128}, plain{"plain", 1, wire::KeyAlgorithm::Aes128};
  const SecretBytes* share = cache.get(key);
  ASSERT_NE(share, nullptr);
  EXPECT_EQ(std::vector<std::uint8_t>(share->span().begin(), share->span().end()),
            std::vector<std::uint8_t>(material, 0x11));
  const SecretBytes* check = cache.share_check(key);
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(std::vector<std::uint8_t>(check->span().begin(), check->span().end()),
            std::vector<std::uint8_t>(checks, 0x22));
  EXPECT_EQ(cache.get(plain)->size(), material);
  EXPECT_EQ(cache.share_check(plain), nullptr);
  EXPECT_EQ(cache.share_check({"absent", 1, wire::KeyAlgorithm::Aes128}), nullptr);
  // A share stored with the checks of the release before loads as one without checks.
  std::vector<std::uint8_t> earlier(material, 0x44);
  earlier.resize(material + wire::kEarlierShareCheckBytes, 0x55);
  const wire::KeyId earlier_key{"earlier", 1, wire::KeyAlgorithm::Aes128};
  ASSERT_TRUE(store->put(earlier_key, SecretBytes(earlier)));
  ASSERT_NE(cache.get(earlier_key), nullptr);
  EXPECT_EQ(std::vector<std::uint8_t>(cache.get(earlier_key)->span().begin(), cache.get(earlier_key)->span().end()),
            std::vector<std::uint8_t>(material, 0x44));
  EXPECT_EQ(cache.share_check(earlier_key), nullptr);
  // Replicated shares are two copies of the material, nothing after them.
  node::KeyCache replicated(*store, 2);
  EXPECT_EQ(replicated.share_check(key), nullptr);
}

TEST_F(KeyAdminTest, OnlyAdminsAdministerAndOthersPassThrough) {
  const std::size_t material = wire::material_bytes(wire::KeyAlgorithm::Aes128);
  EXPECT_EQ(answer(import(material), "compute", 1).status, wire::Status::Unauthorized);
  EXPECT_EQ(answer(wire::ListKeysRequest{}, "compute", 1).status, wire::Status::Unauthorized);
  EXPECT_EQ(store->count(), 0u);
  wire::Request status = wire::StatusRequest{};
  EXPECT_FALSE(node::answer_key_admin(status, "admin", *store, own, 1, "", true, log).has_value());
  EXPECT_EQ(answer(import(material), "admin", 1).status, wire::Status::Ok);
  const auto listed = answer(wire::ListKeysRequest{}, "admin", 1);
  ASSERT_EQ(std::get<wire::KeyList>(listed.body).keys.size(), 1u);
  wire::DeleteKeyRequest remove;
  remove.key = {"k", 1, wire::KeyAlgorithm::Aes128};
  EXPECT_EQ(answer(remove, "admin", 1).status, wire::Status::Ok);
  EXPECT_EQ(answer(remove, "admin", 1).status, wire::Status::UnknownKey);
}

TEST(KeyAdminHelpers, ErrorRepliesAndSalvagedIds) {
  wire::RequestId id{};
  id[0] = 9;
  const auto reply = node::error_reply(id, wire::Status::Busy, std::string(2000, 'x'));
  EXPECT_EQ(reply.id, id);
  EXPECT_EQ(reply.error.size(), 1024u);
  std::vector<std::uint8_t> frame(20, 0);
  frame[2] = 7;
  EXPECT_EQ(node::salvage_request_id(frame)[0], 7);
  EXPECT_EQ(node::salvage_request_id(std::vector<std::uint8_t>(5, 1)), wire::RequestId{});
}

// kadmind's enrol key changes Kerberos user and service keys only; a compute key nothing.
TEST_F(KeyAdminTest, TheEnrolRoleChangesKerberosKeysOnly) {
  const wire::KeyId user{"kdc/user", 1, wire::KeyAlgorithm::Aes256CtsHmacSha1};
  const wire::KeyId ticket{"kdc/tgt", 1, wire::KeyAlgorithm::Aes256Gcm};
  const wire::KeyId plain{"k", 1, wire::KeyAlgorithm::Aes128};
  auto share_of = [](const wire::KeyId& key) { return wire::material_bytes(key.algorithm); };
  EXPECT_EQ(answer(import(share_of(user), 1, nullptr, user), "enrol", 1).status, wire::Status::Ok);
  for (const auto& key : {ticket, plain}) {
    const auto refused = answer(import(share_of(key), 1, nullptr, key), "enrol", 1);
    EXPECT_EQ(refused.status, wire::Status::Unauthorized) << wire::describe(key);
    EXPECT_NE(refused.error.find("admin client key"), std::string::npos) << refused.error;
    EXPECT_EQ(answer(import(share_of(key), 1, nullptr, key), "compute", 1).status, wire::Status::Unauthorized);
    EXPECT_EQ(answer(import(share_of(key), 1, nullptr, key), "admin", 1).status, wire::Status::Ok);
    EXPECT_EQ(answer(wire::DeleteKeyRequest{{}, key}, "enrol", 1).status, wire::Status::Unauthorized);
  }
  EXPECT_EQ(answer(wire::ListKeysRequest{}, "enrol", 1).status, wire::Status::Ok);
  EXPECT_EQ(answer(wire::DeleteKeyRequest{{}, user}, "enrol", 1).status, wire::Status::Ok);
  EXPECT_EQ(answer(wire::DeleteKeyRequest{{}, user}, "compute", 1).status, wire::Status::Unauthorized);
  EXPECT_EQ(store->count(), 2u);  // the ticket key and the AES key the admin role stored
}

// A deleted ticket key's id is never stored again; a Kerberos user key's id is (kadmind enrols
// a key change again under the same kvno after a failed attempt).
TEST_F(KeyAdminTest, AClusterThatGeneratesItsTicketKeysImportsNone) {
  const wire::KeyId ticket{"kdc/tgt", 2, wire::KeyAlgorithm::Aes256Gcm};
  const std::size_t material = wire::material_bytes(ticket.algorithm);
  wire::Request request = import(2 * material, 0x5a, nullptr, ticket);
  const auto refused = node::answer_key_admin(request, "admin", *store, own, 2, "", false, log);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, wire::Status::Unauthorized);
  EXPECT_NE(refused->error.find("generates its ticket keys"), std::string::npos);
  EXPECT_EQ(store->count(), 0u);
  // Other keys import as before.
  wire::Request plain = import(2 * wire::material_bytes(wire::KeyAlgorithm::Aes128));
  EXPECT_EQ(node::answer_key_admin(plain, "admin", *store, own, 2, "", false, log)->status, wire::Status::Ok);
}

TEST_F(KeyAdminTest, ADeletedTicketKeyIdIsNeverImportedAgain) {
  const wire::KeyId ticket{"kdc/tgt", 3, wire::KeyAlgorithm::Aes256Gcm};
  const wire::KeyId user{"kdc/user", 3, wire::KeyAlgorithm::Aes128CtsHmacSha1};
  for (const auto& key : {ticket, user}) {
    const std::size_t bytes = wire::material_bytes(key.algorithm);
    ASSERT_EQ(answer(import(bytes, 1, nullptr, key), "admin", 1).status, wire::Status::Ok);
    ASSERT_EQ(answer(wire::DeleteKeyRequest{{}, key}, "admin", 1).status, wire::Status::Ok);
  }
  const auto refused = answer(import(wire::material_bytes(ticket.algorithm), 2, nullptr, ticket), "admin", 1);
  EXPECT_EQ(refused.status, wire::Status::KeyExists);
  EXPECT_NE(refused.error.find("never imported again"), std::string::npos) << refused.error;
  EXPECT_EQ(answer(import(wire::material_bytes(user.algorithm), 2, nullptr, user), "enrol", 1).status,
            wire::Status::Ok);
  EXPECT_EQ(answer(wire::DeleteKeyRequest{{}, ticket}, "admin", 1).status, wire::Status::UnknownKey);
}

}  // namespace
