#include "engines/three_party/prf_keys.hpp"

#include <sodium.h>

#include <string_view>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::three_party_engine {
namespace {

constexpr char kLabel[] = "mpc-kdc rss3 correlated-randomness prf key v1";
constexpr char kTagMaskLabel[] = "mpc-kdc gcm tag output mask key v1";
constexpr char kGarblingLabel[] = "mpc-kdc garbled kerberos batch key v1";
constexpr char kGenerationLabel[] = "mpc-kdc generated key component v1";

// BLAKE2b keyed with the edge key: the purpose key reveals nothing about the edge key, and
// keys for different labels are independent.
rss3::PrfKey purpose_key(const rss3::PrfKey& edge, std::string_view label) {
  rss3::PrfKey key{};
  crypto_generichash(key.data(), key.size(), reinterpret_cast<const unsigned char*>(label.data()), label.size(),
                     edge.data(), edge.size());
  return key;
}

// Key shared by parties `low` and `low + 1` (mod 3), computed by `party`, one of the two.
rss3::PrfKey edge_key(int low, int party, const transport::CurveKeyPair& own,
                      const std::array<transport::PublicKey, 3>& public_keys) {
  const int high = rss3::next_party(low);
  const int other = party == low ? high : low;
  std::uint8_t shared[crypto_scalarmult_BYTES];
  if (crypto_scalarmult(shared, own.secret_key.data(), public_keys[other].data()) != 0)
    throw Error(Component::Server, "peer public key of party " + std::to_string(other + 1) + " is a low-order point");
  crypto_generichash_state state;
  crypto_generichash_init(&state, reinterpret_cast<const unsigned char*>(kLabel), sizeof kLabel - 1, 16);
  crypto_generichash_update(&state, shared, sizeof shared);
  crypto_generichash_update(&state, public_keys[low].data(), 32);
  crypto_generichash_update(&state, public_keys[high].data(), 32);
  rss3::PrfKey key{};
  crypto_generichash_final(&state, key.data(), key.size());
  wipe(shared, sizeof shared);
  wipe(&state, sizeof state);
  return key;
}

rss3::PrfKey bind_to_request(const rss3::PrfKey& key, std::span<const std::uint8_t, 32> request_digest) {
  rss3::PrfKey out{};
  crypto_generichash(out.data(), out.size(), request_digest.data(), request_digest.size(), key.data(), key.size());
  return out;
}

}  // namespace

TagMaskKeys::TagMaskKeys(const PartyPrfKeys& keys, std::span<const std::uint8_t, 32> request_digest)
    : own(bind_to_request(keys.tag_own, request_digest)), previous(bind_to_request(keys.tag_previous, request_digest)) {}

TagMaskKeys::~TagMaskKeys() {
  wipe(own.data(), own.size());
  wipe(previous.data(), previous.size());
}

namespace {

// c_j of generated_key_share from edge key k_j.
void generated_component(const rss3::PrfKey& edge, std::span<const std::uint8_t, 32> request_digest,
                         std::uint8_t* out) {
  rss3::PrfKey purpose = purpose_key(edge, kGenerationLabel);
  rss3::PrfKey bound = bind_to_request(purpose, request_digest);
  crypto_generichash(out, 32, reinterpret_cast<const unsigned char*>(kGenerationLabel), sizeof kGenerationLabel - 1,
                     bound.data(), bound.size());
  wipe(purpose.data(), purpose.size());
  wipe(bound.data(), bound.size());
}

}  // namespace

SecretBytes generated_key_share(const PartyPrfKeys& keys, std::span<const std::uint8_t, 32> request_digest) {
  SecretBytes share(64);
  SecretBytes previous(32);
  generated_component(keys.own, request_digest, share.data() + 32);  // a = c_i
  generated_component(keys.previous, request_digest, previous.data());
  for (std::size_t i = 0; i < 32; ++i) share[i] = static_cast<std::uint8_t>(share[32 + i] ^ previous[i]);
  return share;
}

PartyPrfKeys::~PartyPrfKeys() {
  wipe(own.data(), own.size());
  wipe(previous.data(), previous.size());
  wipe(tag_own.data(), tag_own.size());
  wipe(tag_previous.data(), tag_previous.size());
  wipe(garbling_own.data(), garbling_own.size());
  wipe(garbling_previous.data(), garbling_previous.size());
}

PartyPrfKeys derive_prf_keys(int party, const transport::CurveKeyPair& own,
                             const std::array<transport::PublicKey, 3>& public_keys) {
  if (party < 0 || party >= rss3::kParties) throw Error(Component::Server, "party index out of range");
  PartyPrfKeys keys;
  keys.own = edge_key(party, party, own, public_keys);
  keys.previous = edge_key(rss3::previous_party(party), party, own, public_keys);
  keys.tag_own = purpose_key(keys.own, kTagMaskLabel);
  keys.tag_previous = purpose_key(keys.previous, kTagMaskLabel);
  keys.garbling_own = purpose_key(keys.own, kGarblingLabel);
  keys.garbling_previous = purpose_key(keys.previous, kGarblingLabel);
  keys.signer = std::make_shared<const IdentitySigner>(own.secret_key.span());
  keys.public_keys = public_keys;
  return keys;
}

}  // namespace mpc::three_party_engine
