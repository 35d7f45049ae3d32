// The check of a key share fed into a two-party computation (protocol/client_checks/
// share_checks.hpp has the scheme) as a circuit, so that its only output is whether it passed:
//   H_a(s) = S_1 a^m + S_2 a^(m-1) + ... + S_m a      in GF(2^64) = GF(2)[x] / (x^64 + x^4 + x^3 + x + 1)
// over the share's 64-bit blocks S_1..S_m (the last zero-padded), by Horner, and the verdict is 1
// exactly when H_a(s) ^ b equals the tag t. Each product is a Karatsuba one (karatsuba.hpp),
// 3^6 = 729 AND gates, against the key's spread made once: 729 m + 63 AND gates in all.
//
// Inputs: group 0 the share (n bits; bit j is the coefficient of x^(j mod 64) in block j / 64),
// group 1 the blinding b, group 2 the key a, group 3 the tag t (64 bits each, bit i the
// coefficient of x^i); output: one group of one wire, the verdict.
#pragma once

#include <cstdint>

#include "circuits/circuit.hpp"

namespace mpc::circuits {

// Throws FormatError(Circuit) for a share of no bits.
Circuit build_share_hash_check(std::uint32_t share_bits);

// AND gates of build_share_hash_check(share_bits).
std::uint64_t share_hash_check_ands(std::uint32_t share_bits);

}  // namespace mpc::circuits
