// Authenticated AND triples between two servers: shared bits x, y, z with z = x y, from
// authenticated bits and nothing else (Wang, Ranellucci, Katz, "Authenticated Garbling and
// Efficient Maliciously Secure Two-Party Computation", CCS 2017, eprint 2017/030, section 5:
// the leaky AND and its bucketing). They are the function-independent preprocessing of
// authenticated garbling, made in idle time and kept until a circuit needs them.
//
// Leaky AND, per triple, from random shared bits x, y, r (each party P holds x_P, y_P, r_P):
//   C_P = K_P[y_Q] ^ M[y_P] ^ y_P delta_P        (C_A ^ C_B = y (delta_A ^ delta_B))
//   G_P = H(K_P[x_Q]) ^ H(K_P[x_Q] ^ delta_P) ^ C_P            -> sent to Q
//   S_P = H(M[x_P]) ^ H(K_P[x_Q]) ^ M[r_P] ^ K_P[r_Q] ^ x_P (G_Q ^ C_P)
//   V_P = S_P ^ r_P delta_P, so that V_A ^ V_B = (x y ^ r)(delta_A ^ delta_B).
// Bit 1 of delta_A ^ delta_B is 1 (auth_bits.hpp), so bit 1 of V_A ^ V_B is d = x y ^ r: each
// party sends bit 1 of its V, both learn d (uniform: r is), set z = r ^ d and move V by
// d delta_P. Then V_A = V_B exactly when z = x y, which one equality check over the batch's
// digests confirms. H is the fixed-key hash, one tweak per party's x per triple.
//
// What a deviating party gains: a wrong G_Q moves S_P by x_P times its error, so the check
// fails or passes with x_P: the party learns x_P of that triple by whether the batch aborts
// (the "leak" of the name). A wrong d fails the check always. A wrong digest or commitment
// fails it too.
//
// Bucketing: the leaky triples are shuffled by a coin-tossed permutation, fixed only after
// every leaky triple passed its check, and combined B at a time: for the bucket's first triple
// (x, y, z) and each other (x', y', z'), d = y ^ y' is opened (authenticated) and
//   x <- x ^ x',  z <- z ^ z' ^ d x'     (still z = x y, y unchanged).
// The combined x is the XOR of B independent x's, so a party that learned some of them learns
// nothing of it unless it learned all B; it learned each at the price of an abort with
// probability 1/2. B is the smallest size for which, over every number k of probed triples,
// 2^-k times the chance that the permutation fills some bucket with probed triples only
// (a union bound over buckets) is at most 2^-kStatisticalSecurity: 4 for 2^20 triples,
// 5 for 2^16, as WRK17's 3 for 280,000 at their 2^-40.
//
// Cost per triple, each way: B (128 + 1) bits of leaky AND, 3 B authenticated bits
// (OT extension: 128 bits each, from the receiver only), B - 1 opened bits and their share of
// digests; a few digests and one coin toss per call.
#pragma once

#include <cstddef>
#include <vector>

#include "protocol/auth2/auth_bits.hpp"

namespace mpc::auth2 {

inline constexpr unsigned kStatisticalSecurity = 64;

struct AuthTriple {
  AuthBit x, y, z;
};

// Leaky triples: z = x y, but a deviating peer may have learned some x bits of this party
// (each at the price of an abort with probability 1/2). Throws VerificationError (check
// "leaky_and") when the batch's check fails.
std::vector<AuthTriple> leaky_triples(Session& session, std::size_t n);

// Triples fit for use: bucket_size(n) leaky triples each, combined. Throws VerificationError
// ("leaky_and", "coin_toss" or "mac_check") when the peer deviated.
std::vector<AuthTriple> and_triples(Session& session, std::size_t n);

// Leaky triples per triple for a call of n triples (see above). n = 0 is an Error.
unsigned bucket_size(std::size_t n);

// What one AND gate of a circuit takes from preprocessing made ahead of time: a triple and a
// random shared bit, its output wire's mask (authenticated_garbling.hpp). An input wire a party
// owns takes one entry's bit alone.
struct AndMaterial {
  AuthTriple triple;
  AuthBit lambda;
};

// n entries of AND material: and_triples(n) and n random shared bits.
std::vector<AndMaterial> and_material(Session& session, std::size_t n);

}  // namespace mpc::auth2
