// tests/unit/settings/cluster_settings_test.cpp: cluster.toml loading (the shipped example,
// servers sorted, the rules of two- and three-server clusters, data endpoints) and what every
// settings file shares: paths resolved against the file, syntax errors and bad values named by
// file and line, missing or odd files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "settings_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using namespace mpc::settings;
using mpc::settings::test::SettingsTest;
using mpc::settings::test::kSourceDir;
using mpc::settings::test::fresh_key;
using mpc::settings::test::z85;
using mpc::transport::PublicKey;

TEST_F(SettingsTest, ClusterExampleParses) {
  const fs::path example = kSourceDir / "config" / "cluster.example.toml";
  const ClusterSettings c = load_cluster_settings(example);
  EXPECT_EQ(c.protocol, Protocol::Rss3);
  EXPECT_EQ(c.timeout, std::chrono::milliseconds(2000));
  EXPECT_EQ(c.krb_timeout, std::chrono::milliseconds(30000));
  EXPECT_EQ(c.secret_key_file, fs::absolute(example).lexically_normal().parent_path() / "client.key");
  ASSERT_EQ(c.servers.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.servers[static_cast<std::size_t>(i)].party, i);
  // The examples describe one cluster: party 1's peers are the cluster's servers 2 and 3.
  const ServerSettings s = load_server_settings(kSourceDir / "config" / "mpc-server.example.toml");
  EXPECT_EQ(s.peers[0].public_key, c.servers[1].public_key);
  EXPECT_EQ(s.peers[1].public_key, c.servers[2].public_key);
}

TEST_F(SettingsTest, TwoServerClusterNeedsTwoServers) {
  auto root = cluster_root();
  root["protocol"] = "\"gc2\"";
  auto servers = cluster_servers();
  expect_cluster_error(cluster_text(root, servers), {"servers", "exactly 2 entries, got 3"});
  servers.pop_back();
  const ClusterSettings c = load_cluster_settings(write("cluster.toml", cluster_text(root, servers)));
  EXPECT_EQ(c.protocol, Protocol::Gc2);
  ASSERT_EQ(c.servers.size(), 2u);
  EXPECT_EQ(c.servers[0].public_key, server1);
  servers[0] = server_entry(3, "tcp://h3:7101", z85(peer3));
  expect_cluster_error(cluster_text(root, servers), {"servers[0].party", "between 1 and 2"});
}

TEST_F(SettingsTest, ClusterDataEndpointsAreOptionalTcpAndThreeServerOnly) {
  auto root = cluster_root();
  auto servers = cluster_servers();
  const ClusterSettings plain = load_cluster_settings(write("cluster.toml", cluster_text(root, servers)));
  for (const auto& server : plain.servers) EXPECT_TRUE(server.data_endpoint.empty());
  servers[1] += "data_endpoint = \"tcp://h1:7221\"\n";  // party 1's entry
  const ClusterSettings linked = load_cluster_settings(write("cluster.toml", cluster_text(root, servers)));
  EXPECT_EQ(linked.servers[0].data_endpoint, "tcp://h1:7221");
  EXPECT_TRUE(linked.servers[1].data_endpoint.empty());
  servers[1] = server_entry(1, "tcp://h1:7101", z85(server1)) + "data_endpoint = \"ipc:///run/mpc\"\n";
  expect_cluster_error(cluster_text(root, servers), {"servers[1].data_endpoint", "tcp://"});
  root["protocol"] = "\"gc2\"";
  servers = cluster_servers();
  servers.pop_back();
  servers[1] += "data_endpoint = \"tcp://h1:7221\"\n";
  expect_cluster_error(cluster_text(root, servers), {"servers[1].data_endpoint", "rss3"});
}

TEST_F(SettingsTest, RelativePathsAreResolvedAgainstTheFile) {
  auto root = server_root();
  root["secret_key_file"] = "\"keys/../keys/server.key\"";
  root["storage_path"] = "\"../state/store\"";
  root["storage_key_file"] = "\"/etc/mpc-kdc//storage.key\"";
  const fs::path file = write("etc/server.toml", server_text(root));
  const ServerSettings s = load_server_settings(file);
  EXPECT_EQ(s.secret_key_file, dir / "etc" / "keys" / "server.key");
  EXPECT_EQ(s.storage_path, dir / "state" / "store");
  EXPECT_EQ(s.storage_key_file, fs::path("/etc/mpc-kdc/storage.key"));
  EXPECT_TRUE(s.secret_key_file.is_absolute());

  // A relative path to the file itself still yields absolute paths.
  const fs::path previous = fs::current_path();
  fs::current_path(dir);
  ServerSettings relative;
  EXPECT_NO_THROW(relative = load_server_settings("etc/server.toml"));
  fs::current_path(previous);
  EXPECT_EQ(relative.secret_key_file, dir / "etc" / "keys" / "server.key");
}

TEST_F(SettingsTest, SyntaxErrorsNameFileAndLine) {
  expect_server_error("party = 1\nclient_endpoint = \n", {"server.toml:2:"});
  expect_server_error("party = 1\nparty = 2\n", {"server.toml:2:"});
  expect_cluster_error("[[servers]\n", {"cluster.toml:1:"});
}

TEST_F(SettingsTest, ErrorsCarryTheLineOfTheBadValue) {
  auto root = server_root();
  root["party"] = "9";  // keys are written in std::map order: client_endpoint, then party on line 2
  expect_server_error(server_text(root), {"server.toml:2: party: must be between 1 and 3 (got 9)"});
}

TEST_F(SettingsTest, MissingOrOddFilesAreErrors) {
  expect_error(load_server_settings, dir / "absent.toml", {"cannot read"});
  expect_error(load_cluster_settings, dir / "absent.toml", {"cannot read"});
  fs::create_directory(dir / "a-directory.toml");
  expect_error(load_server_settings, dir / "a-directory.toml", {"not a regular file"});
  expect_server_error(std::string(2u << 20, '#'), {"larger than"});
}

TEST_F(SettingsTest, ClusterParsesAndSortsServers) {
  mpc::transport::write_public_key_file(dir / "s3.pub", peer3);
  auto servers = cluster_servers();
  servers[2] = server_entry(3, "ipc:///run/mpc/s3", "s3.pub");
  const ClusterSettings c = load_cluster_settings(write("cluster.toml", cluster_text(cluster_root(), servers)));
  EXPECT_EQ(c.timeout, std::chrono::milliseconds(1500));
  EXPECT_EQ(c.secret_key_file, dir / "client.key");
  ASSERT_EQ(c.servers.size(), 3u);
  EXPECT_EQ(c.servers[0].party, 0);
  EXPECT_EQ(c.servers[0].public_key, server1);
  EXPECT_EQ(c.servers[0].endpoint, "tcp://h1:7101");
  EXPECT_EQ(c.servers[1].public_key, peer2);
  EXPECT_EQ(c.servers[2].public_key, peer3);
  EXPECT_EQ(c.servers[2].endpoint, "ipc:///run/mpc/s3");
  // timeout_ms is optional.
  auto root = cluster_root();
  root.erase("timeout_ms");
  EXPECT_EQ(load_cluster_settings(write("cluster.toml", cluster_text(root, cluster_servers()))).timeout,
            std::chrono::milliseconds(2000));
  root["krb_timeout_ms"] = "45000";
  EXPECT_EQ(load_cluster_settings(write("cluster.toml", cluster_text(root, cluster_servers()))).krb_timeout,
            std::chrono::milliseconds(45000));
}

TEST_F(SettingsTest, ClusterRulesAreEnforced) {
  for (const char* key : {"protocol", "secret_key_file"}) {
    auto root = cluster_root();
    root.erase(key);
    expect_cluster_error(cluster_text(root, cluster_servers()), {key, "missing"});
  }
  expect_cluster_error(cluster_text(cluster_root(), {}), {"servers", "missing"});
  const std::vector<std::pair<std::pair<std::string, std::string>, std::string>> root_cases = {
      {{"protocol", "\"rss2\""}, "must be one of rss3, gc2, lut2"},
      {{"protocol", "3"}, "must be a string"},
      {{"timeout_ms", "0"}, "between 1 and 600000"},
      {{"timeout_ms", "600001"}, "between 1 and 600000"},
      {{"timeout_ms", "\"2000\""}, "must be an integer"},
      {{"krb_timeout_ms", "0"}, "between 1 and 600000"},
      {{"krb_timeout_ms", "600001"}, "between 1 and 600000"},
      {{"timeuot_ms", "2000"}, "unknown key"},
  };
  for (const auto& [kv, fragment] : root_cases) {
    auto root = cluster_root();
    root[kv.first] = kv.second;
    SCOPED_TRACE(kv.first + " = " + kv.second);
    expect_cluster_error(cluster_text(root, cluster_servers()), {kv.first, fragment});
  }
  auto servers = cluster_servers();
  servers.pop_back();
  expect_cluster_error(cluster_text(cluster_root(), servers), {"servers", "exactly 3 entries, got 2"});
  servers = cluster_servers();
  servers.push_back(server_entry(3, "tcp://h4:1", z85(peer3)));
  expect_cluster_error(cluster_text(cluster_root(), servers), {"servers", "exactly 3 entries, got 4"});
  servers = cluster_servers();
  servers[2] = server_entry(1, "tcp://h3:7101", z85(peer3));
  expect_cluster_error(cluster_text(cluster_root(), servers), {"servers[2].party", "listed twice"});
  servers = cluster_servers();
  servers[2] = server_entry(0, "tcp://h3:7101", z85(peer3));
  expect_cluster_error(cluster_text(cluster_root(), servers), {"servers[2].party", "between 1 and 3"});
  servers = cluster_servers();
  servers[2] = server_entry(3, "tcp://h1:7101", z85(peer3));
  expect_cluster_error(cluster_text(cluster_root(), servers), {"servers[2].endpoint", "listed twice"});
  servers = cluster_servers();
  servers[0] += "weight = 2\n";
  expect_cluster_error(cluster_text(cluster_root(), servers), {"servers[0].weight", "unknown key"});
  servers = cluster_servers();
  servers[1] = "party = 1\nendpoint = \"tcp://h:1\"\n";
  expect_cluster_error(cluster_text(cluster_root(), servers), {"servers[1].public_key", "missing"});
  servers = cluster_servers();
  servers[1] = "party = 1\npublic_key = \"" + z85(peer2) + "\"\n";
  expect_cluster_error(cluster_text(cluster_root(), servers), {"servers[1].endpoint", "missing"});
  servers = cluster_servers();
  servers[1] = "endpoint = \"tcp://h:1\"\npublic_key = \"" + z85(peer2) + "\"\n";
  expect_cluster_error(cluster_text(cluster_root(), servers), {"servers[1].party", "missing"});
  servers = cluster_servers();
  servers[1] = server_entry(2, "udp://h:1", z85(peer2));
  expect_cluster_error(cluster_text(cluster_root(), servers), {"servers[1].endpoint", "tcp://"});
}

}  // namespace
