// Opening outputs to the client without revealing the servers' share structure.
//
// Party i sends the client (x_i ^ F(k_i), a_i ^ F(k_{i-1})) for each output bit.
// Since a_i ^ x_{i-1} = v and both sides carry the same mask F(k_{i-1}), the client
// still computes v = a'_i ^ x'_{i-1} three ways; but the x'_i are now independent
// uniform bits, so the client learns v and nothing about the stored shares.
// One tampering server changes at least one of the three reconstructions while
// leaving another intact, so disagreement detects it.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::rss3 {

// Masks one party's output share in place. `offset` is the byte offset of this
// share within the batch's output stream (every party uses the same offsets).
void mask_output_share(CorrelatedRandomness& randomness, std::size_t offset, ByteShare& share);

// Client side: v from the three masked shares; throws Error(Protocol) on disagreement.
std::vector<std::uint8_t> open_output(const std::array<ByteShare, kParties>& masked);

}  // namespace mpc::rss3
