// AES jobs of a two-server cluster under security = "active": authenticated garbling
// (protocol/auth2) instead of half-gates, so that neither server can garble another function,
// feed the other a wrong label of its key share, or probe it by selective failure. Server 1
// garbles, server 2 evaluates, as in gc2.
//
// A job takes the range of AND material the leader assigned it (and_material_stock.hpp) and,
// per part of at most kAuthenticatedPartBlocks blocks, runs its circuit
// (circuits/aes_shared_key.hpp: the two round-key shares and the public blocks as inputs, then
// each server's blinding of its share's check, padded for the client) as checked_part.hpp does.
// Part p's outputs come out under both servers' pads, from the seeds
// client_checks::part_pad(client's seed, p): the client takes them only if both servers report
// the same and each pad passes its check. A check that fails throws VerificationError naming it.
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
#include "engines/two_party/and_material_stock.hpp"
#include "protocol/auth2/wire_slots.hpp"
#include "protocol/two_party/channel.hpp"
#include "wire/client_messages.hpp"
#include "wire/key_id.hpp"

namespace mpc::two_party_engine {

inline constexpr std::uint32_t kAuthenticatedPartBlocks = 16;
// Entries of AND material each server keeps made ahead by default ([limits]
// and_material_entries): about 200 MB, three of a login's largest Kerberos jobs.
inline constexpr std::uint64_t kAuthenticatedPoolEntries = 1048576;
// How long a job waits for entries still being made before its client hears Busy: below the
// clients' default timeout (2 s), so that a client hears Busy rather than nothing.
inline constexpr std::chrono::milliseconds kAuthenticatedPoolWait{1500};

class AuthenticatedAes {
 public:
  // party: 0 (server 1, the garbler) or 1; `stock`: the server's AND material (outlives this).
  AuthenticatedAes(int party, AndMaterialStock& stock) : party_(party), stock_(stock) {}

  // Entries of AND material a job of `blocks` blocks takes; 0 for a key that is not AES.
  std::uint64_t entries(wire::KeyAlgorithm algorithm, std::uint32_t blocks) const;

  // AES (or its inverse) of `input` (blocks * 16 bytes, public) under the round keys whose
  // share is `key_share` (wire::material_bytes), under both servers' pads (`pad`: this
  // server's seed from the client), from the pool's entries [start, start + entries()) of
  // `epoch`, waiting at most `wait` for them. Throws two_party::PoolEmpty when they do not come.
  // `share_check`: the check the client dealt with this server's share (wire::share_check_bytes).
  struct Padded {
    SecretBytes bytes;             // the output XOR both pads: the same on both servers
    wire::PaddedReports reports;   // a report per part of kAuthenticatedPartBlocks blocks
  };
  Padded blocks(two_party::Channel& peer, wire::KeyAlgorithm algorithm, bool decrypt,
                std::span<const std::uint8_t> key_share, std::span<const std::uint8_t> input,
                const wire::OutputPadSeed& pad, std::span<const std::uint8_t> share_check, std::uint64_t epoch,
                std::uint64_t start, std::chrono::milliseconds wait);

 private:
  // A part's padded circuit and its slots, built once per shape.
  struct Part {
    std::shared_ptr<const circuits::Circuit> circuit;
    std::shared_ptr<const auth2::WireSlots> slots;
  };
  Part circuit(wire::KeyAlgorithm algorithm, bool decrypt, std::uint32_t blocks) const;

  int party_;
  AndMaterialStock& stock_;
  mutable std::mutex mutex_;
  mutable std::map<std::tuple<wire::KeyAlgorithm, bool, std::uint32_t>, Part> circuits_;
};

}  // namespace mpc::two_party_engine
