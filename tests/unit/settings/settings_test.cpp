// tests/unit/settings/settings_test.cpp: mpc-server.toml loading: the shipped example, every
// required key, unknown keys, bad values, peers, limits, security and degraded service, the
// lookup-table settings, public keys inline or by file, the clients and the metrics endpoint.
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

TEST_F(SettingsTest, MinimalServerGetsDefaultsAndSortedPeers) {
  const ServerSettings s = load_server_settings(write("server.toml", server_text(server_root())));
  EXPECT_EQ(s.party, 0);
  EXPECT_EQ(s.log_level, "info");
  EXPECT_EQ(s.limits.max_batch_blocks, ServerLimits{}.max_batch_blocks);
  EXPECT_EQ(s.limits.gcm_nonce_ttl, std::chrono::seconds(3600));
  EXPECT_EQ(s.limits.gcm_nonces_per_client, 262144u);
  EXPECT_EQ(s.limits.and_material_entries, 1048576u);
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
      "gcm_nonces_per_client = 1\nand_material_entries = 524288\n";
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
  EXPECT_EQ(s.limits.and_material_entries, 524288u);
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
  // Two-server clusters: gc2 is active unless asked otherwise; lut2 is passive and refuses
  // "active" rather than promise more than it does.
  const std::string two_server_peer = peer_table(2, "tcp://127.0.0.1:7202", z85(peer2));
  root.erase("security");
  root["protocol"] = "\"gc2\"";
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(root, "", two_server_peer))).security,
            Security::Active);
  root["security"] = "\"passive\"";
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(root, "", two_server_peer))).security,
            Security::Passive);
  root.erase("security");
  root["protocol"] = "\"lut2\"";
  EXPECT_EQ(load_server_settings(write("server.toml", server_text(root, "", two_server_peer))).security,
            Security::Passive);
  root["security"] = "\"active\"";
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
      {"latency_batch_blocks = 8193", "between 0 and 8192"},
      {"max_batch_blocks = 64\nlatency_batch_blocks = 128", "between 0 and 64"},
      {"peer_timeout_ms = 1.5", "must be an integer"},
      {"gcm_nonce_ttl_s = 0", "between 1 and 604800"},
      {"gcm_nonce_ttl_s = 604801", "between 1 and 604800"},
      {"gcm_nonces_per_client = 0", "between 1 and 4194304"},
      {"gcm_nonces_per_client = 4194305", "between 1 and 4194304"},
      {"gcm_nonces_per_client = \"many\"", "gcm_nonces_per_client"},
      {"and_material_entries = 1000", "between 65536 and 16777216"},
      {"and_material_entries = 16777217", "between 65536 and 16777216"},
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

}  // namespace
