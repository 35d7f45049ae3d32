// tests/unit/settings/prepared_settings_test.cpp: [limits] prepared_circuits_mib, the budget
// of Kerberos garblings a two-server server prepares ahead of time: 256 MiB unless set, 0
// disables, and values past 65536 or of the wrong type are refused naming the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.hpp"
#include "settings/server_settings.hpp"
#include "support/temp_dir.hpp"
#include "transport/curve_keys.hpp"

namespace {

namespace fs = std::filesystem;
using namespace mpc::settings;

std::string fresh_z85() { return mpc::transport::z85_encode(mpc::transport::generate_curve_key_pair().public_key); }

class PreparedSettings : public ::testing::Test {
 protected:
  // A gc2 server 1's file with `limits` as its [limits] table.
  ServerSettings load(const std::string& limits) {
    const fs::path file = dir_ / "server.toml";
    std::ofstream(file) << "protocol = \"gc2\"\nparty = 1\nclient_endpoint = \"tcp://127.0.0.1:7101\"\n"
                           "peer_endpoint = \"tcp://127.0.0.1:7201\"\nsecret_key_file = \"server.key\"\n"
                           "storage_path = \"store\"\nstorage_key_file = \"storage.key\"\n"
                        << (limits.empty() ? "" : "[limits]\n" + limits + "\n")
                        << "[[peers]]\nparty = 2\nendpoint = \"tcp://127.0.0.1:7202\"\npublic_key = \""
                        << fresh_z85() << "\"\n[clients]\ncompute = [\"" << fresh_z85() << "\"]\n";
    return load_server_settings(file);
  }
  mpc::test_support::TempDir temp_{"prepared_settings"};
  const fs::path dir_ = temp_.path();
};

TEST_F(PreparedSettings, DefaultsTo256MiBAndZeroDisables) {
  EXPECT_EQ(load("").limits.prepared_circuits_mib, 256u);
  EXPECT_EQ(load("prepared_circuits_mib = 0").limits.prepared_circuits_mib, 0u);
  EXPECT_EQ(load("prepared_circuits_mib = 65536").limits.prepared_circuits_mib, 65536u);
}

TEST_F(PreparedSettings, OutOfRangeOrWrongTypeIsRefusedNamingTheKey) {
  for (const std::string bad : {"prepared_circuits_mib = 65537", "prepared_circuits_mib = -1",
                                "prepared_circuits_mib = \"256\"", "prepared_circuits_mib = 1.5"}) {
    try {
      (void)load(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const mpc::Error& error) {
      EXPECT_NE(std::string(error.what()).find("prepared_circuits_mib"), std::string::npos) << error.what();
    }
  }
}

}  // namespace
