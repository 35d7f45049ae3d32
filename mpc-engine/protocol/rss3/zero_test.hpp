// Telling a client whether a replicated-shared 128-bit block s is zero, and nothing else,
// with no message between the parties.
//
// The parties hold a random r that none of them knows, shared from their PRF keys alone:
// with rho_j = F(k_j, id), party i takes x_i = rho_i ^ rho_{i-1} and a_i = rho_i, which is
// the replicated sharing (x_{i-1} ^ r = a_i) of r = rho_0 ^ rho_1 ^ rho_2. Each party answers
//     t_i = x^r_i * x^s_i ^ a^r_i * a^s_i ^ alpha_i      (products in GF(2^128))
// with alpha_0 ^ alpha_1 ^ alpha_2 = 0 from the same keys; the three answers XOR to r * s
// (the product of Araki et al., CCS 2016, over GF(2^128) instead of GF(2), left as three
// additive shares). So the client sees zero when s is zero and, when it is not, a uniform
// non-zero block: nothing about s.
//
// Against one deviating party: its answer moves the client's sum by an error it chooses,
// while r * s carries rho of the edge it does not hold, so it cannot make a non-zero s pass
// (probability 2^-128) and a zero s fails only through its own error, whatever the secrets:
// a failure tells it nothing. r must be fresh for every s the client can choose: the caller
// binds the keys or the id to the request (a repeated request may get the same answer).
#pragma once

#include <array>
#include <cstdint>

#include "protocol/rss3/correlated_randomness.hpp"

namespace mpc::rss3 {

using Block = std::array<std::uint8_t, 16>;

// Party i's answer for its share (x^s_i, a^s_i) of s; own = k_i, previous = k_{i-1}.
Block zero_test_share(const Block& s_x, const Block& s_a, const PrfKey& own, const PrfKey& previous, BatchNonce id);

// Client side: whether the three answers XOR to zero (constant time).
bool zero_test_passes(const std::array<Block, 3>& answers);

}  // namespace mpc::rss3
