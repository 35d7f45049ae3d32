// Key import as a server receives it, through the C interface against fake servers on
// loopback (the transport's own CurveZMQ listeners, which answer Ok): each server's share
// arrives sealed to that server's key and opens there alone, the frame on the wire holds no
// 16 bytes of it in clear, the opened shares reconstruct the key's material (replicated
// shares of three servers, XOR shares of two), and the process is not dumpable while the
// import holds the key, then dumpable again.
#include <gtest/gtest.h>
#include <sys/prctl.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "circuits/aes_reference.hpp"
#include "common/error.hpp"
#include "mpc_client.h"
#include "protocol/client_checks/share_checks.hpp"
#include "support/temp_dir.hpp"
#include "transport/curve_keys.hpp"
#include "transport/zmq_link.hpp"
#include "wire/client_messages.hpp"
#include "wire/sealed_share.hpp"

namespace {

using namespace mpc;
using Bytes = std::vector<std::uint8_t>;
using namespace std::chrono_literals;

struct FakeServer {
  transport::CurveKeyPair keys = transport::generate_curve_key_pair();
  std::unique_ptr<transport::Listener> listener;
  Bytes frame;               // the ImportKey frame as it arrived
  SecretBytes share;         // opened with this server's key
  int dumpable_seen = -1;    // the client process's setting while it waited for this reply
};

class ImportSealing : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    const transport::CurveKeyPair client = transport::generate_curve_key_pair();
    transport::write_secret_key_file(directory_ / "client.key", client);
    servers_.resize(static_cast<std::size_t>(GetParam()));
    std::ofstream out(directory_ / "cluster.toml");
    out << "protocol = \"" << (GetParam() == 3 ? "rss3" : "gc2") << "\"\ntimeout_ms = 5000\n"
        << "secret_key_file = \"" << (directory_ / "client.key").string() << "\"\n";
    for (std::size_t p = 0; p < servers_.size(); ++p) {
      context_.allow("clients", client.public_key, "admin");
      servers_[p].listener =
          std::make_unique<transport::Listener>(context_, "tcp://127.0.0.1:*", servers_[p].keys, "clients");
      out << "[[servers]]\nparty = " << p + 1 << "\nendpoint = \"" << servers_[p].listener->bound_endpoint()
          << "\"\npublic_key = \"" << transport::z85_encode(servers_[p].keys.public_key) << "\"\n";
    }
    out.close();
    char error[256] = {0};
    ASSERT_EQ(mpc_client_open((directory_ / "cluster.toml").c_str(), &client_, error, sizeof error), MPC_OK)
        << error;
  }
  void TearDown() override {
    mpc_client_close(client_);
  }

  // Answers one ImportKey at every server (Ok), keeping what each saw.
  void serve_one_import() {
    for (FakeServer& server : servers_) {
      const auto message = server.listener->receive(5000ms);
      if (!message) {
        ADD_FAILURE() << "no import arrived";
        return;
      }
      server.dumpable_seen = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
      server.frame = message->data;
      wire::Request request = wire::decode_request(message->data);
      auto* import = std::get_if<wire::ImportKeyRequest>(&request);
      if (import == nullptr) {
        ADD_FAILURE() << "not an import";
        return;
      }
      server.share = wire::open_sealed_share(import->key, import->sealed_share, server.keys.public_key,
                                             server.keys.secret_key);
      wire::Reply reply;
      reply.id = import->id;
      server.listener->send(message->routing_id, wire::encode_reply(reply));
    }
  }

  test_support::TempDir temp_{"mpc-import-sealing"};
  const std::filesystem::path directory_ = temp_.path();
  transport::Context context_;
  std::vector<FakeServer> servers_;
  mpc_client* client_ = nullptr;
};

INSTANTIATE_TEST_SUITE_P(Servers, ImportSealing, ::testing::Values(3, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == 3 ? "ThreeServers" : "TwoServers";
                         });

TEST_P(ImportSealing, SharesArriveSealedAndTheProcessIsNotDumpableMeanwhile) {
  ASSERT_EQ(::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
  Bytes key(16);
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(0x10 + 7 * i);
  const Bytes material = circuits::aes_expand_key(key);

  std::thread servers([&] { serve_one_import(); });
  const int rc = mpc_client_import_key(client_, "sealed-test", 1, MPC_AES128, key.data(), key.size());
  servers.join();
  ASSERT_EQ(rc, MPC_OK) << mpc_client_last_error(client_);
  EXPECT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);  // the earlier setting is back

  const std::size_t copies = GetParam() == 3 ? 2 : 1;
  for (std::size_t p = 0; p < servers_.size(); ++p) {
    const FakeServer& server = servers_[p];
    EXPECT_EQ(server.dumpable_seen, 0) << "server " << p + 1;
    // A two-server share comes with its checks (wire::share_check_bytes) after it.
    ASSERT_EQ(server.share.size(),
              copies * material.size() + (copies == 1 ? wire::share_check_bytes(wire::KeyAlgorithm::Aes128) : 0))
        << "server " << p + 1;
    // No 16-byte window of the share is in the frame that crossed ZeroMQ.
    for (std::size_t at = 0; at + 16 <= server.share.size(); at += 16) {
      const auto window = server.share.span().subspan(at, 16);
      EXPECT_EQ(std::search(server.frame.begin(), server.frame.end(), window.begin(), window.end()),
                server.frame.end())
          << "server " << p + 1 << " byte " << at;
    }
    // Only this server's key opens it.
    wire::Request request = wire::decode_request(server.frame);
    const auto& import = std::get<wire::ImportKeyRequest>(request);
    const FakeServer& other = servers_[(p + 1) % servers_.size()];
    EXPECT_THROW(wire::open_sealed_share(import.key, import.sealed_share, other.keys.public_key,
                                         other.keys.secret_key),
                 FormatError);
  }
  // The opened shares reconstruct the material: v = x_{i-1} ^ a_i (replicated), s_1 ^ s_2 (XOR).
  Bytes opened(material.size());
  for (std::size_t b = 0; b < material.size(); ++b)
    opened[b] = GetParam() == 3
                    ? static_cast<std::uint8_t>(servers_[0].share[b] ^ servers_[1].share[material.size() + b])
                    : static_cast<std::uint8_t>(servers_[0].share[b] ^ servers_[1].share[b]);
  EXPECT_EQ(opened, material);
  // Each check holds its peer to the share it got: the tag one server holds is the peer's share
  // hashed under its key, XOR the peer's blinding.
  if (GetParam() == 2) {
    const auto material_of = [&](int p) { return servers_[p].share.span().first(material.size()); };
    const auto check_of = [&](int p) {
      return client_checks::parse_share_check(servers_[p].share.span().subspan(material.size()));
    };
    for (int p = 0; p < 2; ++p)
      EXPECT_EQ(check_of(p).segments.at(0).peer_tag,
                client_checks::share_tag(check_of(p).own_key, material_of(1 - p),
                                         check_of(1 - p).segments.at(0).own_blinding))
          << "server " << p + 1;
    EXPECT_NE(check_of(0).own_key, check_of(1).own_key);
  }
}

}  // namespace

namespace {

// An aes256-gcm key's checks cover its round keys alone (wire::share_check_segments): a share
// of its GHASH powers needs none, and checking its 16 KiB would cost every job an input per bit.
TEST_P(ImportSealing, AGcmKeysCheckCoversItsRoundKeys) {
  Bytes key(32);
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(0x21 + 5 * i);
  std::thread servers([&] { serve_one_import(); });
  const int rc = mpc_client_import_key(client_, "sealed-gcm", 1, MPC_AES256_GCM, key.data(), key.size());
  servers.join();
  ASSERT_EQ(rc, MPC_OK) << mpc_client_last_error(client_);
  const std::size_t material = wire::material_bytes(wire::KeyAlgorithm::Aes256Gcm);
  if (GetParam() == 3) {
    // Three servers hold replicated shares and no checks.
    for (const auto& server : servers_) EXPECT_EQ(server.share.size(), 2 * material);
    return;
  }
  ASSERT_EQ(wire::share_check_segments(wire::KeyAlgorithm::Aes256Gcm).size(), 1u);
  ASSERT_EQ(wire::share_check_segments(wire::KeyAlgorithm::Aes256Gcm)[0].bytes, wire::kGcmRoundKeyBytes);
  const auto check_of = [&](int p) {
    return client_checks::parse_share_check(servers_[p].share.span().subspan(material));
  };
  for (int p = 0; p < 2; ++p) {
    const auto peer = servers_[1 - p].share.span();
    const auto blinding = check_of(1 - p).segments.at(0).own_blinding;
    EXPECT_EQ(check_of(p).segments.at(0).peer_tag,
              client_checks::share_tag(check_of(p).own_key, peer.first(wire::kGcmRoundKeyBytes), blinding))
        << "server " << p + 1;
    EXPECT_NE(check_of(p).segments.at(0).peer_tag, client_checks::share_tag(check_of(p).own_key, peer.first(material), blinding));
  }
}

}  // namespace

namespace {

// A Kerberos key's checks come per segment (wire::share_check_segments): each usage's block and
// the PRF material, each tag over that segment of the peer's share alone, so that a job feeds
// and hashes the block of its usage, not the whole material.
TEST_P(ImportSealing, AKerberosKeysChecksComePerSegment) {
  Bytes key(16);
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(0x41 + 3 * i);
  std::thread servers([&] { serve_one_import(); });
  const int rc = mpc_client_import_key(client_, "sealed-krb", 1, MPC_AES128_CTS_HMAC_SHA1_96, key.data(), key.size());
  servers.join();
  ASSERT_EQ(rc, MPC_OK) << mpc_client_last_error(client_);
  if (GetParam() == 3) return;  // three servers hold replicated shares and no checks
  const auto algorithm = wire::KeyAlgorithm::Aes128CtsHmacSha1;
  const std::size_t material = wire::material_bytes(algorithm);
  const auto segments = wire::share_check_segments(algorithm);
  ASSERT_EQ(segments.size(), wire::kKrbUsageCount + 1);
  EXPECT_EQ(segments.back().offset + segments.back().bytes, material);
  for (std::size_t i = 1; i < segments.size(); ++i) EXPECT_EQ(segments[i].offset, segments[i - 1].offset + segments[i - 1].bytes);
  const auto check_of = [&](int p) {
    EXPECT_EQ(servers_[p].share.size(), material + wire::share_check_bytes(algorithm));
    return client_checks::parse_share_check(servers_[p].share.span().subspan(material));
  };
  for (int p = 0; p < 2; ++p) {
    const auto own = check_of(p), peer_check = check_of(1 - p);
    ASSERT_EQ(own.segments.size(), segments.size());
    const auto peer = servers_[1 - p].share.span();
    for (std::size_t i = 0; i < segments.size(); ++i)
      EXPECT_EQ(own.segments[i].peer_tag,
                client_checks::share_tag(own.own_key, peer.subspan(segments[i].offset, segments[i].bytes),
                                         peer_check.segments[i].own_blinding))
          << "server " << p + 1 << " segment " << i;
  }
}

}  // namespace
