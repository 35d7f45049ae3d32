// Data links over real loopback TCP: the frame format against an independent AES-256-GCM,
// rekeying, admission by pinned keys, and a man in the middle that alters, replays,
// reorders, drops or cuts frames, each refused, after which a new link carries data.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <poll.h>
#include <sodium.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <atomic>
#include <future>
#include <mutex>
#include <thread>

#include "common/error.hpp"
#include "transport/data_link.hpp"
#include "transport/link_handshake.hpp"

namespace mpc::transport {
namespace {

using namespace std::chrono_literals;
using Bytes = std::vector<std::uint8_t>;
using Clock = std::chrono::steady_clock;

const std::chrono::milliseconds kHandshakeTimeout = DataLinkOptions{}.handshake_timeout;

Clock::time_point in(std::chrono::milliseconds period) { return Clock::now() + period; }

Bytes pattern(std::size_t size, std::uint8_t seed) {
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(seed + 31 * i + (i >> 8));
  return out;
}

// The frame format written out independently: AES-256-GCM with nonce 0^32 || counter and
// the length header as associated data.
Bytes reference_open(std::span<const std::uint8_t> key, std::uint64_t counter, std::span<const std::uint8_t> frame) {
  std::uint8_t nonce[12] = {};
  for (int i = 0; i < 8; ++i) nonce[4 + i] = static_cast<std::uint8_t>(counter >> (56 - 8 * i));
  const std::size_t length = frame.size() - kFrameHeaderBytes - kFrameTagBytes;
  Bytes text(length);
  EVP_CIPHER_CTX* context = EVP_CIPHER_CTX_new();
  int written = 0;
  bool ok = EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nullptr, key.data(), nonce) == 1 &&
            EVP_DecryptUpdate(context, nullptr, &written, frame.data(), kFrameHeaderBytes) == 1 &&
            EVP_DecryptUpdate(context, text.data(), &written, frame.data() + kFrameHeaderBytes,
                              static_cast<int>(length)) == 1 &&
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, kFrameTagBytes,
                                const_cast<std::uint8_t*>(frame.data() + kFrameHeaderBytes + length)) == 1 &&
            EVP_DecryptFinal_ex(context, text.data() + length, &written) == 1;
  EVP_CIPHER_CTX_free(context);
  if (!ok) throw std::runtime_error("reference AES-256-GCM refused the frame");
  return text;
}

Bytes seal_frame(FrameCipher& cipher, std::span<const std::uint8_t> text) {
  Bytes frame(kFrameHeaderBytes + text.size() + kFrameTagBytes);
  cipher.seal({text}, frame.data(), frame.data() + kFrameHeaderBytes, frame.data() + kFrameHeaderBytes + text.size());
  return frame;
}

bool open_frame(FrameCipher& cipher, Bytes frame, Bytes& text) {
  const std::size_t length = frame.size() - kFrameHeaderBytes - kFrameTagBytes;
  text.assign(frame.begin() + kFrameHeaderBytes, frame.begin() + kFrameHeaderBytes + length);
  return cipher.open(frame.data(), text, frame.data() + kFrameHeaderBytes + length);
}

TEST(FrameCipher, FramesAreAes256GcmWithTheCounterAsNonceAndTheLengthAuthenticated) {
  const Bytes key = pattern(32, 7);
  FrameCipher sealer(key);
  const Bytes first = pattern(100, 1), second = pattern(5000, 2);
  Bytes frame0(kFrameHeaderBytes + 100 + kFrameTagBytes);
  // Two parts make one plaintext.
  sealer.seal({std::span(first).first(30), std::span(first).subspan(30)}, frame0.data(), frame0.data() + 4,
              frame0.data() + 4 + 100);
  const Bytes frame1 = seal_frame(sealer, second);
  EXPECT_EQ(frame_length(frame0.data()), 100u);
  EXPECT_EQ(reference_open(key, 0, frame0), first);
  EXPECT_EQ(reference_open(key, 1, frame1), second);
  EXPECT_THROW(reference_open(key, 0, frame1), std::runtime_error);

  FrameCipher opener(key);
  Bytes text;
  ASSERT_TRUE(open_frame(opener, frame0, text));
  EXPECT_EQ(text, first);
  ASSERT_TRUE(open_frame(opener, frame1, text));
  EXPECT_EQ(text, second);
}

// Every backend this CPU runs: OpenSSL's, and the VAES one where the CPU has it.
std::vector<FrameCipherBackend> backends() {
  std::vector<FrameCipherBackend> all{FrameCipherBackend::OpenSsl};
  if (FrameCipher(pattern(32, 1)).backend() == FrameCipherBackend::Vaes) all.push_back(FrameCipherBackend::Vaes);
  return all;
}

TEST(FrameCipher, EveryAlteredByteAndEveryOutOfOrderFrameFails) {
  for (const auto backend : backends()) {
    const Bytes key = pattern(32, 9);
    FrameCipher sealer(key, kDefaultRekeyFrames, backend);
    const Bytes frame0 = seal_frame(sealer, pattern(300, 3));
    const Bytes frame1 = seal_frame(sealer, pattern(64, 4));
    for (std::size_t at = 0; at < frame0.size(); ++at) {
      FrameCipher opener(key, kDefaultRekeyFrames, backend);
      Bytes altered = frame0, text;
      altered[at] ^= 0x20;
      // A changed length no longer matches the ciphertext it comes with.
      EXPECT_FALSE(open_frame(opener, altered, text)) << "byte " << at;
      EXPECT_TRUE(std::all_of(text.begin(), text.end(), [](std::uint8_t b) { return b == 0; })) << "byte " << at;
    }
    Bytes text;
    FrameCipher reordered(key, kDefaultRekeyFrames, backend);
    EXPECT_FALSE(open_frame(reordered, frame1, text));
    FrameCipher replayed(key, kDefaultRekeyFrames, backend);
    ASSERT_TRUE(open_frame(replayed, frame0, text));
    EXPECT_FALSE(open_frame(replayed, frame0, text));
    FrameCipher other_key(pattern(32, 10), kDefaultRekeyFrames, backend);
    EXPECT_FALSE(open_frame(other_key, frame0, text));
  }
}

// The VAES backend (where the CPU has it) seals byte for byte what OpenSSL seals, at every
// length around its sixteen-block runs and its four-block tail, from parts split anywhere, and
// each opens the other's frames.
TEST(FrameCipher, BackendsSealTheSameFramesAndOpenEachOthers) {
  const auto all = backends();
  if (all.size() < 2) GTEST_SKIP() << "no VAES with VPCLMULQDQ on this CPU";
  const Bytes key = pattern(32, 21);
  FrameCipher openssl_sealer(key, kDefaultRekeyFrames, FrameCipherBackend::OpenSsl);
  FrameCipher vaes_sealer(key, kDefaultRekeyFrames, FrameCipherBackend::Vaes);
  FrameCipher openssl_opener(key, kDefaultRekeyFrames, FrameCipherBackend::OpenSsl);
  FrameCipher vaes_opener(key, kDefaultRekeyFrames, FrameCipherBackend::Vaes);
  std::vector<std::size_t> lengths;
  for (std::size_t length = 0; length <= 1100; ++length) lengths.push_back(length);
  for (std::size_t length : {4095u, 65536u, 1000003u}) lengths.push_back(length);
  for (const std::size_t length : lengths) {
    const Bytes text = pattern(length, static_cast<std::uint8_t>(length));
    const std::size_t split = length / 3;
    Bytes expected(kFrameHeaderBytes + length + kFrameTagBytes), got(expected.size(), 0xee);
    openssl_sealer.seal({text}, expected.data(), expected.data() + 4, expected.data() + 4 + length);
    vaes_sealer.seal({std::span(text).first(split), std::span(text).subspan(split)}, got.data(), got.data() + 4,
                     got.data() + 4 + length);
    ASSERT_EQ(got, expected) << length << " bytes";
    Bytes opened;
    ASSERT_TRUE(open_frame(vaes_opener, expected, opened)) << length;
    ASSERT_EQ(opened, text) << length;
    ASSERT_TRUE(open_frame(openssl_opener, got, opened)) << length;
    ASSERT_EQ(opened, text) << length;
  }
}

TEST(FrameCipher, RekeysByBlake2bAfterTheSetNumberOfFrames) {
  const Bytes key = pattern(32, 11);
  FrameCipher sealer(key, 2);
  FrameCipher opener(key, 2);
  std::vector<Bytes> frames;
  for (std::uint8_t i = 0; i < 5; ++i) frames.push_back(seal_frame(sealer, pattern(48, i)));
  Bytes next(32);
  const char label[] = "mpc-kdc data link rekey";
  crypto_generichash(next.data(), 32, reinterpret_cast<const unsigned char*>(label), sizeof label - 1, key.data(), 32);
  EXPECT_EQ(reference_open(key, 1, frames[1]), pattern(48, 1));
  EXPECT_EQ(reference_open(next, 0, frames[2]), pattern(48, 2));
  EXPECT_THROW(reference_open(key, 2, frames[2]), std::runtime_error);
  Bytes text;
  for (std::uint8_t i = 0; i < 5; ++i) {
    ASSERT_TRUE(open_frame(opener, frames[i], text));
    EXPECT_EQ(text, pattern(48, i));
  }
}

TEST(LinkHandshake, BothEndsDeriveTheSameKeysAndAStrangerDoesNot) {
  const CurveKeyPair initiator = generate_curve_key_pair(), responder = generate_curve_key_pair();
  const CurveKeyPair e_i = generate_curve_key_pair(), e_r = generate_curve_key_pair();
  const auto hello = encode_hello({e_i.public_key, initiator.public_key, 3});
  const auto reply = encode_reply(e_r.public_key);
  const LinkKeys a = derive_link_keys(true, initiator, e_i, responder.public_key, e_r.public_key, hello, reply);
  const LinkKeys b = derive_link_keys(false, responder, e_r, initiator.public_key, e_i.public_key, hello, reply);
  EXPECT_TRUE(equal_constant_time(a.initiator_to_responder.span(), b.initiator_to_responder.span()));
  EXPECT_TRUE(equal_constant_time(a.responder_to_initiator.span(), b.responder_to_initiator.span()));
  EXPECT_FALSE(equal_constant_time(a.initiator_to_responder.span(), a.responder_to_initiator.span()));
  // Someone claiming the initiator's key without its secret: another static secret.
  const CurveKeyPair impostor = generate_curve_key_pair();
  CurveKeyPair claimed{initiator.public_key, impostor.secret_key};
  const LinkKeys c = derive_link_keys(true, claimed, e_i, responder.public_key, e_r.public_key, hello, reply);
  EXPECT_FALSE(equal_constant_time(c.initiator_to_responder.span(), b.initiator_to_responder.span()));
  const auto decoded = decode_hello(hello);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->channel, 3u);
  EXPECT_EQ(decoded->sender, initiator.public_key);
  EXPECT_FALSE(decode_hello(std::span(hello).first(40)));
  EXPECT_FALSE(decode_reply(std::span(hello).first(kReplyBytes)));
  PublicKey zero{};
  EXPECT_THROW(derive_link_keys(true, initiator, e_i, responder.public_key, zero, hello, reply), Error);
}

class DataLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    listener = std::make_unique<DataListener>("tcp://127.0.0.1:*", server_keys);
    listener->allow(client_keys.public_key);
    endpoint = listener->bound_endpoint();
  }
  // Connects from `keys` to `to` while the listener accepts for `accepting`; returns both ends
  // (either may be null when refused). A refusal happens within the handshake timeout, so a
  // test expecting one waits no longer than that.
  std::pair<std::unique_ptr<DataLink>, std::unique_ptr<DataLink>> link_up(
      const CurveKeyPair& keys, const PublicKey& pinned, const std::string& to,
      std::chrono::milliseconds accepting = 3000ms) {
    auto accepted = std::async(std::launch::async, [&] { return listener->accept(in(accepting)); });
    std::unique_ptr<DataLink> client;
    try {
      client = DataLink::connect(to, keys, pinned, 7);
    } catch (const PeerError&) {
    }
    return {std::move(client), accepted.get()};
  }

  CurveKeyPair server_keys = generate_curve_key_pair();
  CurveKeyPair client_keys = generate_curve_key_pair();
  std::unique_ptr<DataListener> listener;
  std::string endpoint;
};

TEST_F(DataLinkTest, FramesOfAnySizeCrossBothWaysAndRekeyingIsSeamless) {
  DataLinkOptions options;
  options.rekey_after_frames = 3;
  listener = std::make_unique<DataListener>("tcp://127.0.0.1:*", server_keys, options);
  listener->allow(client_keys.public_key);
  auto accepted = std::async(std::launch::async, [&] { return listener->accept(in(3000ms)); });
  auto client = DataLink::connect(listener->bound_endpoint(), client_keys, server_keys.public_key, 5, options);
  auto server = accepted.get();
  ASSERT_TRUE(client && server);
  EXPECT_EQ(server->peer(), client_keys.public_key);
  EXPECT_EQ(server->channel(), 5u);
  // Growing, then smaller frames after the largest: a sender's buffer keeps its largest size.
  for (const std::size_t size : {0u, 1u, 15u, 16u, 17u, 1000u, 70000u, 8u << 20, 17u, 0u, 70000u}) {
    const Bytes data = pattern(size, static_cast<std::uint8_t>(size));
    auto sending = std::async(std::launch::async, [&] { client->send({data}, in(5000ms)); });
    Bytes got;
    ASSERT_TRUE(server->receive(got, in(5000ms))) << size;
    sending.get();
    EXPECT_EQ(got, data) << size;
    auto answering = std::async(std::launch::async, [&] {
      server->send({std::span(data).first(size / 2), std::span(data).subspan(size / 2)}, in(5000ms));
    });
    ASSERT_TRUE(client->receive(got, in(5000ms))) << size;
    answering.get();
    EXPECT_EQ(got, data) << size;
  }
  Bytes nothing;
  EXPECT_FALSE(server->receive(nothing, in(50ms)));
  EXPECT_FALSE(server->closed());
}

TEST_F(DataLinkTest, AKeyThatIsNotPinnedIsRefusedAtBothEnds) {
  const CurveKeyPair stranger = generate_curve_key_pair();
  auto [client, server] = link_up(stranger, server_keys.public_key, endpoint, kHandshakeTimeout);
  EXPECT_FALSE(client);
  EXPECT_FALSE(server);
  EXPECT_EQ(listener->refused(), 1u);
  EXPECT_NE(listener->last_refusal().find("not pinned"), std::string::npos) << listener->last_refusal();
}

TEST_F(DataLinkTest, AClaimedKeyWithoutItsSecretAndAWrongListenerKeyAreRefused) {
  CurveKeyPair impostor = generate_curve_key_pair();
  impostor.public_key = client_keys.public_key;  // claims the pinned key
  {
    auto [client, server] = link_up(impostor, server_keys.public_key, endpoint, kHandshakeTimeout);
    EXPECT_FALSE(client);
    EXPECT_FALSE(server);
    EXPECT_NE(listener->last_refusal().find("failed authentication"), std::string::npos) << listener->last_refusal();
  }
  {
    // The client pins another listener key: the real listener cannot prove it.
    auto [client, server] = link_up(client_keys, generate_curve_key_pair().public_key, endpoint, kHandshakeTimeout);
    EXPECT_FALSE(client);
    EXPECT_FALSE(server);
  }
  EXPECT_EQ(listener->refused(), 2u);
  auto [client, server] = link_up(client_keys, server_keys.public_key, endpoint);
  EXPECT_TRUE(client && server);
}

TEST_F(DataLinkTest, AFrameOverTheLimitClosesTheLinkBeforeItIsRead) {
  DataLinkOptions small;
  small.max_frame_bytes = 1024;
  listener = std::make_unique<DataListener>("tcp://127.0.0.1:*", server_keys, small);
  listener->allow(client_keys.public_key);
  auto [client, server] = link_up(client_keys, server_keys.public_key, listener->bound_endpoint());
  ASSERT_TRUE(client && server);
  const Bytes big = pattern(4096, 1);
  client->send({big}, in(2000ms));
  Bytes got;
  try {
    server->receive(got, in(2000ms));
    ADD_FAILURE() << "an oversized frame was read";
  } catch (const PeerError& error) {
    EXPECT_NE(std::string(error.what()).find("over the limit"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(server->closed());
  EXPECT_THROW(server->receive(got, in(10ms)), PeerError);
}

// A man in the middle on loopback: forwards a link's bytes both ways, records them, and
// from the client's third frame (its second data frame) on does what `attack` says.
enum class Attack { None, FlipCiphertext, FlipTag, ShortenLength, Replay, Reorder, Drop, Truncate };

class Interceptor {
 public:
  Interceptor(const std::string& target_endpoint, Attack attack) : attack_(attack) {
    listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(listen_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(listen_, 1) != 0 ||
        ::getsockname(listen_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      throw std::runtime_error("interceptor cannot listen");
    endpoint_ = "tcp://127.0.0.1:" + std::to_string(ntohs(address.sin_port));
    target_port_ = static_cast<std::uint16_t>(std::stoi(target_endpoint.substr(target_endpoint.rfind(':') + 1)));
    thread_ = std::thread([this] { run(); });
  }
  ~Interceptor() {
    ::shutdown(listen_, SHUT_RDWR);
    if (client_ >= 0) ::shutdown(client_, SHUT_RDWR);
    if (server_ >= 0) ::shutdown(server_, SHUT_RDWR);
    thread_.join();
    if (back_.joinable()) back_.join();
    for (int socket : {listen_, client_.load(), server_.load()})
      if (socket >= 0) ::close(socket);
  }
  const std::string& endpoint() const { return endpoint_; }
  Bytes captured() {
    std::lock_guard lock(mutex_);
    return captured_;
  }

 private:
  bool read_exact(int socket, std::uint8_t* into, std::size_t size) {
    while (size != 0) {
      const ssize_t got = ::recv(socket, into, size, 0);
      if (got <= 0) return false;
      into += got;
      size -= static_cast<std::size_t>(got);
    }
    return true;
  }
  void forward(int socket, const Bytes& bytes) {
    {
      std::lock_guard lock(mutex_);
      captured_.insert(captured_.end(), bytes.begin(), bytes.end());
    }
    ::send(socket, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
  void run() {
    client_ = ::accept(listen_, nullptr, nullptr);
    if (client_ < 0) return;
    server_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(target_port_);
    if (::connect(server_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return;
    back_ = std::thread([this] {
      Bytes chunk(65536);
      for (;;) {
        const ssize_t got = ::recv(server_, chunk.data(), chunk.size(), 0);
        if (got <= 0) return;
        forward(client_, Bytes(chunk.begin(), chunk.begin() + got));
      }
    });
    Bytes hello(kHelloBytes);
    if (!read_exact(client_, hello.data(), hello.size())) return;
    forward(server_, hello);
    std::optional<Bytes> held;
    for (int index = 0;; ++index) {
      Bytes frame(kFrameHeaderBytes);
      if (!read_exact(client_, frame.data(), kFrameHeaderBytes)) return;
      frame.resize(kFrameHeaderBytes + frame_length(frame.data()) + kFrameTagBytes);
      if (!read_exact(client_, frame.data() + kFrameHeaderBytes, frame.size() - kFrameHeaderBytes)) return;
      if (index < 2 || attack_ == Attack::None) {
        forward(server_, frame);
        continue;
      }
      if (held) {
        forward(server_, frame);
        forward(server_, *held);
        held.reset();
        continue;
      }
      switch (std::exchange(attack_, Attack::None)) {
        case Attack::FlipCiphertext: frame[kFrameHeaderBytes + 3] ^= 1; break;
        case Attack::FlipTag: frame.back() ^= 0x80; break;
        case Attack::ShortenLength:
          frame[3] -= 1;
          frame.erase(frame.begin() + kFrameHeaderBytes);
          break;
        case Attack::Replay: forward(server_, frame); break;
        case Attack::Reorder: held = frame; continue;
        case Attack::Drop: continue;
        case Attack::Truncate:
          frame.resize(frame.size() / 2);
          forward(server_, frame);
          ::shutdown(server_, SHUT_WR);
          return;
        case Attack::None: break;
      }
      forward(server_, frame);
    }
  }

  Attack attack_;
  int listen_ = -1;
  std::atomic<int> client_{-1}, server_{-1};
  std::uint16_t target_port_ = 0;
  std::string endpoint_;
  std::thread thread_, back_;
  std::mutex mutex_;
  Bytes captured_;
};

struct AttackCase {
  Attack attack;
  const char* name;
  const char* error;  // what the listener's end reports
};

class DataLinkAttack : public DataLinkTest, public ::testing::WithParamInterface<AttackCase> {};

TEST_P(DataLinkAttack, IsRefusedAndANewLinkCarriesDataAgain) {
  const AttackCase& c = GetParam();
  Interceptor interceptor(endpoint, c.attack);
  auto [client, server] = link_up(client_keys, server_keys.public_key, interceptor.endpoint());
  ASSERT_TRUE(client && server);
  const Bytes first = pattern(256, 1), second = pattern(256, 2), third = pattern(256, 3);
  for (const Bytes* data : {&first, &second, &third}) client->send({*data}, in(2000ms));
  Bytes got;
  ASSERT_TRUE(server->receive(got, in(2000ms)));
  EXPECT_EQ(got, first);
  std::vector<Bytes> accepted;
  try {
    for (int i = 0; i < 3; ++i) {
      if (!server->receive(got, in(1000ms))) break;
      accepted.push_back(got);
    }
    ADD_FAILURE() << c.name << ": the attack went unnoticed";
  } catch (const PeerError& error) {
    EXPECT_NE(std::string(error.what()).find(c.error), std::string::npos) << c.name << ": " << error.what();
  }
  // Nothing out of order or altered was handed on: at most the second frame, intact.
  for (std::size_t i = 0; i < accepted.size(); ++i) EXPECT_EQ(accepted[i], i == 0 ? second : Bytes{}) << c.name;
  EXPECT_LE(accepted.size(), 1u) << c.name;
  EXPECT_TRUE(server->closed());
  EXPECT_THROW(server->receive(got, in(10ms)), PeerError);

  // The data never crossed in the clear.
  const Bytes wire = interceptor.captured();
  for (const Bytes* data : {&first, &second, &third})
    EXPECT_EQ(std::search(wire.begin(), wire.end(), data->begin(), data->begin() + 32), wire.end()) << c.name;

  auto [again_client, again_server] = link_up(client_keys, server_keys.public_key, endpoint);
  ASSERT_TRUE(again_client && again_server) << c.name;
  again_client->send({third}, in(2000ms));
  ASSERT_TRUE(again_server->receive(got, in(2000ms)));
  EXPECT_EQ(got, third);
}

INSTANTIATE_TEST_SUITE_P(
    EveryAttack, DataLinkAttack,
    ::testing::Values(AttackCase{Attack::FlipCiphertext, "flipped ciphertext bit", "failed authentication"},
                      AttackCase{Attack::FlipTag, "flipped tag bit", "failed authentication"},
                      AttackCase{Attack::ShortenLength, "shortened length", "failed authentication"},
                      AttackCase{Attack::Replay, "replayed frame", "failed authentication"},
                      AttackCase{Attack::Reorder, "reordered frames", "failed authentication"},
                      AttackCase{Attack::Drop, "dropped frame", "failed authentication"},
                      AttackCase{Attack::Truncate, "truncated frame", "closed by the peer"}),
    [](const auto& info) {
      std::string name = info.param.name;
      std::replace(name.begin(), name.end(), ' ', '_');
      return name;
    });

TEST_F(DataLinkTest, AnUnalteredLinkThroughTheInterceptorDeliversEverything) {
  // The interceptor itself is faithful: without an attack every frame arrives.
  Interceptor interceptor(endpoint, Attack::None);
  auto [client, server] = link_up(client_keys, server_keys.public_key, interceptor.endpoint());
  ASSERT_TRUE(client && server);
  for (std::uint8_t i = 0; i < 4; ++i) client->send({pattern(256, i)}, in(2000ms));
  Bytes got;
  for (std::uint8_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(server->receive(got, in(2000ms)));
    EXPECT_EQ(got, pattern(256, i));
  }
}

TEST_F(DataLinkTest, APeerThatGoesAwayIsAClearErrorNotAHang) {
  auto [client, server] = link_up(client_keys, server_keys.public_key, endpoint);
  ASSERT_TRUE(client && server);
  client.reset();
  Bytes got;
  const auto started = Clock::now();
  EXPECT_THROW(server->receive(got, in(5000ms)), PeerError);
  EXPECT_LT(Clock::now() - started, 4000ms);
  EXPECT_THROW(DataLink::connect("tcp://127.0.0.1:1", client_keys, server_keys.public_key, 0), PeerError);
}

TEST_F(DataLinkTest, ASenderSeesThatItsReaderHasGoneBeforeItSends) {
  auto [client, server] = link_up(client_keys, server_keys.public_key, endpoint);
  ASSERT_TRUE(client && server);
  EXPECT_FALSE(client->reader_gone());
  const Bytes data = pattern(1000, 3);
  client->send({data}, in(1000ms));
  Bytes got;
  ASSERT_TRUE(server->receive(got, in(1000ms)));
  EXPECT_FALSE(client->reader_gone());
  server.reset();  // the reading end restarts: its socket closes
  const auto deadline = Clock::now() + 2000ms;
  while (!client->reader_gone() && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(client->reader_gone());
  EXPECT_TRUE(client->closed());
  EXPECT_THROW(client->send({data}, in(100ms)), PeerError);
}

TEST_F(DataLinkTest, AFrameArrivesInPartsAndItsProgressIsVisible) {
  // 8 MiB: more than loopback moves in one read, so the frame arrives over several.
  auto [client, server] = link_up(client_keys, server_keys.public_key, endpoint);
  ASSERT_TRUE(client && server);
  const std::uint64_t before = server->bytes_read();
  EXPECT_FALSE(server->mid_frame());
  const Bytes data = pattern(8u << 20, 9);
  auto sending = std::async(std::launch::async, [&] { client->send({data}, in(5000ms)); });
  Bytes got;
  ASSERT_TRUE(server->receive(got, in(5000ms)));
  sending.get();
  EXPECT_EQ(got, data);
  EXPECT_FALSE(server->mid_frame());
  EXPECT_EQ(server->bytes_read() - before, kFrameHeaderBytes + data.size() + kFrameTagBytes);
}

TEST_F(DataLinkTest, FramesReadAheadWaitInTheLinkAndAreReceivedWithoutTheSocket) {
  auto [client, server] = link_up(client_keys, server_keys.public_key, endpoint);
  ASSERT_TRUE(client && server);
  const Bytes first = pattern(300, 1), second = pattern(40, 2), third = pattern(200000, 3);
  client->send({first}, in(1000ms));
  client->send({second}, in(1000ms));
  // Both small frames are on the socket before the first receive, which reads them together.
  pollfd entry{server->descriptor(), POLLIN, 0};
  ASSERT_EQ(::poll(&entry, 1, 1000), 1);
  std::this_thread::sleep_for(50ms);
  Bytes got;
  ASSERT_TRUE(server->receive(got, in(1000ms)));
  EXPECT_EQ(got, first);
  EXPECT_TRUE(server->buffered());
  EXPECT_TRUE(server->mid_frame());
  entry.revents = 0;
  EXPECT_EQ(::poll(&entry, 1, 0), 0) << "the second frame is in the link, not on the socket";
  ASSERT_TRUE(server->receive(got, std::chrono::steady_clock::now()));
  EXPECT_EQ(got, second);
  EXPECT_FALSE(server->buffered());
  EXPECT_FALSE(server->receive(got, std::chrono::steady_clock::now()));
  // A frame larger than the inbox still arrives whole, and after it the link is empty.
  auto sending = std::async(std::launch::async, [&] { client->send({third}, in(5000ms)); });
  ASSERT_TRUE(server->receive(got, in(5000ms)));
  sending.get();
  EXPECT_EQ(got, third);
  EXPECT_FALSE(server->buffered());
  EXPECT_FALSE(server->mid_frame());
}

TEST_F(DataLinkTest, HandshakesRunApartFromTheAcceptSoASilentConnectionHoldsUpNoOther) {
  EXPECT_FALSE(listener->accept_connection(in(50ms)));  // nothing waiting yet
  // A stranger connects and says nothing; a pinned peer connects after it.
  const int stranger = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1))));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(stranger, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  const auto first = listener->accept_connection(in(1000ms));
  ASSERT_TRUE(first);
  auto peer = std::async(std::launch::async,
                         [&] { return DataLink::connect(endpoint, client_keys, server_keys.public_key, 4); });
  const auto second = listener->accept_connection(in(1000ms));
  ASSERT_TRUE(second);
  const auto started = Clock::now();
  auto link = listener->handshake(*second);  // not held up by the silent first one
  EXPECT_LT(Clock::now() - started, kHandshakeTimeout / 2);
  ASSERT_TRUE(link);
  EXPECT_EQ(link->channel(), 4u);
  EXPECT_TRUE(peer.get());
  EXPECT_THROW(listener->handshake(*first), PeerError);  // the silent one times out
  ::close(stranger);
}

// A storm wakes a KDC's worker processes, and each connects to every server at once while the
// servers' cores are busy: the listener queues hundreds of connections before it accepts any,
// where a short queue would drop their SYNs and leave each to a second's retransmission.
TEST_F(DataLinkTest, HundredsOfConnectionsWaitForTheAcceptInsteadOfBeingDropped) {
  // The kernel caps every listener's queue at net.core.somaxconn (4096 on Debian 12).
  int somaxconn = 4096;
  if (std::FILE* file = std::fopen("/proc/sys/net/core/somaxconn", "r")) {
    if (std::fscanf(file, "%d", &somaxconn) != 1) somaxconn = 4096;
    std::fclose(file);
  }
  const int connections = std::min(300, somaxconn);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1))));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::vector<pollfd> pending;
  for (int i = 0; i < connections; ++i) {
    const int socket = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ASSERT_GE(socket, 0);
    const int rc = ::connect(socket, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ASSERT_TRUE(rc == 0 || errno == EINPROGRESS) << std::strerror(errno);
    pending.push_back({socket, POLLOUT, 0});
  }
  // Connected means the kernel finished the handshake and queued the connection. Before
  // the second after which a dropped SYN is sent again.
  int connected = 0;
  const auto deadline = in(800ms);
  while (connected < connections && Clock::now() < deadline) {
    ::poll(pending.data(), pending.size(), 50);
    connected = 0;
    for (auto& entry : pending) {
      int error = 0;
      socklen_t length = sizeof error;
      if ((entry.revents & POLLOUT) != 0 && ::getsockopt(entry.fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 &&
          error == 0)
        ++connected;
    }
  }
  EXPECT_EQ(connected, connections);
  for (const auto& entry : pending) ::close(entry.fd);
}

}  // namespace
}  // namespace mpc::transport
