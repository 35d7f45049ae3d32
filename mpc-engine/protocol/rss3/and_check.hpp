// Verification of every AND gate of a layered batch before any output leaves: a distributed
// zero-knowledge proof over a fully linear interactive proof (Boyle, Gilboa, Ishai, Nof:
// "Practical Fully Secure Three-Party Computation via Sublinear Distributed Zero-Knowledge
// Proofs", ACM CCS 2019, eprint 2019/1390), as a sum-check over GF(2^128) with Fiat-Shamir
// challenges. Security with abort against one actively corrupt server.
//
// The statement. With v = c_0 ^ c_1 ^ c_2 and party j holding c_j and c_{j-1} (its slots are
// a = c_j, x = c_j ^ c_{j-1}), party i's AND message is
//   r_i = c_{i-1}(x) c_{i-1}(y) ^ c_{i-1}(x) c_i(y) ^ c_i(x) c_{i-1}(y) ^ F(k_i) ^ F(k_{i-1}).
// Party i+1 ("V+") knows c_i, r_i and F(k_i); party i-1 ("V-") knows c_{i-1} and F(k_{i-1}). So
//   [r_i ^ F(k_i)] ^ [c_{i-1}(x) c_{i-1}(y) ^ F(k_{i-1})] = c_{i-1}(x) c_i(y) ^ c_{i-1}(y) c_i(x)
// splits into a part each verifier holds on the left and an inner product of V-'s bits with V+'s
// bits on the right: exactly what a two-verifier proof checks without either seeing the other's
// half. Every honest AND satisfies it; a prover that sent a wrong r, or computed it from other
// values than the components its neighbours hold, breaks it.
//
// The proof, per segment of up to kSegmentGates gates: a sum-check of
//   sum over gates g and sigma in {0, 1} of W(g) X(sigma, g) Y(sigma, g) = sum over g of W(g) L(g)
// with X = (u, u') from V-, Y = (v, v') from V+ and L the two verifiers' linear parts.
// - Gates are taken a window at a time: kWindowWords consecutive words of each of the two
//   products' planes. Gate (w, j) of a segment (word w = kWindowWords c + l, lane j) has weight
//   W = beta^l rho_c x^j, beta^l the product of beta_b over the bits b of l, drawn from the
//   weights' seed; a wrong gate leaves a nonzero polynomial of degree kBitRounds in them. x^j
//   costs nothing on bits: a word times rho_c is one carry-less product.
// - The weights' seed is fixed only after the prover is committed to every message: it hashes a
//   share drawn from the key the two verifiers share (which the prover lacks) with the prover's
//   last AND layer. V- draws the share over a receipt of that last layer from V+ (a hash of it
//   as V+ received it), so V- can send it only after V+ holds the whole of the prover's
//   messages: a prover cannot learn the seed and then choose its last layer, so it gets one try
//   per batch, not one per hash it can compute offline.
// - kBitRounds bit rounds first (the bits of l, then sigma), while X and Y are still bits: every
//   sum they need is taken once on the grid {0, 1, inf}^kBitRounds of each window, where X, Y and
//   their product stay bits (the small-value sum-check of Bagad, Dao, Domb and Thaler, "Speeding
//   Up Sum-Check Proving", eprint 2025/1117). Then X and Y bound at the challenges become one
//   field element per lane and window, 64 per 2 kWindowWords words, and ordinary halving rounds
//   follow, with one zero-product pair (0, m_B) appended so the value B opens to at the end is
//   uniform.
// - Round polynomials are additively shared: V- draws its share from a key it shares with the
//   prover, V+ receives the rest, so neither learns anything. Challenges are hashes of V+'s
//   shares so far.
// - V+ sends V- its challenges, its final B and its share of the final claim, signed
//   (and_check_blame.hpp); V- checks A_final * B_final = claim. Soundness error per segment: 2^-64 from the window weights rho_c
//   (drawn of degree < 64, so that a word times one is a single carry-less product; see Weights
//   in and_check.cpp), plus about (2 kBitRounds + 2 rounds) / 2^128 from the challenges.
//
// A failed check names the server that deviated, as seen by each server that can show it: the
// verdict, its relay and the prover's audit of a rejection are signed messages after the proof
// (and_check_blame.hpp says which conclusion names whom, and why).
//
// What a server learns: V+ sees shares uniform to it; V- sees B_final (uniform thanks to m_B) and
// V+'s claim share, which the check determines. The verdict is one bit per batch, and a corrupt
// verifier cannot steer it by its own data: V-'s claim share is masked by round shares it alone
// (with the prover) knows.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/error.hpp"
#include "common/identity_signature.hpp"
#include "protocol/rss3/correlated_randomness.hpp"
#include "protocol/rss3/evaluator.hpp"
#include "protocol/rss3/layer_exchange.hpp"

namespace mpc::rss3::and_check {

inline constexpr unsigned kBitRounds = 6;
inline constexpr std::size_t kWindowWords = std::size_t{1} << (kBitRounds - 1);  // of each product's plane
inline constexpr std::size_t kSegmentGates = std::size_t{1} << 19;                // a multiple of 64 kWindowWords
static_assert(kTranscriptWordMultiple % kWindowWords == 0, "a transcript's planes hold whole windows");

using CheckKey = std::array<std::uint8_t, 32>;
using Seed = std::array<std::uint8_t, 32>;
using Token = std::array<std::uint8_t, 16>;

// Messages of the check to the next party, after the batch's last layer: a receipt, a seed
// share, the proof, the findings, the verdict, the verdict relayed, the relay forwarded
// (check_batch).
inline constexpr std::uint32_t kCheckMessages = 7;

// Keys of the proof from a PRF edge key: `proof` between a prover and one verifier, `token` and
// `seed` between the two verifiers (a verdict the prover relays cannot be forged by it; a seed
// share it cannot know before it is sent).
CheckKey proof_key(const PrfKey& edge);
CheckKey token_key(const PrfKey& edge);
CheckKey seed_key(const PrfKey& edge);

using CheckIdentities = PartyIdentities;

// A failed check run to its end, and the peers this party can show deviated
// (and_check_blame.hpp).
class AndCheckFailure : public DeviationFound {
 public:
  AndCheckFailure(const std::string& message, int peer, std::uint8_t claims)
      : DeviationFound(Component::Protocol, message, "and_check", peer, claims, true) {}
};

struct Context {
  BatchNonce nonce;
  int prover = 0;         // 0-based party
  std::size_t words = 0;  // 64 gates each (bits past the batch's gates are zero everywhere)
};

// V-'s half of prover i's statement: c_{i-1} of the left and right operands, and
// c_{i-1}(x) c_{i-1}(y) ^ F(k_{i-1}).
struct MinusPart {
  std::span<const std::uint64_t> left, right, linear;
};
// V+'s half: c_i of the left and right operands, and r_i ^ F(k_i).
struct PlusPart {
  std::span<const std::uint64_t> left, right, linear;
};

std::size_t proof_bytes(std::size_t words);       // prover -> V+
std::size_t verifier_bytes(std::size_t words);    // V+ -> V-

// V+'s receipt of prover `context.prover`'s last AND layer, as V+ received it, for V-.
Seed layer_receipt(const Context& context, std::span<const std::uint8_t> last_layer);
// The verifiers' share of prover `context.prover`'s weights' seed, under seed_key(k_{prover+1}),
// drawn over V+'s receipt of the prover's last layer.
Seed seed_share(const Context& context, const CheckKey& verifiers, const Seed& receipt);
// The weights' seed: the verifiers' share and the prover's last AND layer as V+ received it.
Seed weight_seed(const Context& context, const Seed& share, std::span<const std::uint8_t> last_layer);

// The prover holds both halves. `with_minus` / `with_plus`: proof keys shared with V- / V+.
std::vector<std::uint8_t> prove(const Context& context, const Seed& seed, const MinusPart& minus,
                                const PlusPart& plus, const CheckKey& with_minus, const CheckKey& with_plus);

// V+: the message for V-. `with_prover`: the proof key V+ shares with the prover.
std::vector<std::uint8_t> verify_plus(const Context& context, const Seed& seed, const PlusPart& plus,
                                      std::span<const std::uint8_t> proof, const CheckKey& with_prover);

// V-: true when the prover's ANDs pass. `with_prover`: the proof key V- shares with it.
[[nodiscard]] bool verify_minus(const Context& context, const MinusPart& minus, std::span<const std::uint8_t> from_plus,
                                const CheckKey& with_prover);

// What V- sends (through the prover) to tell V+ that the prover passed.
Token pass_token(const Context& context, const CheckKey& verifiers);

// A party's whole part in the check of one layered batch, after its evaluation: it proves its
// own ANDs, verifies party i-1's as V+ and party i+1's as V-, over kCheckMessages more messages
// to the next party numbered first_layer .. first_layer + kCheckMessages - 1 (a receipt, a seed
// share, the proof, the findings, the verdict, the verdict relayed, the relay forwarded).
// Returns normally only if every party's ANDs passed as far as this party sees (with the bytes
// it sent); throws AndCheckFailure naming the peers it can show deviated, PeerError for a
// silent peer.
std::size_t check_batch(const AndTranscript& transcript, int party, const PrfKey& own, const PrfKey& previous,
                        BatchNonce nonce, LayerExchange& exchange, std::uint32_t first_layer,
                        const CheckIdentities& identities);

}  // namespace mpc::rss3::and_check
