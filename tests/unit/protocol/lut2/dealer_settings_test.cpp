// tests/unit/protocol/lut2/dealer_settings_test.cpp: mpc-lut-dealer's configuration file: a valid file,
// every required key, both servers exactly once with distinct keys, limits, typos.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.hpp"
#include "lut_dealer/dealer_settings.hpp"
#include "support/temp_dir.hpp"
#include "transport/curve_keys.hpp"

namespace {

namespace fs = std::filesystem;
using mpc::lut_dealer::load_dealer_settings;

class DealerSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    key1 = mpc::transport::generate_curve_key_pair().public_key;
    key2 = mpc::transport::generate_curve_key_pair().public_key;
  }

  fs::path write(const std::string& text) {
    const fs::path file = dir / "dealer.toml";
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }

  static std::string server(int party, const std::string& key) {
    return "\n[[servers]]\nparty = " + std::to_string(party) + "\npublic_key = \"" + key + "\"\n";
  }
  std::string root(const std::string& extra = "") const {
    return "endpoint = \"tcp://127.0.0.1:7120\"\nsecret_key_file = \"dealer.key\"\n" + extra;
  }
  std::string z85(const mpc::transport::PublicKey& key) const { return mpc::transport::z85_encode(key); }
  std::string both() const { return server(1, z85(key1)) + server(2, z85(key2)); }

  void expect_error(const std::string& text, std::initializer_list<std::string> fragments) {
    try {
      (void)load_dealer_settings(write(text));
      ADD_FAILURE() << "accepted:\n" << text;
    } catch (const mpc::Error& error) {
      EXPECT_EQ(error.component(), mpc::Component::Settings);
      for (const auto& fragment : fragments)
        EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos)
            << "'" << fragment << "' not in: " << error.what();
    }
  }

  mpc::test_support::TempDir temp{"dealer_settings_test"};
  const fs::path dir = temp.path();
  mpc::transport::PublicKey key1{};
  mpc::transport::PublicKey key2{};
};

TEST_F(DealerSettingsTest, ValidFileIsRead) {
  mpc::transport::write_public_key_file(dir / "server2.pub", key2);
  const auto s = load_dealer_settings(
      write(root("log_level = \"debug\"\n") + server(2, "server2.pub") + server(1, z85(key1)) +
            "\n[limits]\nmax_batch_entries = 8192\n"));
  EXPECT_EQ(s.endpoint, "tcp://127.0.0.1:7120");
  EXPECT_EQ(s.secret_key_file, dir / "dealer.key");
  EXPECT_EQ(s.log_level, "debug");
  EXPECT_EQ(s.servers[0], key1);  // by party, whatever the order in the file
  EXPECT_EQ(s.servers[1], key2);
  EXPECT_EQ(s.max_batch_entries, 8192u);
  const auto defaults = load_dealer_settings(write(root() + both()));
  EXPECT_EQ(defaults.log_level, "info");
  EXPECT_EQ(defaults.max_batch_entries, 65536u);
}

TEST_F(DealerSettingsTest, RequiredKeys) {
  expect_error("secret_key_file = \"dealer.key\"\n" + both(), {"endpoint"});
  expect_error("endpoint = \"tcp://127.0.0.1:7120\"\n" + both(), {"secret_key_file"});
  expect_error(root(), {"servers"});
  expect_error(root() + server(1, z85(key1)), {"servers", "got 1"});
  expect_error(root() + both() + server(2, z85(key2)), {"servers", "got 3"});
}

TEST_F(DealerSettingsTest, BothServersOnceWithTheirOwnKeys) {
  expect_error(root() + server(1, z85(key1)) + server(1, z85(key2)), {"servers[1].party", "listed twice"});
  expect_error(root() + server(1, z85(key1)) + server(3, z85(key2)), {"servers[1].party", "between 1 and 2"});
  expect_error(root() + server(1, z85(key1)) + server(2, z85(key1)), {"servers[1].public_key", "other server's key"});
  expect_error(root() + server(1, z85(key1)) + server(2, "not-a-key-file.pub"), {"servers[1].public_key"});
  std::string bad = z85(key2);
  bad[3] = '~';  // not z85, and no such file
  expect_error(root() + server(1, z85(key1)) + server(2, bad), {"servers[1].public_key"});
}

TEST_F(DealerSettingsTest, ValuesAndTyposAreChecked) {
  expect_error(root("endpont = \"tcp://x:1\"\n") + both(), {"endpont"});
  expect_error(root() + both() + "\n[limits]\nmax_batch_entries = 0\n", {"limits.max_batch_entries", "between"});
  expect_error(root() + both() + "\n[limits]\nmax_batch_entries = 65537\n", {"limits.max_batch_entries", "between"});
  expect_error(root() + both() + "\n[limits]\nmax_batch = 1\n", {"max_batch"});
  expect_error(root("log_level = \"loud\"\n") + both(), {"log_level"});
  expect_error("endpoint = \"http://x\"\nsecret_key_file = \"k\"\n" + both(), {"endpoint"});
  expect_error(root() + "\n[[servers]]\nparty = 1\npublic_key = \"" + z85(key1) + "\"\nendpoint = \"tcp://x:1\"\n" +
                   server(2, z85(key2)),
               {"servers[0]", "endpoint"});
}

}  // namespace
