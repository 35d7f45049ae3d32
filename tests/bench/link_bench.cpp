// The peer links side by side in one run: the data link's AES-256-GCM frames against the
// XSalsa20-Poly1305 boxes of CurveZMQ, first as ciphers alone (GB/s per core, seal and
// open), then as loopback links moving the same messages (a data link against a CurveZMQ
// DEALER/ROUTER pair). Prints one JSON object.
//
//   link_bench [--message-kib N] [--total-mib N]
#include <sodium.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "transport/data_link.hpp"
#include "transport/frame_cipher.hpp"
#include "transport/zmq_link.hpp"

namespace {

using namespace mpc::transport;
using Clock = std::chrono::steady_clock;
using Bytes = std::vector<std::uint8_t>;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Seal then open `rounds` messages of `size` bytes with AES-256-GCM frames: GB/s of payload.
double frame_cipher_rate(std::size_t size, std::size_t rounds, FrameCipherBackend backend) {
  Bytes key(32, 7), text(size, 1), frame(kFrameHeaderBytes + size + kFrameTagBytes);
  FrameCipher sealer(key, kDefaultRekeyFrames, backend), opener(key, kDefaultRekeyFrames, backend);
  const auto start = Clock::now();
  for (std::size_t i = 0; i < rounds; ++i) {
    sealer.seal({text}, frame.data(), frame.data() + kFrameHeaderBytes, frame.data() + kFrameHeaderBytes + size);
    if (!opener.open(frame.data(), std::span(frame).subspan(kFrameHeaderBytes, size),
                     frame.data() + kFrameHeaderBytes + size))
      std::abort();
  }
  return 2.0 * static_cast<double>(size * rounds) / seconds_since(start) / 1e9;
}

// The same with libsodium's crypto_secretbox (XSalsa20-Poly1305, what a CurveZMQ MESSAGE is).
double secretbox_rate(std::size_t size, std::size_t rounds) {
  Bytes key(crypto_secretbox_KEYBYTES, 7), nonce(crypto_secretbox_NONCEBYTES, 0), text(size, 1);
  Bytes box(size + crypto_secretbox_MACBYTES);
  const auto start = Clock::now();
  for (std::size_t i = 0; i < rounds; ++i) {
    nonce[0] = static_cast<std::uint8_t>(i);
    crypto_secretbox_easy(box.data(), text.data(), size, nonce.data(), key.data());
    if (crypto_secretbox_open_easy(text.data(), box.data(), box.size(), nonce.data(), key.data()) != 0) std::abort();
  }
  return 2.0 * static_cast<double>(size * rounds) / seconds_since(start) / 1e9;
}

// Moves `count` messages of `size` bytes one way over a keyed data link on loopback: GB/s.
double data_link_rate(std::size_t size, std::size_t count) {
  const CurveKeyPair server = generate_curve_key_pair(), client = generate_curve_key_pair();
  DataListener listener("tcp://127.0.0.1:*", server);
  listener.allow(client.public_key);
  auto accepted = std::async(std::launch::async, [&] { return listener.accept(Clock::now() + std::chrono::seconds(5)); });
  auto sender = DataLink::connect(listener.bound_endpoint(), client, server.public_key, 0);
  auto receiver = accepted.get();
  const Bytes message(size, 3);
  const auto start = Clock::now();
  auto sending = std::async(std::launch::async, [&] {
    for (std::size_t i = 0; i < count; ++i) sender->send({message}, Clock::now() + std::chrono::seconds(10));
  });
  Bytes got;
  for (std::size_t i = 0; i < count; ++i)
    if (!receiver->receive(got, Clock::now() + std::chrono::seconds(10)) || got.size() != size) std::abort();
  sending.get();
  return static_cast<double>(size * count) / seconds_since(start) / 1e9;
}

// The same over a CurveZMQ DEALER to a ROUTER.
double curve_zmq_rate(std::size_t size, std::size_t count) {
  const CurveKeyPair server = generate_curve_key_pair(), client = generate_curve_key_pair();
  Context server_context, client_context;
  server_context.allow("bench", client.public_key, "peer");
  LinkOptions options;
  options.send_high_water_mark = 64;
  options.receive_high_water_mark = 64;
  auto listener = std::make_unique<Listener>(server_context, "tcp://127.0.0.1:*", server, "bench", options);
  auto connection =
      std::make_unique<Connection>(client_context, listener->bound_endpoint(), server.public_key, client, options);
  const Bytes message(size, 3);
  if (!connection->send_until(message, Clock::now() + std::chrono::seconds(5))) std::abort();
  if (!listener->receive(std::chrono::milliseconds(5000))) std::abort();
  const auto start = Clock::now();
  auto sending = std::async(std::launch::async, [&] {
    for (std::size_t i = 0; i < count; ++i)
      if (!connection->send_until(message, Clock::now() + std::chrono::seconds(10))) std::abort();
  });
  for (std::size_t i = 0; i < count; ++i) {
    auto got = listener->receive(std::chrono::milliseconds(10000));
    if (!got || got->data.size() != size) std::abort();
  }
  sending.get();
  const double rate = static_cast<double>(size * count) / seconds_since(start) / 1e9;
  connection.reset();
  listener.reset();
  return rate;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t message_kib = 1024, total_mib = 512;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--message-kib") == 0) message_kib = std::strtoul(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--total-mib") == 0) total_mib = std::strtoul(argv[i + 1], nullptr, 10);
  }
  if (sodium_init() < 0 || message_kib == 0 || total_mib == 0) return 2;
  const std::size_t size = message_kib << 10;
  const std::size_t count = std::max<std::size_t>(1, (total_mib << 20) / size);
  const bool own_kernels = FrameCipher(Bytes(32, 7)).backend() == FrameCipherBackend::Vaes;
  const double gcm = frame_cipher_rate(size, count, FrameCipherBackend::Auto);
  const double openssl = frame_cipher_rate(size, count, FrameCipherBackend::OpenSsl);
  const double box = secretbox_rate(size, count);
  const double data_link = data_link_rate(size, count);
  const double curve = curve_zmq_rate(size, count);
  std::printf(
      "{\"message_bytes\": %zu, \"messages\": %zu,\n"
      " \"frame_cipher\": \"%s\",\n"
      " \"cipher_gb_per_s_per_core\": {\"aes256gcm_frames\": %.3f, \"aes256gcm_openssl\": %.3f, \"xsalsa20poly1305\": %.3f},\n"
      " \"loopback_gb_per_s\": {\"data_link\": %.3f, \"curvezmq\": %.3f},\n"
      " \"ratios\": {\"cipher\": %.2f, \"loopback\": %.2f}}\n",
      size, count, own_kernels ? "vaes" : "openssl", gcm, openssl, box, data_link, curve, gcm / box, data_link / curve);
  return 0;
}
