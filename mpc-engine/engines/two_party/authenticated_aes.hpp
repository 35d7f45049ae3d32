// AES jobs of a two-server cluster under security = "active": authenticated garbling
// (protocol/auth2) instead of half-gates, so that neither server can garble another function,
// feed the other a wrong label of its key share, or probe it by selective failure. Server 1
// garbles, server 2 evaluates, as in gc2.
//
// The AND material (a triple and an output mask per AND gate, auth2/and_triples.hpp) is made
// ahead of time into a pool, in batches the leader announces like lut2's masked tables
// (two_party_engine.hpp): one auth2 session per pool epoch, its OT extension continued over
// each batch's stream, so every entry of an epoch is authenticated under the same two deltas.
// A job takes the range of entries the leader assigned it, opens a job session on its own
// stream with that epoch's deltas, and per part of at most kAuthenticatedPartBlocks blocks
// prepares the masks of its circuit (circuits/aes_shared_key.hpp: the two round-key shares and
// the public blocks as inputs, padded for the client: protocol/auth2/padded_circuit.hpp) and
// runs it. Each part's outputs come out under both servers' pads, part p under the pads of the
// seeds client_checks::part_pad(client's seed, p): the client takes them only if both servers
// report the same and each pad passes its check. A check that fails throws VerificationError
// naming it.
//
// Tweaks: a batch's leaky ANDs hash under 32 tweaks per entry from its first entry, a job's
// garbled rows under 4 per entry from its first: ranges no other batch or job of the epoch
// takes. A new epoch (the leader's start, a failed batch, a restarted peer) opens a new
// session, with new deltas.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <tuple>

#include "circuits/circuit.hpp"
#include "common/secret.hpp"
#include "protocol/auth2/and_triples.hpp"
#include "protocol/auth2/auth_bits.hpp"
#include "protocol/two_party/channel.hpp"
#include "protocol/two_party/numbered_pool.hpp"
#include "wire/client_messages.hpp"
#include "wire/key_id.hpp"

namespace mpc::two_party_engine {

inline constexpr std::uint32_t kAuthenticatedPartBlocks = 16;
// Entries of AND material each server keeps made ahead by default ([limits]
// and_material_entries): about 50 MB, three 16-block parts of AES-128.
inline constexpr std::uint64_t kAuthenticatedPoolEntries = 262144;
// How long a job waits for entries still being made before its client hears Busy: below the
// clients' default timeout (2 s), so that a client hears Busy rather than nothing.
inline constexpr std::chrono::milliseconds kAuthenticatedPoolWait{1500};

class AuthenticatedAes {
 public:
  // party: 0 (server 1, the garbler) or 1.
  explicit AuthenticatedAes(int party) : party_(party) {}

  // Entries of AND material a job of `blocks` blocks takes; 0 for a key that is not AES.
  std::uint64_t entries(wire::KeyAlgorithm algorithm, std::uint32_t blocks) const;

  // AES (or its inverse) of `input` (blocks * 16 bytes, public) under the round keys whose
  // share is `key_share` (wire::material_bytes), under both servers' pads (`pad`: this
  // server's seed from the client), from the pool's entries [start, start + entries()) of
  // `epoch`, waiting at most `wait` for them. Throws two_party::PoolEmpty when they do not come.
  struct Padded {
    SecretBytes bytes;             // the output XOR both pads: the same on both servers
    wire::PaddedReports reports;   // a report per part of kAuthenticatedPartBlocks blocks
  };
  // `share_check`: the check the client dealt with this server's share (wire::kShareCheckBytes);
  // each part holds each server to its share by it (auth2/share_check_protocol.hpp).
  Padded blocks(two_party::Channel& peer, wire::KeyAlgorithm algorithm, bool decrypt,
                std::span<const std::uint8_t> key_share, std::span<const std::uint8_t> input,
                const wire::OutputPadSeed& pad, std::span<const std::uint8_t> share_check, std::uint64_t epoch,
                std::uint64_t start, std::chrono::milliseconds wait);

  // Makes entries [start, start + count) of `epoch` with the other server.
  void preprocess(two_party::Channel& peer, std::uint64_t epoch, std::uint64_t start, std::uint64_t count);
  // Drops the pool and the session: numbering starts afresh under `epoch`, with new deltas.
  void reset(std::uint64_t epoch);
  std::string describe() const;

 private:
  std::shared_ptr<const circuits::Circuit> circuit(wire::KeyAlgorithm algorithm, bool decrypt, std::uint32_t blocks) const;

  int party_;
  mutable std::mutex mutex_;
  mutable std::map<std::tuple<wire::KeyAlgorithm, bool, std::uint32_t>, std::shared_ptr<const circuits::Circuit>>
      circuits_;
  std::uint64_t epoch_ = 0;
  std::shared_ptr<auth2::Session> session_;  // of epoch_, made by its first batch
  two_party::NumberedPool<auth2::AndMaterial> pool_{"AND-material"};
};

}  // namespace mpc::two_party_engine
