// tests/unit/server/key_admin_test.cpp: key administration as both kinds of server answer it:
// only admin clients, shares of the cluster's form only, no overwriting, and clear refusals.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "server/key_admin.hpp"
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
    auto reply = server::answer_key_admin(request, role, *store, copies, "the expected form", log);
    EXPECT_TRUE(reply.has_value());
    return reply.value_or(wire::Reply{});
  }
  static wire::ImportKeyRequest import(std::size_t share_bytes) {
    wire::ImportKeyRequest request;
    request.key = {"k", 1, wire::KeyAlgorithm::Aes128};
    request.share = SecretBytes(share_bytes);
    return request;
  }

  fs::path directory;
  std::unique_ptr<store::ShareStore> store;
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

TEST_F(KeyAdminTest, OnlyAdminsAdministerAndOthersPassThrough) {
  const std::size_t material = wire::material_bytes(wire::KeyAlgorithm::Aes128);
  EXPECT_EQ(answer(import(material), "compute", 1).status, wire::Status::Unauthorized);
  EXPECT_EQ(answer(wire::ListKeysRequest{}, "compute", 1).status, wire::Status::Unauthorized);
  EXPECT_EQ(store->count(), 0u);
  wire::Request status = wire::StatusRequest{};
  EXPECT_FALSE(server::answer_key_admin(status, "admin", *store, 1, "", log).has_value());
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
  const auto reply = server::error_reply(id, wire::Status::Busy, std::string(2000, 'x'));
  EXPECT_EQ(reply.id, id);
  EXPECT_EQ(reply.error.size(), 1024u);
  std::vector<std::uint8_t> frame(20, 0);
  frame[2] = 7;
  EXPECT_EQ(server::salvage_request_id(frame)[0], 7);
  EXPECT_EQ(server::salvage_request_id(std::vector<std::uint8_t>(5, 1)), wire::RequestId{});
}

}  // namespace
