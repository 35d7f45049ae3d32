#include "engines/two_party/pair_key.hpp"

#include <sodium.h>

#include "common/error.hpp"

namespace mpc::two_party_engine {

SecretBytes derive_pair_key(const settings::ServerSettings& settings, const transport::CurveKeyPair& own,
                            std::string_view label, std::span<const std::uint8_t> context) {
  if (settings.peers.size() != 1) throw Error(Component::Server, "a two-party engine needs exactly one peer");
  const auto& peer = settings.peers.front();
  std::uint8_t shared[crypto_scalarmult_BYTES];
  if (crypto_scalarmult(shared, own.secret_key.data(), peer.public_key.data()) != 0)
    throw Error(Component::Server, "the other server's public key is a low-order point");
  const auto& first = settings.party == 0 ? own.public_key : peer.public_key;
  const auto& second = settings.party == 0 ? peer.public_key : own.public_key;
  crypto_generichash_state state;
  crypto_generichash_init(&state, reinterpret_cast<const unsigned char*>(label.data()), label.size(),
                          crypto_stream_chacha20_ietf_KEYBYTES);
  crypto_generichash_update(&state, shared, sizeof shared);
  crypto_generichash_update(&state, first.data(), first.size());
  crypto_generichash_update(&state, second.data(), second.size());
  crypto_generichash_update(&state, context.data(), context.size());
  SecretBytes out(crypto_stream_chacha20_ietf_KEYBYTES);
  crypto_generichash_final(&state, out.data(), out.size());
  wipe(shared, sizeof shared);
  wipe(&state, sizeof state);
  return out;
}

}  // namespace mpc::two_party_engine
