#include "transport/link_handshake.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstring>

#include "common/error.hpp"

namespace mpc::transport {
namespace {

constexpr std::uint8_t kHelloMagic[8] = {'m', 'p', 'c', '-', 'd', 'l', 'h', '1'};
constexpr std::uint8_t kReplyMagic[8] = {'m', 'p', 'c', '-', 'd', 'l', 'r', '1'};
constexpr char kKeyLabel[] = "mpc-kdc data link keys v1";

void diffie_hellman(std::uint8_t out[32], const SecretBytes& secret, const PublicKey& peer) {
  if (crypto_scalarmult(out, secret.data(), peer.data()) != 0)
    throw Error(Component::Transport, "data link handshake: a public key of small order");
}

}  // namespace

std::array<std::uint8_t, kHelloBytes> encode_hello(const LinkHello& hello) {
  std::array<std::uint8_t, kHelloBytes> out{};
  std::memcpy(out.data(), kHelloMagic, 8);
  std::memcpy(out.data() + 8, hello.ephemeral.data(), 32);
  std::memcpy(out.data() + 40, hello.sender.data(), 32);
  for (int i = 0; i < 4; ++i) out[72 + i] = static_cast<std::uint8_t>(hello.channel >> (24 - 8 * i));
  return out;
}

std::optional<LinkHello> decode_hello(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kHelloBytes || std::memcmp(bytes.data(), kHelloMagic, 8) != 0) return std::nullopt;
  LinkHello hello;
  std::memcpy(hello.ephemeral.data(), bytes.data() + 8, 32);
  std::memcpy(hello.sender.data(), bytes.data() + 40, 32);
  for (int i = 0; i < 4; ++i) hello.channel = hello.channel << 8 | bytes[72 + i];
  return hello;
}

std::array<std::uint8_t, kReplyBytes> encode_reply(const PublicKey& ephemeral) {
  std::array<std::uint8_t, kReplyBytes> out{};
  std::memcpy(out.data(), kReplyMagic, 8);
  std::memcpy(out.data() + 8, ephemeral.data(), 32);
  return out;
}

std::optional<PublicKey> decode_reply(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kReplyBytes || std::memcmp(bytes.data(), kReplyMagic, 8) != 0) return std::nullopt;
  PublicKey ephemeral{};
  std::memcpy(ephemeral.data(), bytes.data() + 8, 32);
  return ephemeral;
}

LinkKeys derive_link_keys(bool initiator, const CurveKeyPair& own_static, const CurveKeyPair& own_ephemeral,
                          const PublicKey& peer_static, const PublicKey& peer_ephemeral,
                          std::span<const std::uint8_t> hello, std::span<const std::uint8_t> reply) {
  SecretBytes shared(96);  // ee || se || es
  diffie_hellman(shared.data(), own_ephemeral.secret_key, peer_ephemeral);
  if (initiator) {
    diffie_hellman(shared.data() + 32, own_static.secret_key, peer_ephemeral);
    diffie_hellman(shared.data() + 64, own_ephemeral.secret_key, peer_static);
  } else {
    diffie_hellman(shared.data() + 32, own_ephemeral.secret_key, peer_static);
    diffie_hellman(shared.data() + 64, own_static.secret_key, peer_ephemeral);
  }
  const PublicKey& responder_static = initiator ? peer_static : own_static.public_key;
  crypto_generichash_state state;
  SecretBytes okm(64);
  crypto_generichash_init(&state, nullptr, 0, okm.size());
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(kKeyLabel), sizeof kKeyLabel - 1);
  crypto_generichash_update(&state, hello.data(), hello.size());
  crypto_generichash_update(&state, reply.data(), reply.size());
  crypto_generichash_update(&state, responder_static.data(), responder_static.size());
  crypto_generichash_update(&state, shared.data(), shared.size());
  crypto_generichash_final(&state, okm.data(), okm.size());
  wipe(&state, sizeof state);
  LinkKeys keys;
  std::copy_n(okm.data(), 32, keys.initiator_to_responder.data());
  std::copy_n(okm.data() + 32, 32, keys.responder_to_initiator.data());
  return keys;
}

}  // namespace mpc::transport
