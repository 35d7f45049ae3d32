// AES jobs of a two-server cluster under security = "active": authenticated garbling
// (protocol/auth2) instead of half-gates, so that neither server can garble another function,
// feed the other a wrong label of its key share, or probe it by selective failure. Server 1
// garbles, server 2 evaluates, as in gc2.
//
// One job over its stream: both servers open an auth2 session (base OTs in both directions),
// then, per part of at most kAuthenticatedPartBlocks blocks, make the part's AND triples,
// the masks of its circuit (circuits/aes_shared_key.hpp: the two round-key shares and the
// public blocks as inputs) and run it with outputs kept as XOR shares, which the client
// combines as in gc2. A check that fails throws VerificationError naming it.
//
// What it costs: per AES-128 block 5,120 AND triples (about 3.3 MB between the servers at
// the bucket sizes of and_triples.hpp) and 128 bytes of garbled rows per AND; all of it made
// while the job runs. docs/benchmarks.md has the measured figures.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <tuple>

#include "circuits/circuit.hpp"
#include "common/secret.hpp"
#include "protocol/auth2/auth_bits.hpp"
#include "protocol/two_party/channel.hpp"
#include "wire/key_id.hpp"

namespace mpc::two_party_engine {

inline constexpr std::uint32_t kAuthenticatedPartBlocks = 16;

class AuthenticatedAes {
 public:
  // party: 0 (server 1, the garbler) or 1.
  explicit AuthenticatedAes(int party) : party_(party) {}

  // This server's XOR share of AES (or its inverse) of `input` (blocks * 16 bytes, public)
  // under the round keys whose share is `key_share` (wire::material_bytes).
  SecretBytes blocks(two_party::Channel& peer, wire::KeyAlgorithm algorithm, bool decrypt,
                     std::span<const std::uint8_t> key_share, std::span<const std::uint8_t> input);

 private:
  std::shared_ptr<const circuits::Circuit> circuit(wire::KeyAlgorithm algorithm, bool decrypt, std::uint32_t blocks);

  int party_;
  std::mutex mutex_;
  std::map<std::tuple<wire::KeyAlgorithm, bool, std::uint32_t>, std::shared_ptr<const circuits::Circuit>> circuits_;
};

}  // namespace mpc::two_party_engine
