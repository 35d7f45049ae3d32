// The fixture of the settings tests: a temporary directory, fresh public keys, valid
// mpc-server.toml and cluster.toml texts assembled from parts (so that a test can drop or
// change one), and checks that a load fails naming the file and the problem.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "settings/cluster_settings.hpp"
#include "settings/server_settings.hpp"
#include "support/temp_dir.hpp"
#include "transport/curve_keys.hpp"

namespace mpc::settings::test {

namespace fs = std::filesystem;
using mpc::transport::PublicKey;

inline const fs::path kSourceDir = MPC_SOURCE_DIR;

inline PublicKey fresh_key() { return mpc::transport::generate_curve_key_pair().public_key; }
inline std::string z85(const PublicKey& key) { return mpc::transport::z85_encode(key); }

class SettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    peer2 = fresh_key();
    peer3 = fresh_key();
    compute = fresh_key();
    admin = fresh_key();
    server1 = fresh_key();
  }

  fs::path write(const std::string& name, const std::string& content) {
    const fs::path file = dir / name;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << content;
    return file;
  }

  // A valid server file for party 1, assembled from parts so tests can drop or change one.
  std::map<std::string, std::string> server_root() const {
    return {{"party", "1"},
            {"client_endpoint", "\"tcp://127.0.0.1:7101\""},
            {"peer_endpoint", "\"tcp://127.0.0.1:7201\""},
            {"secret_key_file", "\"server.key\""},
            {"storage_path", "\"/var/lib/mpc-server\""},
            {"storage_key_file", "\"storage.key\""}};
  }
  std::string peer_table(int party, const std::string& endpoint, const std::string& key_text,
                         const std::string& extra = "") const {
    return "[[peers]]\nparty = " + std::to_string(party) + "\nendpoint = \"" + endpoint + "\"\npublic_key = \"" +
           key_text + "\"\n" + extra + "\n";
  }
  std::string default_peers() const {
    return peer_table(3, "tcp://127.0.0.1:7203", z85(peer3)) + peer_table(2, "tcp://127.0.0.1:7202", z85(peer2));
  }
  std::string default_clients() const {
    return "[clients]\ncompute = [\"" + z85(compute) + "\"]\nadmin = [\"" + z85(admin) + "\"]\n";
  }
  std::string server_text(const std::map<std::string, std::string>& root, const std::string& limits = "",
                          const std::optional<std::string>& peers = std::nullopt,
                          const std::optional<std::string>& clients = std::nullopt) const {
    std::string text;
    for (const auto& [key, value] : root) text += key + " = " + value + "\n";
    if (!limits.empty()) text += "[limits]\n" + limits + "\n";
    text += peers.value_or(default_peers());
    text += clients.value_or(default_clients());
    return text;
  }

  std::string cluster_text(const std::map<std::string, std::string>& root, const std::vector<std::string>& servers) {
    std::string text;
    for (const auto& [key, value] : root) text += key + " = " + value + "\n";
    for (const auto& server : servers) text += "[[servers]]\n" + server + "\n";
    return text;
  }
  std::map<std::string, std::string> cluster_root() const {
    return {{"protocol", "\"rss3\""}, {"timeout_ms", "1500"}, {"secret_key_file", "\"client.key\""}};
  }
  std::vector<std::string> cluster_servers() const {
    return {server_entry(2, "tcp://h2:7101", z85(peer2)), server_entry(1, "tcp://h1:7101", z85(server1)),
            server_entry(3, "tcp://h3:7101", z85(peer3))};
  }
  static std::string server_entry(int party, const std::string& endpoint, const std::string& key_text) {
    return "party = " + std::to_string(party) + "\nendpoint = \"" + endpoint + "\"\npublic_key = \"" + key_text + "\"\n";
  }

  // Loads and expects Error(Settings) naming the file and containing every fragment.
  template <typename Load>
  void expect_error(Load load, const fs::path& file, std::initializer_list<std::string> fragments) {
    try {
      (void)load(file);
      ADD_FAILURE() << "no error for:\n" << std::ifstream(file).rdbuf();
    } catch (const mpc::Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(e.component(), mpc::Component::Settings) << message;
      EXPECT_NE(message.find(file.string()), std::string::npos) << message;
      for (const auto& fragment : fragments) EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  }
  void expect_server_error(const std::string& text, std::initializer_list<std::string> fragments) {
    expect_error(load_server_settings, write("server.toml", text), fragments);
  }
  void expect_cluster_error(const std::string& text, std::initializer_list<std::string> fragments) {
    expect_error(load_cluster_settings, write("cluster.toml", text), fragments);
  }

  mpc::test_support::TempDir temp{"settings_test"};
  const fs::path dir = temp.path();
  PublicKey peer2{}, peer3{}, compute{}, admin{}, server1{};
};

}  // namespace mpc::settings::test
