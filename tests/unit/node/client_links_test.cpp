// The shell's side of clients' data links (node/client_links.hpp) over real loopback links:
// requests come out with the client's key and the role that key has, answers go back on the
// link their routing id names, a key's links are capped, and a client that stops reading
// loses its link instead of holding up the shell.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "common/log.hpp"
#include "node/client_links.hpp"
#include "transport/curve_keys.hpp"
#include "transport/data_link.hpp"
#include "transport/link_handshake.hpp"

namespace mpc::node {
namespace {

using namespace std::chrono_literals;
using Bytes = std::vector<std::uint8_t>;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kMaxRequest = 4096;

// One turn of the shell's loop: a poll, then whatever arrived.
void serve_once(ClientLinks& links, std::vector<transport::ReceivedMessage>& out) {
  std::vector<pollfd> entries;
  for (const int descriptor : links.descriptors()) entries.push_back({descriptor, POLLIN, 0});
  ::poll(entries.data(), entries.size(), 100);
  std::vector<int> readable;
  for (const auto& entry : entries)
    if (entry.revents != 0) readable.push_back(entry.fd);
  links.receive(readable, 4096, [&](transport::ReceivedMessage& message) { out.push_back(std::move(message)); });
}

class ClientLinksTest : public ::testing::Test {
 protected:
  ClientLinksTest()
      : server(transport::generate_curve_key_pair()),
        compute(transport::generate_curve_key_pair()),
        admin(transport::generate_curve_key_pair()),
        both(transport::generate_curve_key_pair()),
        enrol(transport::generate_curve_key_pair()),
        listener("tcp://127.0.0.1:*", server),
        links({compute.public_key, both.public_key}, {enrol.public_key}, {admin.public_key, both.public_key}, kMaxRequest,
              log) {
    for (const auto& key : links.keys()) listener.allow(key);
  }

  // A client's link, connected and handed to the shell as the data plane would.
  std::unique_ptr<transport::DataLink> connect(const transport::CurveKeyPair& client) {
    auto accepted = std::async(std::launch::async, [&] { return listener.accept(Clock::now() + 3s); });
    auto link = transport::DataLink::connect(listener.bound_endpoint(), client, server.public_key, 0);
    auto server_end = accepted.get();
    if (!server_end) throw std::runtime_error("no link accepted");
    links.adopt(std::move(server_end));
    return link;
  }

  void serve_once(std::vector<transport::ReceivedMessage>& out) { node::serve_once(links, out); }

  // The requests that arrive within a few seconds, until `expected` have.
  std::vector<transport::ReceivedMessage> requests(std::size_t expected, std::chrono::milliseconds within = 3s) {
    std::vector<transport::ReceivedMessage> out;
    const auto deadline = Clock::now() + within;
    while (out.size() < expected && Clock::now() < deadline) serve_once(out);
    return out;
  }

  Logger log{"test"};
  transport::CurveKeyPair server, compute, admin, both, enrol;
  transport::DataListener listener;
  ClientLinks links;
};

TEST_F(ClientLinksTest, RequestsCarryTheKeyAndItsRoleAndAnswersGoBackOnTheirLink) {
  auto compute_link = connect(compute);
  auto admin_link = connect(admin);
  auto both_link = connect(both);
  auto enrol_link = connect(enrol);
  compute_link->send({Bytes{1, 2, 3}}, Clock::now() + 1s);
  admin_link->send({Bytes{4}}, Clock::now() + 1s);
  both_link->send({Bytes{5}}, Clock::now() + 1s);
  enrol_link->send({Bytes{6}}, Clock::now() + 1s);
  auto received = requests(4);
  ASSERT_EQ(received.size(), 4u);
  std::map<Bytes, transport::ReceivedMessage*> by_data;
  for (auto& message : received) by_data[message.data] = &message;
  const Bytes from_compute{1, 2, 3}, from_admin{4}, from_both{5};
  ASSERT_TRUE(by_data.contains(from_compute) && by_data.contains(from_admin) && by_data.contains(from_both));
  EXPECT_EQ(by_data[from_compute]->sender, compute.public_key);
  EXPECT_EQ(by_data[from_compute]->role, "compute");
  EXPECT_EQ(by_data[from_admin]->sender, admin.public_key);
  EXPECT_EQ(by_data[from_admin]->role, "admin");
  EXPECT_EQ(by_data[from_both]->role, "admin");  // a key on both lists is an admin, as on CurveZMQ
  ASSERT_TRUE(by_data.contains(Bytes{6}));
  EXPECT_EQ(by_data[Bytes{6}]->role, "enrol");
  for (const auto& message : received) EXPECT_TRUE(ClientLinks::is_link_id(message.routing_id));
  EXPECT_NE(by_data[from_admin]->routing_id, by_data[from_both]->routing_id);
  // ZeroMQ's own routing ids are five bytes starting with zero: never a link's.
  EXPECT_FALSE(ClientLinks::is_link_id(std::string("\0\x12\x34\x56\x78", 5)));

  ASSERT_TRUE(links.send(by_data[from_admin]->routing_id, Bytes{9, 9}, Clock::now() + 1s));
  Bytes answer;
  ASSERT_TRUE(admin_link->receive(answer, Clock::now() + 2s));
  EXPECT_EQ(answer, (Bytes{9, 9}));
  Bytes nothing;
  EXPECT_FALSE(compute_link->receive(nothing, Clock::now() + 50ms));
  EXPECT_FALSE(both_link->receive(nothing, Clock::now() + 50ms));
}

TEST_F(ClientLinksTest, RequestsReadAheadPastTheLimitAreServedWithoutAnotherPoll) {
  auto link = connect(compute);
  for (std::uint8_t i = 0; i < 3; ++i) link->send({Bytes{i}}, Clock::now() + 1s);
  std::this_thread::sleep_for(50ms);
  std::vector<int> readable;
  for (const int descriptor : links.descriptors()) readable.push_back(descriptor);
  std::vector<Bytes> got;
  const auto keep = [&](transport::ReceivedMessage& message) { got.push_back(message.data); };
  links.receive(readable, 1, keep);
  ASSERT_EQ(got.size(), 1u);
  // The other two came off the socket with the first: no poll would report them.
  EXPECT_TRUE(links.buffered());
  links.receive({}, 1, keep);
  links.receive({}, 1, keep);
  EXPECT_EQ(got, (std::vector<Bytes>{{0}, {1}, {2}}));
  EXPECT_FALSE(links.buffered());
}

TEST_F(ClientLinksTest, AClosedLinkIsDroppedAndItsAnswersAreRefused) {
  auto link = connect(compute);
  link->send({Bytes{7}}, Clock::now() + 1s);
  auto received = requests(1);
  ASSERT_EQ(received.size(), 1u);
  link.reset();
  const auto deadline = Clock::now() + 3s;
  while (links.size() != 0 && Clock::now() < deadline) serve_once(received);
  EXPECT_EQ(links.size(), 0u);
  EXPECT_FALSE(links.send(received[0].routing_id, Bytes{1}, Clock::now() + 100ms));
}

TEST_F(ClientLinksTest, ARequestOverTheLimitClosesItsLink) {
  auto link = connect(compute);
  link->send({Bytes(kMaxRequest, 1)}, Clock::now() + 1s);
  EXPECT_EQ(requests(1).size(), 1u);
  link->send({Bytes(kMaxRequest + 1, 2)}, Clock::now() + 1s);
  EXPECT_TRUE(requests(1, 500ms).empty());
  EXPECT_EQ(links.size(), 0u);
  Bytes frame;
  EXPECT_THROW((void)link->receive(frame, Clock::now() + 2s), PeerError);
}

TEST_F(ClientLinksTest, OneKeyHoldsAtMostItsShareOfLinks) {
  std::vector<std::unique_ptr<transport::DataLink>> own;
  for (std::size_t i = 0; i < ClientLinks::kMaxLinksPerKey; ++i) own.push_back(connect(compute));
  auto other = connect(admin);
  (void)links.descriptors();
  EXPECT_EQ(links.size(), ClientLinks::kMaxLinksPerKey + 1);
  auto newest = connect(compute);
  (void)links.descriptors();
  EXPECT_EQ(links.size(), ClientLinks::kMaxLinksPerKey + 1);
  // The oldest of that key was closed; the newest and the other key's link still serve.
  Bytes frame;
  EXPECT_THROW((void)own.front()->receive(frame, Clock::now() + 2s), PeerError);
  newest->send({Bytes{1}}, Clock::now() + 1s);
  other->send({Bytes{2}}, Clock::now() + 1s);
  EXPECT_EQ(requests(2).size(), 2u);
}

// Whether the key has room for one more link, asked as a handshake asks and given back.
bool has_room(ClientLinks& links, const transport::PublicKey& key) {
  if (!links.reserve(key)) return false;
  links.release(key);
  return true;
}

// As the data plane wires them: the listener asks the links whether a key has room before a
// link comes up, so a key at its limit is refused in the handshake (its client goes by
// CurveZMQ) and no link it already uses is closed under a request.
TEST(ClientLinksAdmission, AKeyAtItsLimitIsRefusedInTheHandshakeAndKeepsItsLinks) {
  const Logger log{"test"};
  const auto server = transport::generate_curve_key_pair();
  const auto client = transport::generate_curve_key_pair();
  const auto other = transport::generate_curve_key_pair();
  transport::DataListener listener("tcp://127.0.0.1:*", server);
  ClientLinks links({client.public_key, other.public_key}, {}, {}, kMaxRequest, log, 2);
  for (const auto& key : links.keys()) listener.allow(key);
  listener.admit_while([&](const transport::PublicKey& key) { return links.reserve(key); },
                       [&](const transport::PublicKey& key) { links.release(key); });
  const auto connect = [&](const transport::CurveKeyPair& keys) {
    auto accepted = std::async(std::launch::async, [&] { return listener.accept(Clock::now() + 2s); });
    std::unique_ptr<transport::DataLink> link;
    try {
      link = transport::DataLink::connect(listener.bound_endpoint(), keys, server.public_key, 0);
    } catch (const PeerError&) {
    }
    if (auto server_end = accepted.get()) links.adopt(std::move(server_end));
    return link;
  };
  auto first = connect(client);
  auto second = connect(client);
  ASSERT_TRUE(first && second);
  EXPECT_FALSE(has_room(links, client.public_key));
  EXPECT_EQ(connect(client), nullptr) << "a third link of the key came up";
  EXPECT_EQ(listener.refused(), 1u);
  EXPECT_NE(listener.last_refusal().find("holds as many as it may"), std::string::npos) << listener.last_refusal();
  auto others = connect(other);  // another key still has its own room
  ASSERT_TRUE(others);

  // Both links of the key still carry requests and answers.
  first->send({Bytes{1}}, Clock::now() + 1s);
  second->send({Bytes{2}}, Clock::now() + 1s);
  std::vector<transport::ReceivedMessage> received;
  for (const auto deadline = Clock::now() + 3s; received.size() < 2 && Clock::now() < deadline;)
    serve_once(links, received);
  ASSERT_EQ(received.size(), 2u);
  for (const auto& message : received) EXPECT_TRUE(links.send(message.routing_id, Bytes{7}, Clock::now() + 1s));
  Bytes answer;
  EXPECT_TRUE(first->receive(answer, Clock::now() + 2s));
  EXPECT_TRUE(second->receive(answer, Clock::now() + 2s));

  // Once one closes, the key has room again.
  first.reset();
  for (const auto deadline = Clock::now() + 3s; !has_room(links, client.public_key) && Clock::now() < deadline;)
    serve_once(links, received);
  EXPECT_TRUE(has_room(links, client.public_key));

  // A handshake that fails after the listener held a place gives the place back: a client that
  // says hello under the key and leaves.
  {
    const std::string endpoint = listener.bound_endpoint();
    const int port = std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
    auto accepted = std::async(std::launch::async, [&] { return listener.accept(Clock::now() + 1s); });
    const int raw = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(raw, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(raw, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
    const auto hello = transport::encode_hello({transport::generate_curve_key_pair().public_key, client.public_key, 0});
    ASSERT_EQ(::send(raw, hello.data(), hello.size(), MSG_NOSIGNAL), static_cast<ssize_t>(hello.size()));
    ::close(raw);
    EXPECT_EQ(accepted.get(), nullptr);
  }
  EXPECT_TRUE(has_room(links, client.public_key)) << "the failed handshake kept its place";
  EXPECT_NE(connect(client), nullptr);
  EXPECT_FALSE(has_room(links, client.public_key));
}

TEST_F(ClientLinksTest, AClientThatStopsReadingLosesItsLink) {
  auto link = connect(compute);
  link->send({Bytes{1}}, Clock::now() + 1s);
  auto received = requests(1);
  ASSERT_EQ(received.size(), 1u);
  const Bytes large(1 << 20, 0x5a);
  bool refused = false;
  const auto started = Clock::now();
  for (int i = 0; i < 256 && !refused; ++i)
    refused = !links.send(received[0].routing_id, large, Clock::now() + 100ms);
  EXPECT_TRUE(refused) << "256 MiB of answers fit in the socket's buffers";
  EXPECT_LT(Clock::now() - started, 30s);
  EXPECT_EQ(links.size(), 0u);
}

}  // namespace
}  // namespace mpc::node
