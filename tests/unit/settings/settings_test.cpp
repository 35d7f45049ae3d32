// tests/unit/settings/settings_test.cpp: mpc-server.toml and cluster.toml loading: the
// shipped examples, every required key, unknown keys, bad values, path resolution and
// public keys given inline or by file.
#include <gtest/gtest.h>
#include <unistd.h>

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

namespace {

namespace fs = std::filesystem;
using namespace mpc::settings;
using mpc::transport::PublicKey;

const fs::path kSourceDir = MPC_SOURCE_DIR;

PublicKey fresh_key() { return mpc::transport::generate_curve_key_pair().public_key; }
std::string z85(const PublicKey& key) { return mpc::transport::z85_encode(key); }

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

TEST_F(SettingsTest, ServerExampleParses) {
  const ServerSettings s = load_server_settings(kSourceDir / "config" / "mpc-server.example.toml");
  EXPECT_EQ(s.party, 0);
  EXPECT_EQ(s.client_endpoint, "tcp://0.0.0.0:7101");
  EXPECT_EQ(s.peer_endpoint, "tcp://0.0.0.0:7201");
  EXPECT_EQ(s.data_endpoint, "tcp://0.0.0.0:7221");
  EXPECT_EQ(s.peers[0].data_endpoint, "tcp://10.0.0.2:7221");
  EXPECT_EQ(s.limits.workers, 0u);
  EXPECT_EQ(s.secret_key_file, fs::path("/etc/mpc-kdc/server.key"));
  EXPECT_EQ(s.storage_path, fs::path("/var/lib/mpc-server"));
  EXPECT_EQ(s.storage_key_file, fs::path("/etc/mpc-kdc/storage.key"));
  EXPECT_EQ(s.log_level, "info");
  EXPECT_EQ(s.backend, EvaluatorBackend::Auto);
  const ServerLimits defaults;
  EXPECT_EQ(s.limits.max_batch_blocks, defaults.max_batch_blocks);
  EXPECT_EQ(s.limits.max_job_blocks, defaults.max_job_blocks);
  EXPECT_EQ(s.limits.max_pending_jobs, defaults.max_pending_jobs);
  EXPECT_EQ(s.limits.peer_timeout, defaults.peer_timeout);
  EXPECT_EQ(s.limits.job_wait, defaults.job_wait);
  EXPECT_EQ(s.limits.sbox, defaults.sbox);
  EXPECT_EQ(s.limits.latency_batch_blocks, defaults.latency_batch_blocks);
  EXPECT_EQ(s.limits.gcm_nonce_ttl, defaults.gcm_nonce_ttl);
  EXPECT_EQ(s.limits.gcm_nonces_per_client, defaults.gcm_nonces_per_client);
  EXPECT_EQ(s.limits.heartbeat, defaults.heartbeat);
  EXPECT_EQ(s.limits.peer_down, defaults.peer_down);
  EXPECT_EQ(s.limits.rejoin, defaults.rejoin);
  EXPECT_EQ(s.limits.degraded_max_job_blocks, defaults.degraded_max_job_blocks);
  EXPECT_EQ(s.degraded_service, ServerSettings{}.degraded_service);
  ASSERT_EQ(s.peers.size(), 2u);
  EXPECT_EQ(s.peers[0].party, 1);
  EXPECT_EQ(s.peers[0].endpoint, "tcp://10.0.0.2:7201");
  EXPECT_EQ(s.peers[1].party, 2);
  EXPECT_EQ(s.compute_clients.size(), 1u);
  EXPECT_EQ(s.admin_clients.size(), 1u);
}

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

TEST_F(SettingsTest, MinimalServerGetsDefaultsAndSortedPeers) {
  const ServerSettings s = load_server_settings(write("server.toml", server_text(server_root())));
  EXPECT_EQ(s.party, 0);
  EXPECT_EQ(s.log_level, "info");
  EXPECT_EQ(s.limits.max_batch_blocks, ServerLimits{}.max_batch_blocks);
  EXPECT_EQ(s.limits.gcm_nonce_ttl, std::chrono::seconds(3600));
  EXPECT_EQ(s.limits.gcm_nonces_per_client, 262144u);
  ASSERT_EQ(s.peers.size(), 2u);
  EXPECT_EQ(s.peers[0].party, 1);
  EXPECT_EQ(s.peers[0].public_key, peer2);
  EXPECT_EQ(s.peers[0].endpoint, "tcp://127.0.0.1:7202");
  EXPECT_EQ(s.peers[1].party, 2);
  EXPECT_EQ(s.peers[1].public_key, peer3);
  EXPECT_EQ(s.compute_clients, std::vector<PublicKey>{compute});
  EXPECT_EQ(s.admin_clients, std::vector<PublicKey>{admin});
}

TEST_F(SettingsTest, AllLimitsAreRead) {
  auto root = server_root();
  root["log_level"] = "\"debug\"";
  root["party"] = "2";
  const std::string peers =
      peer_table(1, "tcp://a:1", z85(peer2)) + peer_table(3, "ipc:///run/mpc/peer3", z85(peer3));
  const std::string limits =
      "max_batch_blocks = 128\nmax_job_blocks = 7\nmax_pending_jobs = 3\npeer_timeout_ms = 600000\n"
      "job_wait_ms = 1\nsbox = \"depth4\"\nlatency_batch_blocks = 128\ngcm_nonce_ttl_s = 604800\n"
      "gcm_nonces_per_client = 1\n";
  const ServerSettings s = load_server_settings(write("server.toml", server_text(root, limits, peers)));
  EXPECT_EQ(s.party, 1);
  EXPECT_EQ(s.log_level, "debug");
  EXPECT_EQ(s.limits.max_batch_blocks, 128u);
  EXPECT_EQ(s.limits.max_job_blocks, 7u);
  EXPECT_EQ(s.limits.max_pending_jobs, 3u);
  EXPECT_EQ(s.limits.peer_timeout, std::chrono::milliseconds(600000));
  EXPECT_EQ(s.limits.job_wait, std::chrono::milliseconds(1));
  EXPECT_EQ(s.limits.sbox, SboxChoice::Depth4);
  EXPECT_EQ(s.limits.latency_batch_blocks, 128u);
  EXPECT_EQ(s.limits.gcm_nonce_ttl, std::chrono::seconds(604800));
  EXPECT_EQ(s.limits.gcm_nonces_per_client, 1u);
  EXPECT_EQ(s.peers[1].endpoint, "ipc:///run/mpc/peer3");
  const ServerSettings t = load_server_settings(write("server.toml", server_text(server_root(), "sbox = \"and32\"\nlatency_batch_blocks = 0")));
  EXPECT_EQ(t.limits.sbox, SboxChoice::And32);
  EXPECT_EQ(t.limits.latency_batch_blocks, 0u);
}

TEST_F(SettingsTest, BackendIsChosenStrictly) {
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(server_root()))).backend, EvaluatorBackend::Auto);
  const std::vector<std::pair<std::string, EvaluatorBackend>> good = {
      {"\"cpu\"", EvaluatorBackend::Cpu}, {"\"cuda\"", EvaluatorBackend::Cuda}, {"\"auto\"", EvaluatorBackend::Auto}};
  for (const auto& [value, expected] : good) {
    auto root = server_root();
    root["backend"] = value;
    EXPECT_EQ(load_server_settings(write("server.toml", server_text(root))).backend, expected) << value;
  }
  auto with_backend = [&](const std::string& value) {
    auto root = server_root();
    root["backend"] = value;
    return server_text(root);
  };
  expect_server_error(with_backend("\"gpu\""), {"backend", "cpu, cuda, auto"});
  expect_server_error(with_backend("\"CUDA\""), {"backend", "one of"});
  expect_server_error(with_backend("\"\""), {"backend"});
  expect_server_error(with_backend("1"), {"backend", "must be a string"});
  expect_server_error(with_backend("[\"cpu\"]"), {"backend", "must be a string"});
  // Only at the top level: a [limits] key of that name is unknown.
  expect_server_error(server_text(server_root(), "backend = \"cpu\""), {"limits.backend", "unknown key"});
}

TEST_F(SettingsTest, SecurityIsActiveUnlessPassiveIsAsked) {
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(server_root()))).security, Security::Active);
  auto root = server_root();
  root["security"] = "\"passive\"";
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(root))).security, Security::Passive);
  root["security"] = "\"active\"";
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(root))).security, Security::Active);
  root["security"] = "\"paranoid\"";
  expect_server_error(server_text(root), {"security", "one of active, passive"});
  // Two-server clusters: passive unless asked; gc2 takes "active", lut2 refuses it rather than
  // promise more than it does.
  const std::string two_server_peer = peer_table(2, "tcp://127.0.0.1:7202", z85(peer2));
  root.erase("security");
  root["protocol"] = "\"gc2\"";
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(root, "", two_server_peer))).security,
            Security::Passive);
  root["security"] = "\"active\"";
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(root, "", two_server_peer))).security,
            Security::Active);
  root["protocol"] = "\"lut2\"";
  expect_server_error(server_text(root, "", two_server_peer), {"security", "lut2 is semi-honest"});
  root["security"] = "\"passive\"";
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(root, "", two_server_peer))).security,
            Security::Passive);
}

TEST_F(SettingsTest, DataLinksAreOptionalTcpOnlyAndForThreeServers) {
  const ServerSettings plain = load_server_settings(write("server.toml", server_text(server_root())));
  EXPECT_TRUE(plain.data_endpoint.empty());
  EXPECT_TRUE(plain.peers[0].data_endpoint.empty() && plain.peers[1].data_endpoint.empty());

  auto root = server_root();
  root["data_endpoint"] = "\"tcp://127.0.0.1:7221\"";
  const std::string peers = peer_table(2, "tcp://127.0.0.1:7202", z85(peer2), "data_endpoint = \"tcp://h2:7222\"") +
                            peer_table(3, "tcp://127.0.0.1:7203", z85(peer3));
  const ServerSettings s = load_server_settings(write("server.toml", server_text(root, "", peers)));
  EXPECT_EQ(s.data_endpoint, "tcp://127.0.0.1:7221");
  EXPECT_EQ(s.peers[0].data_endpoint, "tcp://h2:7222");
  EXPECT_TRUE(s.peers[1].data_endpoint.empty());

  // Data links are TCP streams of their own: no ipc://, and not an endpoint ZeroMQ binds.
  root["data_endpoint"] = "\"ipc:///run/mpc/data\"";
  expect_server_error(server_text(root), {"data_endpoint", "tcp://"});
  root["data_endpoint"] = "\"tcp://127.0.0.1:7201\"";
  expect_server_error(server_text(root), {"data_endpoint", "differ"});
  root["data_endpoint"] = "\"tcp://127.0.0.1:7101\"";
  expect_server_error(server_text(root), {"data_endpoint", "differ"});
  expect_server_error(server_text(server_root(), "",
                                  peer_table(2, "tcp://x:1", z85(peer2), "data_endpoint = \"inproc://d\"") +
                                      peer_table(3, "tcp://y:1", z85(peer3))),
                      {"peers[0].data_endpoint", "tcp://"});
  root = server_root();
  root["protocol"] = "\"gc2\"";
  root["data_endpoint"] = "\"tcp://127.0.0.1:7221\"";
  expect_server_error(server_text(root, "", peer_table(2, "tcp://127.0.0.1:7202", z85(peer2))),
                      {"data_endpoint", "only to protocol = \"rss3\""});
}

TEST_F(SettingsTest, WorkersDefaultToOnePerCoreAndAreBounded) {
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(server_root()))).limits.workers, 0u);
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(server_root(), "workers = 16"))).limits.workers,
            16u);
  expect_server_error(server_text(server_root(), "workers = 257"), {"limits.workers", "between 0 and 256"});
  expect_server_error(server_text(server_root(), "workers = -1"), {"limits.workers"});
}

TEST_F(SettingsTest, KerberosEvaluationIsGarbledUnlessLayeredIsAsked) {
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(server_root()))).krb_evaluation,
            KrbEvaluation::Garbled);
  auto root = server_root();
  root["krb_evaluation"] = "\"layered\"";
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(root))).krb_evaluation, KrbEvaluation::Layered);
  root["krb_evaluation"] = "\"garbled\"";
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(root))).krb_evaluation, KrbEvaluation::Garbled);
  root["krb_evaluation"] = "\"lookup\"";
  expect_server_error(server_text(root), {"krb_evaluation", "one of garbled, layered"});
  // Two-server clusters garble every job already: the key is refused there.
  root["krb_evaluation"] = "\"layered\"";
  root["protocol"] = "\"gc2\"";
  expect_server_error(server_text(root, "", peer_table(2, "tcp://127.0.0.1:7202", z85(peer2))),
                      {"krb_evaluation", "only to protocol = \"rss3\""});
}

TEST_F(SettingsTest, DegradedServiceIsTwoPartyUnlessOff) {
  const auto defaults = load_server_settings(write("server.toml", server_text(server_root())));
  EXPECT_EQ(defaults.degraded_service, DegradedService::TwoParty);
  EXPECT_EQ(defaults.limits.heartbeat, std::chrono::milliseconds(100));
  EXPECT_EQ(defaults.limits.peer_down, std::chrono::milliseconds(500));
  EXPECT_EQ(defaults.limits.rejoin, std::chrono::milliseconds(1000));
  auto root = server_root();
  root["degraded_service"] = "\"off\"";
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(root))).degraded_service, DegradedService::Off);
  root["degraded_service"] = "\"two-party\"";
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(root))).degraded_service, DegradedService::TwoParty);
  root["degraded_service"] = "\"one-party\"";
  expect_server_error(server_text(root), {"degraded_service", "one of two-party, off"});
  const auto timed = load_server_settings(
      write("server.toml", server_text(server_root(), "heartbeat_ms = 50\npeer_down_ms = 300\nrejoin_ms = 2000")));
  EXPECT_EQ(timed.limits.heartbeat, std::chrono::milliseconds(50));
  EXPECT_EQ(timed.limits.peer_down, std::chrono::milliseconds(300));
  EXPECT_EQ(timed.limits.rejoin, std::chrono::milliseconds(2000));
  expect_server_error(server_text(server_root(), "heartbeat_ms = 500"), {"heartbeat_ms", "below peer_down_ms"});
  expect_server_error(server_text(server_root(), "peer_down_ms = 100"), {"peer_down_ms", "above heartbeat_ms"});
  // Two-server clusters have no third server to lose.
  root["degraded_service"] = "\"off\"";
  root["protocol"] = "\"gc2\"";
  expect_server_error(server_text(root, "", peer_table(2, "tcp://127.0.0.1:7202", z85(peer2))),
                      {"degraded_service", "only to protocol = \"rss3\""});
}

TEST_F(SettingsTest, EachRequiredServerKeyIsNamedWhenMissing) {
  for (const auto& [key, value] : server_root()) {
    auto root = server_root();
    root.erase(key);
    expect_server_error(server_text(root), {key, "missing"});
  }
  expect_server_error(server_text(server_root(), "", ""), {"peers", "missing"});
  expect_server_error(server_text(server_root(), "", std::nullopt, ""), {"clients", "missing"});
  // Keys of each peer table.
  const std::string peer_without_party =
      "[[peers]]\nendpoint = \"tcp://x:1\"\npublic_key = \"" + z85(peer2) + "\"\n" +
      peer_table(3, "tcp://y:1", z85(peer3));
  expect_server_error(server_text(server_root(), "", peer_without_party), {"peers[0].party", "missing"});
  const std::string peer_without_endpoint = peer_table(2, "tcp://x:1", z85(peer2)) + "[[peers]]\nparty = 3\npublic_key = \"" + z85(peer3) + "\"\n";
  expect_server_error(server_text(server_root(), "", peer_without_endpoint), {"peers[1].endpoint", "missing"});
  const std::string peer_without_key = "[[peers]]\nparty = 2\nendpoint = \"tcp://x:1\"\n" + peer_table(3, "tcp://y:1", z85(peer3));
  expect_server_error(server_text(server_root(), "", peer_without_key), {"peers[0].public_key", "missing"});
}

TEST_F(SettingsTest, UnknownServerKeysAreRejected) {
  auto root = server_root();
  root["partyy"] = "1";
  expect_server_error(server_text(root), {"partyy", "unknown key"});
  expect_server_error(server_text(server_root(), "max_batch_block = 64"), {"limits.max_batch_block", "unknown key"});
  expect_server_error(server_text(server_root(), "", default_peers() + "[peers.extra]\nx = 1\n"), {"unknown key"});
  const std::string peers = peer_table(2, "tcp://x:1", z85(peer2), "pubkey = \"x\"") + peer_table(3, "tcp://y:1", z85(peer3));
  expect_server_error(server_text(server_root(), "", peers), {"peers[0].pubkey", "unknown key"});
  expect_server_error(server_text(server_root(), "", std::nullopt, "[clients]\ncomputer = [\"" + z85(compute) + "\"]\n"),
                      {"clients.computer", "unknown key"});
  auto with_table = server_root();
  with_table["logging.level"] = "\"info\"";  // a dotted key makes a table named "logging"
  expect_server_error(server_text(with_table), {"logging", "unknown key"});
}

TEST_F(SettingsTest, BadServerValuesAreRejected) {
  struct Case {
    std::string key;
    std::string value;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> root_cases = {
      {"party", "0", {"party", "between 1 and 3"}},
      {"party", "4", {"party", "between 1 and 3"}},
      {"party", "-1", {"party", "between 1 and 3"}},
      {"party", "\"1\"", {"party", "must be an integer"}},
      {"party", "1.0", {"party", "must be an integer"}},
      {"party", "true", {"party", "must be an integer"}},
      {"client_endpoint", "\"\"", {"client_endpoint", "empty"}},
      {"client_endpoint", "\"http://x:1\"", {"client_endpoint", "tcp://"}},
      {"client_endpoint", "\"tcp://\"", {"client_endpoint", "nothing after"}},
      {"client_endpoint", "\"tcp://host\"", {"client_endpoint", "host:port"}},
      {"client_endpoint", "\"tcp://host:0\"", {"client_endpoint", "port"}},
      {"client_endpoint", "\"tcp://host:65536\"", {"client_endpoint", "port"}},
      {"client_endpoint", "\"tcp://host:7x\"", {"client_endpoint", "port"}},
      {"client_endpoint", "\"tcp://host :1\"", {"client_endpoint", "spaces"}},
      {"client_endpoint", "7101", {"client_endpoint", "must be a string"}},
      {"peer_endpoint", "\"tcp://127.0.0.1:7101\"", {"peer_endpoint", "differ"}},
      {"peer_endpoint", "\"inproc://\"", {"peer_endpoint", "nothing after"}},
      {"secret_key_file", "\"\"", {"secret_key_file", "empty"}},
      {"storage_path", "\"a\\u0000b\"", {"storage_path", "control character"}},
      {"storage_key_file", "[\"a\"]", {"storage_key_file", "must be a string"}},
      {"log_level", "\"verbose\"", {"log_level", "debug, info, warning, error"}},
      {"log_level", "\"INFO\"", {"log_level", "one of"}},
      {"limits", "3", {"limits", "must be a table"}},
  };
  for (const auto& c : root_cases) {
    auto root = server_root();
    root[c.key] = c.value;
    SCOPED_TRACE(c.key + " = " + c.value);
    try {
      (void)load_server_settings(write("server.toml", server_text(root)));
      ADD_FAILURE() << "accepted";
    } catch (const mpc::Error& e) {
      for (const auto& f : c.fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
    }
  }
  const std::vector<std::pair<std::string, std::string>> limit_cases = {
      {"max_batch_blocks = 100", "multiple of 64"},
      {"max_batch_blocks = 0", "between 64 and 1048576"},
      {"max_batch_blocks = 2097152", "between 64 and 1048576"},
      {"max_job_blocks = 0", "max_job_blocks"},
      {"max_job_blocks = 16777217", "max_job_blocks"},
      {"max_pending_jobs = 0", "max_pending_jobs"},
      {"max_pending_jobs = 65537", "max_pending_jobs"},
      {"peer_timeout_ms = 0", "peer_timeout_ms"},
      {"peer_timeout_ms = 600001", "peer_timeout_ms"},
      {"job_wait_ms = -5", "job_wait_ms"},
      {"sbox = \"fast\"", "auto, and32, depth4"},
      {"latency_batch_blocks = 16385", "between 0 and 16384"},
      {"max_batch_blocks = 64\nlatency_batch_blocks = 128", "between 0 and 64"},
      {"peer_timeout_ms = 1.5", "must be an integer"},
      {"gcm_nonce_ttl_s = 0", "between 1 and 604800"},
      {"gcm_nonce_ttl_s = 604801", "between 1 and 604800"},
      {"gcm_nonces_per_client = 0", "between 1 and 4194304"},
      {"gcm_nonces_per_client = 4194305", "between 1 and 4194304"},
      {"gcm_nonces_per_client = \"many\"", "gcm_nonces_per_client"},
  };
  for (const auto& [limits, fragment] : limit_cases) {
    SCOPED_TRACE(limits);
    expect_server_error(server_text(server_root(), limits), {"limits.", fragment});
  }
}

TEST_F(SettingsTest, PeerRulesAreEnforced) {
  const auto two = [&](int a, int b) {
    return peer_table(a, "tcp://x:1", z85(peer2)) + peer_table(b, "tcp://y:1", z85(peer3));
  };
  expect_server_error(server_text(server_root(), "", peer_table(2, "tcp://x:1", z85(peer2))),
                      {"peers", "exactly 2 entries, got 1"});
  expect_server_error(server_text(server_root(), "", default_peers() + peer_table(3, "tcp://z:1", z85(peer3))),
                      {"peers", "exactly 2 entries, got 3"});
  expect_server_error(server_text(server_root(), "", two(2, 2)), {"peers[1].party", "listed twice"});
  expect_server_error(server_text(server_root(), "", two(1, 3)), {"peers[0].party", "own party"});
  expect_server_error(server_text(server_root(), "", two(2, 4)), {"peers[1].party", "between 1 and 3"});
  expect_server_error(server_text(server_root(), "", peer_table(2, "tcp://x:1", z85(peer2)) +
                                                         peer_table(3, "tcp://x:1", z85(peer3))),
                      {"peers[1].endpoint", "listed twice"});
  expect_server_error(server_text(server_root(), "", "peers = [1, 2]\n"), {"peers", "array of tables"});
  expect_server_error(server_text(server_root(), "", "peers = []\n"), {"peers", "got 0"});
}

TEST_F(SettingsTest, TwoServerProtocolsTakeOnePeerAndTwoParties) {
  for (const char* protocol : {"gc2", "lut2"}) {
    SCOPED_TRACE(protocol);
    auto root = server_root();
    root["protocol"] = std::string("\"") + protocol + "\"";
    const std::string one_peer = peer_table(2, "tcp://127.0.0.1:7202", z85(peer2));
    const ServerSettings s = load_server_settings(write("server.toml", server_text(root, "", one_peer)));
    EXPECT_EQ(s.protocol, parse_protocol(protocol));
    EXPECT_EQ(party_count(s.protocol), 2);
    ASSERT_EQ(s.peers.size(), 1u);
    EXPECT_EQ(s.peers[0].party, 1);
    expect_server_error(server_text(root), {"peers", "exactly 1 entries, got 2"});
    expect_server_error(server_text(root, "", peer_table(3, "tcp://127.0.0.1:7203", z85(peer3))),
                        {"peers[0].party", "between 1 and 2"});
    root["party"] = "3";
    expect_server_error(server_text(root, "", one_peer), {"party", "between 1 and 2"});
  }
  auto root = server_root();
  root["protocol"] = "\"rss4\"";
  expect_server_error(server_text(root), {"protocol", "must be one of rss3, gc2, lut2"});
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(server_root()))).protocol, Protocol::Rss3);
}

TEST_F(SettingsTest, LookupTableSettingsOnlyForLut2) {
  auto root = server_root();
  root["protocol"] = "\"lut2\"";
  const std::string one_peer = peer_table(2, "tcp://127.0.0.1:7202", z85(peer2));
  const std::string lut = "[lut]\npreprocessing = \"dealer\"\npool_sboxes = 8192\npool_wait_ms = 50\n"
                          "dealer_endpoint = \"tcp://127.0.0.1:7120\"\n"
                          "dealer_public_key = \"" + z85(fresh_key()) + "\"\n";
  const ServerSettings s = load_server_settings(write("server.toml", server_text(root, "", lut + one_peer)));
  EXPECT_EQ(s.lut.preprocessing, LutPreprocessing::Dealer);
  EXPECT_EQ(s.lut.pool_sboxes, 8192u);
  EXPECT_EQ(s.lut.pool_wait, std::chrono::milliseconds(50));
  expect_server_error(server_text(root, "", "[lut]\npool_sboxes = 10\n" + one_peer), {"lut.pool_sboxes", "between"});
  expect_server_error(server_text(root, "", "[lut]\npreprocessing = \"magic\"\n" + one_peer),
                      {"lut.preprocessing", "must be one of ot, dealer"});
  // A job waiting for entries must not outlast the other server's patience.
  expect_server_error(server_text(root, "", "[lut]\npool_wait_ms = 1000\n" + one_peer),
                      {"lut", "pool_wait_ms (1000) must be below [limits] peer_timeout_ms (1000)"});
  root["protocol"] = "\"gc2\"";
  expect_server_error(server_text(root, "", lut + one_peer), {"lut", "only to protocol = \"lut2\""});
}

TEST_F(SettingsTest, LookupTableDealerNeedsItsEndpointAndKeyAndOnlyThen) {
  auto root = server_root();
  root["protocol"] = "\"lut2\"";
  const std::string one_peer = peer_table(2, "tcp://127.0.0.1:7202", z85(peer2));
  const PublicKey dealer = fresh_key();
  const std::string endpoint_line = "dealer_endpoint = \"tcp://10.0.0.3:7120\"\n";
  const std::string key_line = "dealer_public_key = \"" + z85(dealer) + "\"\n";
  const auto lut = [&](const std::string& preprocessing, const std::string& lines) {
    return "[lut]\n" + (preprocessing.empty() ? "" : "preprocessing = \"" + preprocessing + "\"\n") + lines + one_peer;
  };
  const ServerSettings s =
      load_server_settings(write("server.toml", server_text(root, "", lut("dealer", endpoint_line + key_line))));
  EXPECT_EQ(s.lut.preprocessing, LutPreprocessing::Dealer);
  EXPECT_EQ(s.lut.dealer_endpoint, "tcp://10.0.0.3:7120");
  EXPECT_EQ(s.lut.dealer_public_key, dealer);
  // The key may be a .pub file, relative to the configuration.
  mpc::transport::write_public_key_file(dir / "dealer.pub", dealer);
  const std::string by_file_line = "dealer_public_key = \"dealer.pub\"\n";
  const ServerSettings by_file =
      load_server_settings(write("server.toml", server_text(root, "", lut("dealer", endpoint_line + by_file_line))));
  EXPECT_EQ(by_file.lut.dealer_public_key, dealer);

  // Required with a dealer.
  expect_server_error(server_text(root, "", lut("dealer", key_line)), {"lut.dealer_endpoint"});
  expect_server_error(server_text(root, "", lut("dealer", endpoint_line)), {"lut.dealer_public_key"});
  expect_server_error(server_text(root, "", lut("dealer", "")), {"lut.dealer_endpoint"});
  // Refused without one, explicit or by default.
  for (const char* preprocessing : {"ot", ""}) {
    SCOPED_TRACE(preprocessing);
    expect_server_error(server_text(root, "", lut(preprocessing, endpoint_line)),
                        {"lut.dealer_endpoint", "applies only to preprocessing = \"dealer\""});
    expect_server_error(server_text(root, "", lut(preprocessing, key_line)),
                        {"lut.dealer_public_key", "applies only to preprocessing = \"dealer\""});
  }
  // Bad values.
  expect_server_error(server_text(root, "", lut("dealer", "dealer_endpoint = \"http://10.0.0.3\"\n" + key_line)),
                      {"lut.dealer_endpoint"});
  std::string not_a_key = z85(dealer);
  not_a_key[0] = '~';
  const std::string bad_key_line = "dealer_public_key = \"" + not_a_key + "\"\n";
  expect_server_error(server_text(root, "", lut("dealer", endpoint_line + bad_key_line)),
                      {"lut.dealer_public_key", "neither a z85 public key"});
  expect_server_error(server_text(root, "", lut("dealer", endpoint_line + "dealer_public_key = 7\n")),
                      {"lut.dealer_public_key"});
  expect_server_error(
      server_text(root, "", lut("dealer", endpoint_line + "dealer_public_key = \"missing.pub\"\n")),
      {"lut.dealer_public_key", "missing.pub"});
  // The dealer is a third party: not the peer under another name.
  const std::string peer_key_line = "dealer_public_key = \"" + z85(peer2) + "\"\n";
  expect_server_error(server_text(root, "", lut("dealer", endpoint_line + peer_key_line)),
                      {"lut", "dealer_public_key is the key of server 2"});
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

TEST_F(SettingsTest, PublicKeysInlineOrByPath) {
  // Relative to the configuration file's directory, not the working directory.
  fs::create_directory(dir / "keys");
  mpc::transport::write_public_key_file(dir / "keys" / "peer2.pub", peer2);
  mpc::transport::write_public_key_file(dir / "peer3.pub", peer3);
  mpc::transport::write_public_key_file(dir / "admin.pub", admin);
  const std::string peers = peer_table(2, "tcp://x:1", "keys/peer2.pub") +
                            peer_table(3, "tcp://y:1", (dir / "peer3.pub").string());
  const std::string clients =
      "[clients]\ncompute = [\"" + z85(compute) + "\", \"./admin.pub\"]\nadmin = [\"../" + dir.filename().string() +
      "/admin.pub\"]\n";
  const ServerSettings s = load_server_settings(write("server.toml", server_text(server_root(), "", peers, clients)));
  EXPECT_EQ(s.peers[0].public_key, peer2);
  EXPECT_EQ(s.peers[1].public_key, peer3);
  EXPECT_EQ(s.compute_clients, (std::vector<PublicKey>{compute, admin}));
  EXPECT_EQ(s.admin_clients, std::vector<PublicKey>{admin});
}

TEST_F(SettingsTest, BadPublicKeysAreRejected) {
  const auto with_peer2_key = [&](const std::string& key_text) {
    return server_text(server_root(), "", peer_table(2, "tcp://x:1", key_text) + peer_table(3, "tcp://y:1", z85(peer3)));
  };
  std::string short_key = z85(peer2);
  short_key.pop_back();
  expect_server_error(with_peer2_key(short_key), {"peers[0].public_key", "neither a z85 public key"});
  expect_server_error(with_peer2_key("missing.pub"), {"peers[0].public_key", "missing.pub"});
  // A file that is not a public key file.
  write("not-a-key.pub", "hello\n");
  expect_server_error(with_peer2_key("not-a-key.pub"), {"peers[0].public_key", "not-a-key.pub"});
  // A directory is not a key file.
  fs::create_directory(dir / "keydir");
  expect_server_error(with_peer2_key("keydir"), {"peers[0].public_key", "neither", "keydir"});
  // 40 characters but not canonical z85 ("#" groups overflow 2^32).
  expect_server_error(with_peer2_key(std::string(40, '#')), {"peers[0].public_key", "Z85"});
  expect_server_error(server_text(server_root(), "", "[[peers]]\nparty = 2\nendpoint = \"tcp://x:1\"\npublic_key = 5\n" +
                                                         peer_table(3, "tcp://y:1", z85(peer3))),
                      {"peers[0].public_key", "must be a string"});
}

TEST_F(SettingsTest, ClientRulesAreEnforced) {
  expect_server_error(server_text(server_root(), "", std::nullopt, "[clients]\n"), {"clients", "no client keys"});
  expect_server_error(server_text(server_root(), "", std::nullopt, "[clients]\ncompute = []\nadmin = []\n"),
                      {"clients", "no client keys"});
  expect_server_error(server_text(server_root(), "", std::nullopt,
                                  "[clients]\ncompute = [\"" + z85(compute) + "\", \"" + z85(compute) + "\"]\n"),
                      {"clients.compute[1]", "repeats"});
  expect_server_error(server_text(server_root(), "", std::nullopt, "[clients]\nadmin = \"" + z85(admin) + "\"\n"),
                      {"clients.admin", "must be an array"});
  expect_server_error(server_text(server_root(), "", std::nullopt, "[clients]\nadmin = [\"nope\"]\n"),
                      {"clients.admin[0]"});
  auto root = server_root();
  root["clients"] = "1";
  expect_server_error(server_text(root, "", std::nullopt, ""), {"clients", "must be a table"});
  // kadmind's enrol key is a key of its own.
  expect_server_error(server_text(server_root(), "", std::nullopt,
                                  "[clients]\ncompute = [\"" + z85(compute) + "\"]\nenrol = [\"" + z85(compute) + "\"]\n"),
                      {"clients.enrol", "compute names too"});
  const ServerSettings enrol = load_server_settings(write(
      "server.toml", server_text(server_root(), "", std::nullopt,
                                 "[clients]\ncompute = [\"" + z85(compute) + "\"]\nenrol = [\"" + z85(peer2) +
                                     "\"]\nadmin = [\"" + z85(admin) + "\"]\n")));
  EXPECT_EQ(enrol.enrol_clients, std::vector<PublicKey>{peer2});
  EXPECT_EQ(enrol.compute_clients, std::vector<PublicKey>{compute});
  // Only admins is fine.
  const ServerSettings s = load_server_settings(
      write("server.toml", server_text(server_root(), "", std::nullopt, "[clients]\nadmin = [\"" + z85(admin) + "\"]\n")));
  EXPECT_TRUE(s.compute_clients.empty());
  EXPECT_EQ(s.admin_clients.size(), 1u);
}

TEST_F(SettingsTest, TheMetricsEndpointIsOffUnlessNamedAndItsAddressIsChecked) {
  EXPECT_TRUE(load_server_settings(write("server.toml", server_text(server_root()))).metrics_listen.empty());
  for (const std::string listen : {"127.0.0.1:9464", "[::1]:9464", "mgmt.example.org:1"}) {
    auto root = server_root();
    root["metrics_listen"] = "\"" + listen + "\"";
    EXPECT_EQ(load_server_settings(write("server.toml", server_text(root))).metrics_listen, listen);
  }
  for (const std::string listen : {"9464", "host:", ":9464", "host:0", "host:70000", "host:94a4"}) {
    auto root = server_root();
    root["metrics_listen"] = "\"" + listen + "\"";
    expect_server_error(server_text(root), {"metrics_listen", "HOST:PORT"});
  }
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
