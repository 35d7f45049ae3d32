// CurveZMQ links over real loopback TCP: admission by pinned keys (ZAP), server key
// pinning, fail-fast sends, reconnection, size limits and malformed multipart input.
// Every wait has a deadline; the whole suite runs in a few seconds.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zmq.h>

#include <thread>

#include "common/error.hpp"
#include "transport/zmq_link.hpp"

namespace mpc::transport {
namespace {

using namespace std::chrono_literals;
using Bytes = std::vector<std::uint8_t>;

Bytes bytes_of(std::string_view text) { return Bytes(text.begin(), text.end()); }

// A fail-fast send retried until the connection is up (handshake done) or `limit` passes.
bool send_within(Connection& connection, const Bytes& data, std::chrono::milliseconds limit = 3000ms) {
  return connection.send_until(data, std::chrono::steady_clock::now() + limit);
}

// True if `send` kept returning false for the whole period.
bool never_sends(Connection& connection, std::chrono::milliseconds period) {
  const auto deadline = std::chrono::steady_clock::now() + period;
  while (std::chrono::steady_clock::now() < deadline) {
    if (connection.send(bytes_of("probe"))) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// A raw CURVE DEALER without ZMQ_IMMEDIATE: it queues messages before the handshake,
// so the listener would see them if the ZAP handler ever let the client in.
void* raw_curve_dealer(Context& context, const std::string& endpoint, const PublicKey& server_key,
                       const CurveKeyPair& own) {
  void* socket = zmq_socket(context.native(), ZMQ_DEALER);
  const int zero = 0;
  zmq_setsockopt(socket, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(socket, ZMQ_CURVE_SERVERKEY, server_key.data(), 32);
  zmq_setsockopt(socket, ZMQ_CURVE_PUBLICKEY, own.public_key.data(), 32);
  zmq_setsockopt(socket, ZMQ_CURVE_SECRETKEY, own.secret_key.data(), 32);
  EXPECT_EQ(zmq_connect(socket, endpoint.c_str()), 0);
  return socket;
}

class LinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_context.allow("clients", client_keys.public_key, "compute");
    listener = std::make_unique<Listener>(server_context, "tcp://127.0.0.1:*", server_keys, "clients");
    endpoint = listener->bound_endpoint();
  }
  std::unique_ptr<Connection> connect(const CurveKeyPair& keys, const PublicKey& server_key,
                                      const LinkOptions& options = {}) {
    return std::make_unique<Connection>(client_context, endpoint, server_key, keys, options);
  }
  // Sends until the listener has one message from `connection`; returns it.
  std::optional<ReceivedMessage> deliver(Connection& connection, const Bytes& data) {
    if (!send_within(connection, data)) return std::nullopt;
    return listener->receive(2000ms);
  }

  CurveKeyPair server_keys = generate_curve_key_pair();
  CurveKeyPair client_keys = generate_curve_key_pair();
  CurveKeyPair stranger_keys = generate_curve_key_pair();
  // Contexts outlive the sockets declared after them.
  Context server_context;
  Context client_context;
  std::unique_ptr<Listener> listener;
  std::string endpoint;
};

TEST_F(LinkTest, AllowedClientRoundTrip) {
  EXPECT_EQ(endpoint.rfind("tcp://127.0.0.1:", 0), 0u) << endpoint;
  auto connection = connect(client_keys, server_keys.public_key);
  const auto message = deliver(*connection, bytes_of("hello"));
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->data, bytes_of("hello"));
  EXPECT_EQ(message->sender, client_keys.public_key);
  EXPECT_EQ(message->role, "compute");
  EXPECT_FALSE(message->routing_id.empty());

  ASSERT_TRUE(listener->send(message->routing_id, bytes_of("world")));
  const auto reply = connection->receive(2000ms);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, bytes_of("world"));

  // Empty payloads travel too.
  ASSERT_TRUE(connection->send({}));
  const auto empty = listener->receive(2000ms);
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->data.empty());
  ASSERT_TRUE(listener->send(empty->routing_id, {}));
  const auto empty_reply = connection->receive(2000ms);
  ASSERT_TRUE(empty_reply.has_value());
  EXPECT_TRUE(empty_reply->empty());

  // Nothing else is pending: zero timeout returns at once.
  EXPECT_FALSE(listener->receive(0ms).has_value());
  EXPECT_FALSE(connection->receive(0ms).has_value());
}

TEST_F(LinkTest, ZapDomainIsEnforced) {
  int enforce = 0;
  std::size_t size = sizeof enforce;
  ASSERT_EQ(zmq_getsockopt(listener->native(), 93 /* ZMQ_ZAP_ENFORCE_DOMAIN */, &enforce, &size), 0);
  EXPECT_EQ(enforce, 1);
}

TEST_F(LinkTest, RolesAreKeptPerKeyAndLaterCallsReplaceThem) {
  server_context.allow("clients", stranger_keys.public_key, "compute");
  server_context.allow("clients", stranger_keys.public_key, "admin");
  auto connection = connect(stranger_keys, server_keys.public_key);
  const auto message = deliver(*connection, bytes_of("x"));
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->role, "admin");
  EXPECT_EQ(message->sender, stranger_keys.public_key);
  EXPECT_THROW(server_context.allow("clients", stranger_keys.public_key, "bad:role"), Error);
  EXPECT_THROW(server_context.allow("clients", stranger_keys.public_key, ""), Error);
  EXPECT_THROW(server_context.allow("", stranger_keys.public_key, "x"), Error);
}

TEST_F(LinkTest, UnknownClientKeyNeverGetsThrough) {
  auto stranger = connect(stranger_keys, server_keys.public_key);
  void* raw = raw_curve_dealer(client_context, endpoint, server_keys.public_key, stranger_keys);
  ASSERT_EQ(zmq_send(raw, "queued", 6, ZMQ_DONTWAIT), 6);  // queued before the (failing) handshake
  EXPECT_TRUE(never_sends(*stranger, 400ms));
  EXPECT_FALSE(listener->receive(200ms).has_value());
  zmq_close(raw);

  // The listener keeps serving allowed clients.
  auto connection = connect(client_keys, server_keys.public_key);
  const auto message = deliver(*connection, bytes_of("still here"));
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->data, bytes_of("still here"));
  EXPECT_EQ(message->sender, client_keys.public_key);
}

TEST_F(LinkTest, KeyAllowedInAnotherDomainIsRejected) {
  server_context.allow("peers", stranger_keys.public_key, "peer2");
  auto stranger = connect(stranger_keys, server_keys.public_key);
  EXPECT_TRUE(never_sends(*stranger, 400ms));
  EXPECT_FALSE(listener->receive(0ms).has_value());
}

TEST_F(LinkTest, AllowAfterListenerExistsTakesEffect) {
  auto stranger = connect(stranger_keys, server_keys.public_key);
  EXPECT_TRUE(never_sends(*stranger, 200ms));
  server_context.allow("clients", stranger_keys.public_key, "admin");
  // libzmq never retries after a ZAP refusal; the Connection reconnects after 1 s.
  const auto message = deliver(*stranger, bytes_of("late"));
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->role, "admin");
}

TEST_F(LinkTest, WrongServerKeyNeverConnects) {
  const CurveKeyPair impostor = generate_curve_key_pair();
  auto connection = connect(client_keys, impostor.public_key);
  void* raw = raw_curve_dealer(client_context, endpoint, impostor.public_key, client_keys);
  ASSERT_EQ(zmq_send(raw, "queued", 6, ZMQ_DONTWAIT), 6);
  EXPECT_TRUE(never_sends(*connection, 400ms));
  EXPECT_FALSE(listener->receive(100ms).has_value());
  zmq_close(raw);
}

TEST_F(LinkTest, PlainTextClientNeverGetsThrough) {
  void* raw = zmq_socket(client_context.native(), ZMQ_DEALER);
  const int zero = 0;
  zmq_setsockopt(raw, ZMQ_LINGER, &zero, sizeof zero);
  ASSERT_EQ(zmq_connect(raw, endpoint.c_str()), 0);
  ASSERT_EQ(zmq_send(raw, "plain", 5, ZMQ_DONTWAIT), 5);
  EXPECT_FALSE(listener->receive(300ms).has_value());
  zmq_close(raw);
}

TEST_F(LinkTest, SendFailsWhileServerIsDownAndRecoversAfterRestart) {
  auto connection = connect(client_keys, server_keys.public_key);
  ASSERT_TRUE(deliver(*connection, bytes_of("first")).has_value());

  listener.reset();
  // The disconnect is noticed asynchronously; from then on sends fail fast.
  const auto deadline = std::chrono::steady_clock::now() + 2000ms;
  bool failed = false;
  while (!failed && std::chrono::steady_clock::now() < deadline) {
    failed = !connection->send(bytes_of("lost"));
    if (!failed) std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(failed);
  EXPECT_TRUE(never_sends(*connection, 150ms));

  listener = std::make_unique<Listener>(server_context, endpoint, server_keys, "clients");
  const auto message = deliver(*connection, bytes_of("again"));
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->data, bytes_of("again"));
  ASSERT_TRUE(listener->send(message->routing_id, bytes_of("welcome back")));
  const auto reply = connection->receive(2000ms);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, bytes_of("welcome back"));
}

TEST_F(LinkTest, LostSessionsAreCounted) {
  auto connection = connect(client_keys, server_keys.public_key);
  ASSERT_TRUE(deliver(*connection, bytes_of("first")).has_value());
  const std::uint64_t before = connection->sessions_lost();
  EXPECT_EQ(connection->sessions_lost(), before);  // nothing lost while the server is up
  listener.reset();
  const auto deadline = std::chrono::steady_clock::now() + 2000ms;
  while (connection->sessions_lost() == before && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(connection->sessions_lost(), before + 1);
  // A working session after the restart is not a loss. (On a loaded host the first
  // reconnection may reach the new listener before it takes handshakes, and that refusal
  // counts, and a message sent meanwhile is lost with it: only what comes after a delivered
  // message must not move.)
  listener = std::make_unique<Listener>(server_context, endpoint, server_keys, "clients");
  bool delivered = false;
  for (int attempt = 0; attempt < 3 && !delivered; ++attempt) delivered = deliver(*connection, bytes_of("again")).has_value();
  ASSERT_TRUE(delivered);
  const std::uint64_t reconnected = connection->sessions_lost();
  EXPECT_GE(reconnected, before + 1);
  ASSERT_TRUE(deliver(*connection, bytes_of("and again")).has_value());
  EXPECT_EQ(connection->sessions_lost(), reconnected);
}

TEST_F(LinkTest, SessionUpFollowsTheHandshakeAndItsLoss) {
  auto connection = connect(client_keys, server_keys.public_key);
  ASSERT_TRUE(deliver(*connection, bytes_of("first")).has_value());
  EXPECT_TRUE(connection->session_up());
  listener.reset();
  auto deadline = std::chrono::steady_clock::now() + 2000ms;
  while (connection->session_up() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  EXPECT_FALSE(connection->session_up());
  listener = std::make_unique<Listener>(server_context, endpoint, server_keys, "clients");
  deadline = std::chrono::steady_clock::now() + 5000ms;
  while (!connection->session_up() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(connection->session_up());
  // A key the server refuses never makes a session.
  auto stranger = connect(generate_curve_key_pair(), server_keys.public_key);
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(stranger->session_up());
}

TEST_F(LinkTest, SendUntilWaitsForTheHandshakeAndGivesUpAtItsDeadline) {
  // A fresh connection is not up yet: send_until waits for it instead of failing.
  auto connection = connect(client_keys, server_keys.public_key);
  ASSERT_TRUE(connection->send_until(bytes_of("early"), std::chrono::steady_clock::now() + 3000ms));
  const auto message = listener->receive(2000ms);
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->data, bytes_of("early"));

  // A connection that can never come up: false, at the deadline and not long after.
  auto pinned_wrong = connect(client_keys, stranger_keys.public_key);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(pinned_wrong->send_until(bytes_of("lost"), start + 200ms));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 1500ms);
}

TEST_F(LinkTest, ReplyToUnknownRoutingIdReturnsFalse) {
  EXPECT_FALSE(listener->send("no-such-peer", bytes_of("x")));
  EXPECT_FALSE(listener->send("", bytes_of("x")));
  auto connection = connect(client_keys, server_keys.public_key);
  const auto message = deliver(*connection, bytes_of("hi"));
  ASSERT_TRUE(message.has_value());
  connection.reset();
  // Once the client is gone its routing id is unroutable (the listener notices asynchronously).
  const auto deadline = std::chrono::steady_clock::now() + 2000ms;
  bool refused = false;
  while (!refused && std::chrono::steady_clock::now() < deadline) {
    refused = !listener->send(message->routing_id, bytes_of("late reply"));
    if (!refused) std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(refused);
}

TEST_F(LinkTest, OversizedMessagesAreDroppedAndTheListenerSurvives) {
  LinkOptions small;
  small.max_message_bytes = 1024;
  listener = std::make_unique<Listener>(server_context, "tcp://127.0.0.1:*", server_keys, "clients", small);
  endpoint = listener->bound_endpoint();
  auto connection = connect(client_keys, server_keys.public_key);
  ASSERT_TRUE(deliver(*connection, Bytes(1024, 1)).has_value());  // at the limit: fine
  ASSERT_TRUE(connection->send(Bytes(1025, 2)));
  EXPECT_FALSE(listener->receive(300ms).has_value());
  // The connection was dropped; the client reconnects and small messages get through.
  const auto deadline = std::chrono::steady_clock::now() + 3000ms;
  std::optional<ReceivedMessage> message;
  while (!message && std::chrono::steady_clock::now() < deadline) {
    if (connection->send(bytes_of("small"))) message = listener->receive(100ms);
    else std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->data, bytes_of("small"));
}

TEST_F(LinkTest, OversizedReplyIsDroppedAndTheClientRecovers) {
  LinkOptions small;
  small.max_message_bytes = 1024;
  auto connection = connect(client_keys, server_keys.public_key, small);
  auto request = deliver(*connection, bytes_of("one"));
  ASSERT_TRUE(request.has_value());
  ASSERT_TRUE(listener->send(request->routing_id, Bytes(1025, 7)));
  EXPECT_FALSE(connection->receive(200ms).has_value());
  // libzmq gives up on a connection after a protocol error; the Connection restarts it.
  request = deliver(*connection, bytes_of("two"));
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->data, bytes_of("two"));
  ASSERT_TRUE(listener->send(request->routing_id, Bytes(1024, 8)));
  const auto reply = connection->receive(2000ms);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, Bytes(1024, 8));
}

TEST_F(LinkTest, TooSmallMessageLimitsAreRefused) {
  LinkOptions tiny;
  tiny.max_message_bytes = 1023;
  EXPECT_THROW(connect(client_keys, server_keys.public_key, tiny), Error);
  EXPECT_THROW(Listener(server_context, "tcp://127.0.0.1:*", server_keys, "clients", tiny), Error);
  tiny.max_message_bytes = -1;
  auto connection = connect(client_keys, server_keys.public_key, tiny);
  EXPECT_TRUE(deliver(*connection, Bytes(3 << 20, 5)).has_value());
}

TEST_F(LinkTest, MalformedMultipartMessagesAreDropped) {
  // Client -> listener: [routing id][a][b] is not [routing id][payload].
  void* raw = raw_curve_dealer(client_context, endpoint, server_keys.public_key, client_keys);
  ASSERT_EQ(zmq_send(raw, "a", 1, ZMQ_SNDMORE), 1);
  ASSERT_EQ(zmq_send(raw, "b", 1, 0), 1);
  ASSERT_EQ(zmq_send(raw, "good", 4, 0), 4);
  const auto message = listener->receive(2000ms);
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->data, bytes_of("good"));
  EXPECT_FALSE(listener->receive(100ms).has_value());

  // Listener -> client: a two-frame reply is dropped, a single frame is delivered.
  auto connection = connect(client_keys, server_keys.public_key);
  const auto request = deliver(*connection, bytes_of("req"));
  ASSERT_TRUE(request.has_value());
  void* router = listener->native();
  ASSERT_GE(zmq_send(router, request->routing_id.data(), request->routing_id.size(), ZMQ_SNDMORE), 0);
  ASSERT_EQ(zmq_send(router, "x", 1, ZMQ_SNDMORE), 1);
  ASSERT_EQ(zmq_send(router, "y", 1, 0), 1);
  ASSERT_TRUE(listener->send(request->routing_id, bytes_of("ok")));
  const auto reply = connection->receive(2000ms);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, bytes_of("ok"));
  zmq_close(raw);
}

TEST_F(LinkTest, WaitReadableReportsReadySockets) {
  auto connection = connect(client_keys, server_keys.public_key);
  void* const sockets[] = {connection->native(), listener->native()};
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(wait_readable(sockets, 50ms).empty());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 45ms);
  ASSERT_TRUE(send_within(*connection, bytes_of("ping")));
  const auto ready = wait_readable(sockets, 2000ms);
  ASSERT_EQ(ready, std::vector<std::size_t>{1});
  ASSERT_TRUE(listener->receive(0ms).has_value());
  EXPECT_THROW(wait_readable(std::vector<void*>{nullptr}, 0ms), Error);
}

TEST_F(LinkTest, WaitReadableSeesAQueuedMessageThatNoSignalAnnounces) {
  auto connection = connect(client_keys, server_keys.public_key);
  ASSERT_TRUE(send_within(*connection, bytes_of("one")));
  ASSERT_TRUE(send_within(*connection, bytes_of("two")));
  void* const sockets[] = {listener->native()};
  ASSERT_EQ(wait_readable(sockets, 2000ms), std::vector<std::size_t>{0});
  std::this_thread::sleep_for(50ms);  // both are in the listener's queue
  ASSERT_TRUE(listener->receive(0ms).has_value());
  // ZeroMQ signals a socket's descriptor when its queue fills, not for each message: the
  // second message is there with no signal pending.
  EXPECT_EQ(wait_readable(sockets, 5000ms), std::vector<std::size_t>{0});
  ASSERT_TRUE(listener->receive(0ms).has_value());
  EXPECT_TRUE(wait_readable(sockets, 50ms).empty());
}

TEST(Link, WaitReadableReportsDescriptorsThatHungUpSoTheirReaderLearnsWhy) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  const int descriptors[] = {ends[0]};
  EXPECT_TRUE(wait_readable({}, descriptors, 50ms).empty());
  ::close(ends[1]);
  EXPECT_EQ(wait_readable({}, descriptors, 2000ms), std::vector<std::size_t>{0});
  ::close(ends[0]);
}

TEST(Link, BindFailuresThrowTransportErrors) {
  Context context;
  const CurveKeyPair keys = generate_curve_key_pair();
  Listener first(context, "tcp://127.0.0.1:*", keys, "clients");
  LinkOptions impatient;
  impatient.bind_patience = 300ms;
  const auto started = std::chrono::steady_clock::now();
  try {
    Listener second(context, first.bound_endpoint(), keys, "clients", impatient);
    ADD_FAILURE() << "second bind succeeded";
  } catch (const Error& error) {
    EXPECT_EQ(error.component(), Component::Transport);
    EXPECT_NE(std::string(error.what()).find("in use"), std::string::npos) << error.what();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - started, 300ms);  // it waited for the port first
  EXPECT_THROW(Listener(context, "bogus://x", keys, "clients"), Error);
  EXPECT_THROW(Listener(context, "tcp://127.0.0.1:*", keys, "bad domain"), Error);
}

// A server started again at once: the port its predecessor held is bound once it is let go.
TEST(Link, AListenerWaitsForAPortLetGoWithinItsPatience) {
  Context context;
  const CurveKeyPair keys = generate_curve_key_pair();
  auto predecessor = std::make_unique<Listener>(context, "tcp://127.0.0.1:*", keys, "clients");
  const std::string endpoint = predecessor->bound_endpoint();
  std::thread letting_go([&] {
    std::this_thread::sleep_for(400ms);
    predecessor.reset();
  });
  const auto started = std::chrono::steady_clock::now();
  Listener successor(context, endpoint, keys, "clients");
  letting_go.join();
  EXPECT_EQ(successor.bound_endpoint(), endpoint);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 300ms);
}

TEST(Link, ContextsComeAndGoQuickly) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) {
    Context context;
    context.allow("d", PublicKey{}, "r");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2000ms);
}

}  // namespace
}  // namespace mpc::transport
