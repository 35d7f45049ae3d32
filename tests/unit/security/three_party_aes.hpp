// AES evaluated by the three parties in one process (rss3::evaluate_three_parties over its
// in-memory ring), with every party's layer messages recorded, for the tests of what a
// single server sees.
//
// Protocol: Araki, Furukawa, Lindell, Nof, Ohara, "High-Throughput Semi-Honest Secure
// Three-Party Computation with an Honest Majority", CCS 2016 (eprint 2016/768): party i
// sends its AND message r_i to party i+1, so what party 0 receives is exactly what
// party 2 sends.
//
// Every run draws fresh PRF keys, a fresh batch nonce and a fresh sharing of the round
// keys from the operating system: only the secret and public inputs of a test are fixed.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/program.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::security_test {

struct ThreePartyRun {
  std::array<std::vector<std::uint8_t>, 3> sent;  // per party, all layers back to back
  std::array<rss3::ShareMatrix, 3> outputs;        // each party's output shares
  const std::vector<std::uint8_t>& received_by_0() const { return sent[2]; }
};

// Evaluates an AES program (inputs: the expanded round keys, then one 128-bit block per
// instance) on blocks.size() / 16 instances: the round keys shared afresh with
// rss3::share_bytes and broadcast to every instance, each block fed as the public
// constant (0, c).
ThreePartyRun run_aes_three_parties(const circuits::Program& program, std::span<const std::uint8_t> round_keys,
                                    std::span<const std::uint8_t> blocks);

// The value the three parties' output shares open to (instance n at bytes 16n..16n+15);
// throws if the three reconstructions disagree.
std::vector<std::uint8_t> open_outputs(const ThreePartyRun& run, std::size_t instances);

}  // namespace mpc::security_test
