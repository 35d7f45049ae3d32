#include "protocol/rss3/and_check.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/and_check_blame.hpp"
#include "protocol/rss3/bit_combination.hpp"
#include "protocol/rss3/field_kernels.hpp"
#include "protocol/rss3/gf128.hpp"
#include "protocol/rss3/shares.hpp"
#include "protocol/rss3/target_clones.hpp"

namespace mpc::rss3::and_check {
namespace {

constexpr std::size_t kElement = 16;
constexpr char kDomain[] = "mpc-kdc rss3 AND check v4";

// A window's entries: kWindowWords words of each product's plane, sigma (the plane) being the
// highest of the bit variables.
constexpr std::size_t kWindowEntries = 2 * kWindowWords;
constexpr std::size_t grid_points(unsigned variables) { return variables == 0 ? 1 : 3 * grid_points(variables - 1); }
constexpr std::size_t kGridPoints = grid_points(kBitRounds);
static_assert(kBitRounds <= detail::kMaxGridVariables);
static_assert(kWindowEntries <= kMaxCombinedWords);

constexpr std::size_t kSegmentWords = kSegmentGates / 64;
static_assert(kSegmentWords % kWindowWords == 0);

// Statements are taken in whole windows; words past a statement's are zero everywhere.
std::size_t padded(std::size_t words) { return (words + kWindowWords - 1) / kWindowWords * kWindowWords; }
std::size_t segment_count(std::size_t words) { return (words + kSegmentWords - 1) / kSegmentWords; }
std::size_t segment_words(std::size_t words, std::size_t segment) {
  return std::min(kSegmentWords, words - segment * kSegmentWords);
}
std::size_t fold_rounds(std::size_t len) {
  std::size_t rounds = 0;
  for (; len > 1; len = (len + 1) / 2) ++rounds;
  return rounds;
}
// For whole windows of words: field entries after the bit rounds, one per lane of each window,
// and the mask pair's.
std::size_t field_length(std::size_t words) { return 64 * (words / kWindowWords) + 1; }
std::size_t segment_rounds(std::size_t words) { return kBitRounds + fold_rounds(field_length(words)); }

// Field elements that are functions of secret shares: wiped when they go.
class Elements {
 public:
  explicit Elements(std::size_t size) : values_(size) {}
  Elements(const Elements&) = delete;
  Elements& operator=(const Elements&) = delete;
  ~Elements() { wipe(values_.data(), values_.size() * sizeof(Gf128)); }
  Gf128* data() { return values_.data(); }
  Gf128& operator[](std::size_t i) { return values_[i]; }

 private:
  std::vector<Gf128> values_;
};

class Hash {
 public:
  explicit Hash(std::span<const std::uint8_t> key = {}, std::size_t out = 32) : out_(out) {
    crypto_generichash_init(&state_, key.empty() ? nullptr : key.data(), key.size(), out);
  }
  Hash& update(std::span<const std::uint8_t> data) {
    crypto_generichash_update(&state_, data.data(), data.size());
    return *this;
  }
  Hash& update(const char* text) {
    return update({reinterpret_cast<const std::uint8_t*>(text), std::strlen(text) + 1});
  }
  Hash& update_u64(std::uint64_t v) {
    std::uint8_t bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::uint8_t>(v >> (8 * i));
    return update(bytes);
  }
  void finish(std::span<std::uint8_t> out) {
    crypto_generichash_final(&state_, out.data(), out_);
    wipe(&state_, sizeof state_);
  }

 private:
  crypto_generichash_state state_;
  std::size_t out_;
};

Hash context_hash(const Context& context, std::span<const std::uint8_t> key = {}) {
  Hash hash(key);
  hash.update(kDomain)
      .update_u64(context.nonce.epoch)
      .update_u64(context.nonce.sequence)
      .update_u64(static_cast<std::uint64_t>(context.prover))
      .update_u64(context.words);
  return hash;
}

// A key of one use within one prover's proof of one batch.
CheckKey purpose_key(const Context& context, const CheckKey& key, const char* purpose) {
  CheckKey out;
  context_hash(context, key).update(purpose).finish(out);
  return out;
}

CheckKey edge_key(const PrfKey& edge, const char* purpose) {
  CheckKey out;
  Hash(edge).update(kDomain).update(purpose).finish(out);
  return out;
}

// ChaCha20 under `key`, one stream per segment.
void expand(const CheckKey& key, std::size_t segment, std::span<std::uint8_t> out) {
  std::uint8_t nonce[crypto_stream_chacha20_ietf_NONCEBYTES] = {};
  for (int i = 0; i < 8; ++i) nonce[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(segment) >> (8 * i));
  crypto_stream_chacha20_ietf(out.data(), out.size(), nonce, key.data());
}

// Fiat-Shamir over what V+ receives: each challenge hashes everything before it.
class Challenges {
 public:
  Challenges(const Context& context, const Seed& seed, std::size_t segment) {
    context_hash(context).update("challenges").update(seed).update_u64(segment).finish(chain_);
  }
  Gf128 next(std::span<const std::uint8_t> share) {
    Hash(chain_).update(share).finish(chain_);
    return gf128_load(chain_.data());
  }

 private:
  std::array<std::uint8_t, 32> chain_{};
};

// A verifier cannot tell a prover that cheated from the other verifier lying about it: the
// error names both, so an operator knows where to look.
std::string suspects(int prover, int other) {
  const int low = std::min(prover, other) + 1, high = std::max(prover, other) + 1;
  return "one of parties " + std::to_string(low) + " and " + std::to_string(high) + " deviated";
}

// The round after a bit variable is bound: the verifiers hold shares of K, the weighted sum left
// to prove; q(Z) is the sum over the remaining variables with this one at Z, so that
// K = q(0) + beta q(1) (beta: the weight of the variable's value 1). The prover sends q(1) and
// the leading coefficient q(inf); the new K is q(t). Linear in (K, q(1), q(inf)), so shares work.
Gf128 bit_round_claim(const detail::FieldKernels& k, Gf128 claim, Gf128 q1, Gf128 q_inf, Gf128 beta, Gf128 t) {
  const Gf128 one{1, 0};
  const Gf128 q0 = claim ^ k.mul(beta, q1);
  return k.mul(q0, t ^ one) ^ k.mul(q1, t) ^ k.mul(q_inf, t ^ k.mul(t, t));
}

// The weights of one segment. Gate (w, j) of the segment (word w, lane j), w = kWindowWords c + l,
// has weight beta^l rho_c x^j with beta^l = prod over the bits b of l of variable[b]; sigma, the
// last bit variable, has weight 1 (the statement adds both products). Distinct monomials per
// gate, and x^0 .. x^63 independent over GF(2), so a wrong gate leaves a nonzero polynomial of
// degree kBitRounds in the random weights.
//
// rho_c is drawn among the 2^64 elements of degree < 64, the betas from the
// whole field: a word times rho_c is then one carry-less product with nothing to reduce, which
// halves the products of the grid. The error this costs: with errors e_{c,l,j}, the claim misses
// by sum over c of rho_c Q_c(beta), where Q_c(beta) = sum over l, j of beta^l x^j e_{c,l,j} is a
// nonzero polynomial of degree < kBitRounds for some c. It vanishes at random betas with
// probability at most kBitRounds / 2^128; otherwise rho_c -> rho_c Q_c(beta) is one-to-one, so
// the sum hits the one value that hides the errors with probability at most 2^-64. The prover
// cannot try again offline: the seed is fixed only after it is committed, and a failed try
// aborts the batch.
struct Weights {
  explicit Weights(const Seed& seed, std::size_t segment, std::size_t words)
      : windows(words / kWindowWords), rho(windows) {
    std::vector<std::uint8_t> bytes((kBitRounds - 1) * kElement + windows * sizeof(std::uint64_t));
    CheckKey key;
    std::memcpy(key.data(), seed.data(), key.size());
    expand(key, segment, bytes);
    for (unsigned b = 0; b + 1 < kBitRounds; ++b) variable[b] = gf128_load(bytes.data() + b * kElement);
    variable[kBitRounds - 1] = Gf128{1, 0};
    const std::uint8_t* window_bytes = bytes.data() + (kBitRounds - 1) * kElement;
    for (std::size_t c = 0; c < windows; ++c)
      for (std::size_t i = 0; i < sizeof(std::uint64_t); ++i)
        rho[c] |= static_cast<std::uint64_t>(window_bytes[sizeof(std::uint64_t) * c + i]) << (8 * i);
  }
  // The weights of the words of a window, without rho_c: out[l] = beta^l, built a variable at a
  // time.
  void word_weights(const detail::FieldKernels& k, Gf128* out) const {
    out[0] = Gf128{1, 0};
    for (unsigned b = 0; b + 1 < kBitRounds; ++b) {
      const std::size_t filled = std::size_t{1} << b;
      for (std::size_t l = 0; l < filled; ++l) out[filled + l] = k.mul(out[l], variable[b]);
    }
  }
  std::size_t windows;
  Gf128 variable[kBitRounds];
  std::vector<std::uint64_t> rho;  // of degree < 64
};

// The bits of a verifier's linear part, words [w0, w0 + n) of the statement into `out`.
class LinearWords {
 public:
  virtual ~LinearWords() = default;
  virtual void words(std::size_t w0, std::size_t n, std::uint64_t* out) const = 0;
};

// A verifier's share of the weighted claim: sum over the segment's gates of their weight times
// the linear part, taken a few windows at a time.
Gf128 weighted_claim(const detail::FieldKernels& k, const Weights& weights, const LinearWords& linear,
                     std::size_t w0, std::size_t words) {
  constexpr std::size_t kChunkWindows = 16;
  const std::size_t windows = words / kWindowWords;
  alignas(64) std::uint64_t chunk[kChunkWindows * kWindowWords];
  Gf128 by_word[kWindowWords], partial[kWindowWords];
  for (std::size_t c0 = 0; c0 < windows; c0 += kChunkWindows) {
    const std::size_t count = std::min(kChunkWindows, windows - c0);
    linear.words(w0 + c0 * kWindowWords, count * kWindowWords, chunk);
    k.window_sums(chunk, count, kWindowWords, weights.rho.data() + c0, partial);
    for (std::size_t l = 0; l < kWindowWords; ++l) by_word[l] ^= partial[l];
  }
  Gf128 claim, word_weight[kWindowWords];
  weights.word_weights(k, word_weight);
  for (std::size_t l = 0; l < kWindowWords; ++l) claim ^= k.mul(word_weight[l], by_word[l]);
  wipe(chunk, sizeof chunk);
  wipe(by_word, sizeof by_word);
  wipe(partial, sizeof partial);
  return claim;
}

WindowPlanes from_word(const WindowPlanes& planes, std::size_t w0) {
  return {planes.first + w0, planes.second + w0, planes.half};
}

// The prover's sums over the grid, with the bit variables before the current round bound to
// their challenges: `values` holds one entry per point of {0, 1, inf} for each variable not yet
// bound, the current one the lowest digit.
class Grid {
 public:
  explicit Grid(const Gf128* sums) : values_(kGridPoints) {
    for (std::size_t p = 0; p < kGridPoints; ++p) values_[p] = sums[p];
  }
  // q(1) and the leading coefficient q(inf) of round r: the variables after it summed over
  // {0, 1} with their weights, the products of the weights taken once for both.
  std::array<Gf128, 2> round_values(const detail::FieldKernels& k, unsigned r, const Weights& weights) {
    const unsigned later = kBitRounds - 1 - r;
    Gf128 weight[std::size_t{1} << (kBitRounds - 1)];
    std::size_t point[std::size_t{1} << (kBitRounds - 1)];
    weight[0] = Gf128{1, 0};
    point[0] = 0;
    for (unsigned b = 0, power = 3; b < later; ++b, power *= 3)
      for (std::size_t s = 0; s < (std::size_t{1} << b); ++s) {
        weight[s + (std::size_t{1} << b)] = k.mul(weight[s], weights.variable[r + 1 + b]);
        point[s + (std::size_t{1} << b)] = point[s] + power;
      }
    std::array<Gf128, 2> values{};
    for (std::size_t s = 0; s < (std::size_t{1} << later); ++s) {
      values[0] ^= k.mul(weight[s], values_[point[s] + 1]);
      values[1] ^= k.mul(weight[s], values_[point[s] + 2]);
    }
    return values;
  }
  // Binds the current variable to t through the degree-2 basis on {0, 1, inf}: 1 + t, t, t + t^2.
  void bind(const detail::FieldKernels& k, Gf128 t) {
    const Gf128 basis[3] = {t ^ Gf128{1, 0}, t, t ^ k.mul(t, t)};
    points_ /= 3;
    k.bind_points(values_.data(), points_, basis, values_.data());
  }

 private:
  Elements values_;
  std::size_t points_ = kGridPoints;
};

// The field vector after the bit rounds, bound at t: out[64 c + j] = sum over window entries s
// of eq(t, s) times bit j of entry s, with eq(t, s) = prod over b of t_b (s_b = 1) or 1 + t_b.
void bind_bits(const detail::FieldKernels& k, const WindowPlanes& side, std::size_t windows, const Gf128* t,
               Gf128* out) {
  const Gf128 one{1, 0};
  // Doubled one variable at a time: entries below 2^b hold eq over the first b variables. One
  // product per entry: e (1 + t) is e + e t.
  Gf128 eq[kWindowEntries];
  eq[0] = one;
  for (unsigned b = 0; b < kBitRounds; ++b) {
    const std::size_t filled = std::size_t{1} << b;
    for (std::size_t s = 0; s < filled; ++s) {
      eq[filled + s] = k.mul(eq[s], t[b]);
      eq[s] ^= eq[filled + s];
    }
  }
  combine_bits(side, windows, eq, out);
}

Gf128 update_claim(const detail::FieldKernels& k, Gf128 claim, Gf128 c0, Gf128 c2, Gf128 t) {
  // P(X) = c0 + c1 X + c2 X^2 with P(0) + P(1) = claim gives c1 = claim + c2.
  const Gf128 c1 = claim ^ c2;
  return c0 ^ k.mul(c1, t) ^ k.mul(c2, k.mul(t, t));
}

// A verifier's part in one segment's rounds: its claim share, updated by each round's (first,
// second, challenge) from `next_round`, and its own vector (A for V-, weighted; B for V+) bound
// at the bit rounds' challenges, `last` appended, then folded. Returns the final claim share;
// the vector's final value is v[0].
template <class NextRound>
Gf128 verifier_rounds(const detail::FieldKernels& k, const Weights& weights, Gf128 claim, const WindowPlanes& side,
                      std::size_t words, bool weighted, Gf128 last, Gf128* v, NextRound next_round) {
  const std::size_t len = field_length(words);
  Gf128 bound[kBitRounds];
  for (unsigned r = 0; r < kBitRounds; ++r) {
    const auto [q1, q_inf, t] = next_round();
    claim = bit_round_claim(k, claim, q1, q_inf, weights.variable[r], t);
    bound[r] = t;
  }
  bind_bits(k, side, weights.windows, bound, v);
  if (weighted) k.weight_lanes(v, weights.windows, weights.rho.data());
  v[len - 1] = last;
  for (std::size_t n = len; n > 1; n = (n + 1) / 2) {
    const auto [c0, c2, t] = next_round();
    claim = update_claim(k, claim, c0, c2, t);
    k.fold(v, n, t);
  }
  return claim;
}

// The prover's operands over the whole statement (`words` a multiple of kWindowWords): x from
// V-, y from V+, each the two products' planes.
std::vector<std::uint8_t> prove_planes(const Context& context, const Seed& seed, const WindowPlanes& x,
                                       const WindowPlanes& y, const CheckKey& with_minus,
                                       const CheckKey& with_plus) {
  const detail::FieldKernels& k = detail::field_kernels();
  const std::size_t all = padded(context.words);
  std::vector<std::uint8_t> proof(proof_bytes(context.words));
  const CheckKey share_key = purpose_key(context, with_minus, "round shares");
  const CheckKey mask_key = purpose_key(context, with_plus, "mask");
  std::uint8_t* out = proof.data();
  const std::size_t most = field_length(std::min(kSegmentWords, all));
  Elements a(most), b(most), sums(kGridPoints);
  for (std::size_t s = 0; s < segment_count(all); ++s) {
    const std::size_t w0 = s * kSegmentWords, words = segment_words(all, s);
    const std::size_t len = field_length(words), rounds = segment_rounds(words);
    const Weights weights(seed, s, words);
    SecretBytes shares(rounds * 2 * kElement);
    expand(share_key, s, shares.span());
    SecretBytes mask(kElement);
    expand(mask_key, s, mask.span());
    Challenges challenges(context, seed, s);
    std::size_t round = 0;
    auto emit = [&](Gf128 first, Gf128 second) {
      std::uint8_t* share = out + round * 2 * kElement;
      gf128_store(first ^ gf128_load(shares.data() + round * 2 * kElement), share);
      gf128_store(second ^ gf128_load(shares.data() + round * 2 * kElement + kElement), share + kElement);
      ++round;
      return challenges.next({share, 2 * kElement});
    };

    const WindowPlanes xs = from_word(x, w0), ys = from_word(y, w0);
    for (std::size_t p = 0; p < kGridPoints; ++p) sums[p] = Gf128{};
    k.grid_sums({xs, ys, kBitRounds}, weights.windows, weights.rho.data(), sums.data());
    Grid grid(sums.data());
    Gf128 bound[kBitRounds];
    for (unsigned r = 0; r < kBitRounds; ++r) {
      const auto [q1, q_inf] = grid.round_values(k, r, weights);
      bound[r] = emit(q1, q_inf);
      grid.bind(k, bound[r]);
    }
    bind_bits(k, xs, weights.windows, bound, a.data());
    k.weight_lanes(a.data(), weights.windows, weights.rho.data());
    bind_bits(k, ys, weights.windows, bound, b.data());
    a[len - 1] = Gf128{};
    b[len - 1] = gf128_load(mask.data());
    Gf128 c0, c2;
    k.round_sums(a.data(), b.data(), len, &c0, &c2);
    for (std::size_t n = len; n > 1; n = (n + 1) / 2) {
      const Gf128 t = emit(c0, c2);
      k.fold_and_sum(a.data(), b.data(), n, t, &c0, &c2);
    }
    out += rounds * 2 * kElement;
  }
  return proof;
}

std::vector<std::uint8_t> verify_plus_planes(const Context& context, const Seed& seed, const WindowPlanes& side,
                                             const LinearWords& linear, std::span<const std::uint8_t> proof,
                                             const CheckKey& with_prover) {
  if (proof.size() != proof_bytes(context.words))
    throw VerificationError(Component::Protocol, "AND check proof of " + std::to_string(proof.size()) + " bytes",
                            "and_check");
  const detail::FieldKernels& k = detail::field_kernels();
  const std::size_t all = padded(context.words);
  std::vector<std::uint8_t> message(verifier_bytes(context.words));
  std::memcpy(message.data(), seed.data(), seed.size());
  std::uint8_t* out = message.data() + seed.size();
  const std::uint8_t* in = proof.data();
  const CheckKey mask_key = purpose_key(context, with_prover, "mask");
  Elements b(field_length(std::min(kSegmentWords, all)));
  for (std::size_t s = 0; s < segment_count(all); ++s) {
    const std::size_t w0 = s * kSegmentWords, words = segment_words(all, s);
    const std::size_t rounds = segment_rounds(words);
    const Weights weights(seed, s, words);
    SecretBytes mask(kElement);
    expand(mask_key, s, mask.span());
    Challenges challenges(context, seed, s);
    std::size_t round = 0;
    auto receive = [&]() {
      const std::uint8_t* share = in + round * 2 * kElement;
      const Gf128 t = challenges.next({share, 2 * kElement});
      gf128_store(t, out + round * kElement);
      ++round;
      return std::array<Gf128, 3>{gf128_load(share), gf128_load(share + kElement), t};
    };
    const Gf128 claim = verifier_rounds(k, weights, weighted_claim(k, weights, linear, w0, words),
                                        from_word(side, w0), words, false, gf128_load(mask.data()), b.data(), receive);
    gf128_store(b[0], out + rounds * kElement);
    gf128_store(claim, out + (rounds + 1) * kElement);
    in += rounds * 2 * kElement;
    out += (rounds + 2) * kElement;
  }
  return message;
}

bool verify_minus_planes(const Context& context, const WindowPlanes& side, const LinearWords& linear,
                         std::span<const std::uint8_t> from_plus, const CheckKey& with_prover) {
  if (from_plus.size() != verifier_bytes(context.words)) return false;
  const detail::FieldKernels& k = detail::field_kernels();
  const std::size_t all = padded(context.words);
  Seed seed;
  std::memcpy(seed.data(), from_plus.data(), seed.size());
  const std::uint8_t* in = from_plus.data() + seed.size();
  const CheckKey share_key = purpose_key(context, with_prover, "round shares");
  bool passed = true;
  Elements a(field_length(std::min(kSegmentWords, all)));
  for (std::size_t s = 0; s < segment_count(all); ++s) {
    const std::size_t w0 = s * kSegmentWords, words = segment_words(all, s);
    const std::size_t rounds = segment_rounds(words);
    const Weights weights(seed, s, words);
    SecretBytes shares(rounds * 2 * kElement);
    expand(share_key, s, shares.span());
    std::size_t round = 0;
    auto receive = [&]() {
      const std::uint8_t* share = shares.data() + round * 2 * kElement;
      const Gf128 t = gf128_load(in + round * kElement);
      ++round;
      return std::array<Gf128, 3>{gf128_load(share), gf128_load(share + kElement), t};
    };
    const Gf128 claim = verifier_rounds(k, weights, weighted_claim(k, weights, linear, w0, words),
                                        from_word(side, w0), words, true, Gf128{}, a.data(), receive);
    const Gf128 b_final = gf128_load(in + rounds * kElement);
    const Gf128 claim_plus = gf128_load(in + (rounds + 1) * kElement);
    // Every segment is checked, pass or fail, so the time taken does not say which failed.
    passed &= k.mul(a[0], b_final) == (claim ^ claim_plus);
    in += (rounds + 2) * kElement;
  }
  return passed;
}

// ---- The statement as whole planes: copies padded to whole windows (the stand-alone calls), or
// a transcript's planes (check_batch).

// A caller's span of `words` words, padded with zeros to whole windows.
SecretWords padded_copy(std::span<const std::uint64_t> words, std::size_t count) {
  if (words.size() != count)
    throw Error(Component::Protocol, "AND check statement of " + std::to_string(words.size()) + " words, expected " +
                                         std::to_string(count));
  SecretWords out(padded(count));
  std::copy(words.begin(), words.end(), out.data());
  std::fill(out.data() + count, out.data() + out.size(), std::uint64_t{0});
  return out;
}

class PlaneWords final : public LinearWords {
 public:
  explicit PlaneWords(const std::uint64_t* plane) : plane_(plane) {}
  void words(std::size_t w0, std::size_t n, std::uint64_t* out) const override {
    std::memcpy(out, plane_ + w0, n * sizeof(std::uint64_t));
  }

 private:
  const std::uint64_t* plane_;
};

// F(key) per gate, in the transcript's layout, words [w0, w0 + n) at a time. The alpha stream is
// drawn layer by layer, 16-byte aligned, so where every layer is a multiple of 16 bytes and no
// lane is padding it is the PRF stream itself, drawn as it is read; otherwise a whole plane is
// made first (prf_per_gate).
class PrfWords {
 public:
  PrfWords(const AndTranscript& transcript, const PrfKey& key, BatchNonce nonce);
  void fill(std::size_t w0, std::size_t n, std::uint64_t* out);

 private:
  std::size_t bytes_;
  std::optional<PrfStream> stream_;
  SecretWords plane_;
};

// A party's planes for its three roles, every one padded to whole windows: c_i (own) and c_{i-1}
// (previous) of the left and right operands and the r it received; and F(k_i) and F(k_{i-1}) per
// gate.
struct PartyPlanes {
  const std::uint64_t *left_own, *left_previous, *right_own, *right_previous, *received;
  PrfWords &own_prf, &previous_prf;
};

// V- of party i+1: c_i(x) c_i(y) ^ F(k_i), F(k_i) already in out.
MPC_RSS3_CLONES void minus_linear(std::uint64_t* __restrict out, const std::uint64_t* __restrict left,
                                  const std::uint64_t* __restrict right, std::size_t n) {
  for (std::size_t w = 0; w < n; ++w) out[w] ^= left[w] & right[w];
}
// V+ of party i-1: r_{i-1} ^ F(k_{i-1}), F(k_{i-1}) already in out.
MPC_RSS3_CLONES void plus_linear(std::uint64_t* __restrict out, const std::uint64_t* __restrict received,
                                 std::size_t n) {
  for (std::size_t w = 0; w < n; ++w) out[w] ^= received[w];
}

// V-'s linear part from the planes of the component it holds (c_i at V- of party i+1; the
// prover holds the same as its previous component): F(k) ^ c(x) c(y).
class MinusLinear final : public LinearWords {
 public:
  MinusLinear(PrfWords& prf, const std::uint64_t* left, const std::uint64_t* right)
      : prf_(prf), left_(left), right_(right) {}
  void words(std::size_t w0, std::size_t n, std::uint64_t* out) const override {
    prf_.fill(w0, n, out);
    minus_linear(out, left_ + w0, right_ + w0, n);
  }

 private:
  PrfWords& prf_;
  const std::uint64_t *left_, *right_;
};

class PlusLinear final : public LinearWords {
 public:
  explicit PlusLinear(const PartyPlanes& p) : p_(p) {}
  void words(std::size_t w0, std::size_t n, std::uint64_t* out) const override {
    p_.previous_prf.fill(w0, n, out);
    plus_linear(out, p_.received + w0, n);
  }

 private:
  const PartyPlanes& p_;
};

// The whole plane, where the stream cannot be drawn as it is read.
void prf_per_gate(const AndTranscript& transcript, const PrfKey& key, BatchNonce nonce, SecretWords& out) {
  out.resize(transcript.padded_words());
  auto* gates = reinterpret_cast<std::uint8_t*>(out.data());
  std::size_t stream_bytes = 0;
  for (std::size_t bytes : transcript.layer_bytes) stream_bytes += (bytes + 15) / 16 * 16;
  SecretBytes stream(stream_bytes);
  prf_stream(key, nonce, stream.span());
  std::size_t from = 0, to = 0;
  for (std::size_t bytes : transcript.layer_bytes) {
    std::memcpy(gates + to, stream.data() + from, bytes);
    from += (bytes + 15) / 16 * 16;
    to += bytes;
  }
  std::memset(gates + transcript.bytes, 0, out.size() * 8 - transcript.bytes);
  transcript.clear_padding({gates, transcript.bytes});
}

PrfWords::PrfWords(const AndTranscript& transcript, const PrfKey& key, BatchNonce nonce) : bytes_(transcript.bytes) {
  const bool aligned = std::all_of(transcript.layer_bytes.begin(), transcript.layer_bytes.end(),
                                   [](std::size_t bytes) { return bytes % 16 == 0; });
  if (aligned && transcript.instances % 8 == 0)
    stream_.emplace(key, nonce);
  else
    prf_per_gate(transcript, key, nonce, plane_);
}

// Callers read whole windows: w0 and n are even, so the words start and end on PRF blocks.
void PrfWords::fill(std::size_t w0, std::size_t n, std::uint64_t* out) {
  if (!stream_) {
    std::memcpy(out, plane_.data() + w0, n * sizeof(std::uint64_t));
    return;
  }
  auto* bytes = reinterpret_cast<std::uint8_t*>(out);
  const std::size_t from = 8 * w0, to = std::max(from, std::min(8 * (w0 + n), bytes_));
  if (to > from) stream_->blocks(static_cast<std::uint32_t>(from / 16), {bytes, to - from});
  std::memset(bytes + (to - from), 0, 8 * n - (to - from));
}

}  // namespace

CheckKey proof_key(const PrfKey& edge) { return edge_key(edge, "proof key"); }
CheckKey token_key(const PrfKey& edge) { return edge_key(edge, "token key"); }
CheckKey seed_key(const PrfKey& edge) { return edge_key(edge, "seed key"); }

std::size_t proof_bytes(std::size_t words) {
  const std::size_t all = padded(words);
  std::size_t total = 0;
  for (std::size_t s = 0; s < segment_count(all); ++s) total += segment_rounds(segment_words(all, s)) * 2 * kElement;
  return total;
}

std::size_t verifier_bytes(std::size_t words) {
  const std::size_t all = padded(words);
  std::size_t total = 32;
  for (std::size_t s = 0; s < segment_count(all); ++s) total += (segment_rounds(segment_words(all, s)) + 2) * kElement;
  return total;
}

Seed layer_receipt(const Context& context, std::span<const std::uint8_t> last_layer) {
  Seed receipt;
  context_hash(context).update("receipt").update(last_layer).finish(receipt);
  return receipt;
}

Seed seed_share(const Context& context, const CheckKey& verifiers, const Seed& receipt) {
  Seed share;
  context_hash(context, verifiers).update("seed share").update(receipt).finish(share);
  return share;
}

Seed weight_seed(const Context& context, const Seed& share, std::span<const std::uint8_t> last_layer) {
  Seed seed;
  context_hash(context).update("weights").update(share).update(last_layer).finish(seed);
  return seed;
}

Token pass_token(const Context& context, const CheckKey& verifiers) {
  Token token;
  Hash hash(verifiers, token.size());
  hash.update(kDomain)
      .update_u64(context.nonce.epoch)
      .update_u64(context.nonce.sequence)
      .update_u64(static_cast<std::uint64_t>(context.prover))
      .update_u64(context.words)
      .update("pass");
  hash.finish(token);
  return token;
}

std::vector<std::uint8_t> prove(const Context& context, const Seed& seed, const MinusPart& minus,
                                const PlusPart& plus, const CheckKey& with_minus, const CheckKey& with_plus) {
  const SecretWords u = padded_copy(minus.left, context.words), u2 = padded_copy(minus.right, context.words);
  const SecretWords v = padded_copy(plus.right, context.words), v2 = padded_copy(plus.left, context.words);
  return prove_planes(context, seed, {u.data(), u2.data(), kWindowWords}, {v.data(), v2.data(), kWindowWords},
                      with_minus, with_plus);
}

std::vector<std::uint8_t> verify_plus(const Context& context, const Seed& seed, const PlusPart& plus,
                                      std::span<const std::uint8_t> proof, const CheckKey& with_prover) {
  const SecretWords v = padded_copy(plus.right, context.words), v2 = padded_copy(plus.left, context.words);
  const SecretWords linear = padded_copy(plus.linear, context.words);
  return verify_plus_planes(context, seed, {v.data(), v2.data(), kWindowWords}, PlaneWords(linear.data()), proof,
                            with_prover);
}

bool verify_minus(const Context& context, const MinusPart& minus, std::span<const std::uint8_t> from_plus,
                  const CheckKey& with_prover) {
  const SecretWords u = padded_copy(minus.left, context.words), u2 = padded_copy(minus.right, context.words);
  const SecretWords linear = padded_copy(minus.linear, context.words);
  return verify_minus_planes(context, {u.data(), u2.data(), kWindowWords}, PlaneWords(linear.data()), from_plus,
                             with_prover);
}

namespace {

// The prover's own copy of V+'s linear part (the statement of the file header): r_i ^ F(k_i),
// with r_i as an honest prover sends it. (Its copy of V-'s is MinusLinear over its previous
// component.)
MPC_RSS3_CLONES void prover_plus_linear(std::uint64_t* __restrict out, const std::uint64_t* __restrict left_previous,
                                        const std::uint64_t* __restrict right_previous,
                                        const std::uint64_t* __restrict left_own,
                                        const std::uint64_t* __restrict right_own, std::size_t n) {
  for (std::size_t w = 0; w < n; ++w)
    out[w] ^= (left_previous[w] & right_previous[w]) ^ (left_previous[w] & right_own[w]) ^
              (left_own[w] & right_previous[w]);
}

class ProverPlusLinear final : public LinearWords {
 public:
  explicit ProverPlusLinear(const PartyPlanes& p) : p_(p) {}
  void words(std::size_t w0, std::size_t n, std::uint64_t* out) const override {
    p_.previous_prf.fill(w0, n, out);
    prover_plus_linear(out, p_.left_previous + w0, p_.right_previous + w0, p_.left_own + w0, p_.right_own + w0, n);
  }

 private:
  const PartyPlanes& p_;
};

// The prover's audit of a rejection (and_check_blame.hpp): V+'s signed evidence as V- forwarded
// it, against what this prover sent and what it can compute of both verifiers' halves.
AuditAnswer audit_rejection(const Context& mine, const Seed& my_seed, const PartyPlanes& planes,
                            std::span<const std::uint8_t> proof, const Seed& share_received,
                            std::span<const std::uint8_t> last_sent, const Evidence& evidence,
                            std::span<const std::uint8_t, 32> plus_key, const CheckKey& with_plus,
                            const CheckKey& with_minus) {
  if (!identity_signature_valid(
          plus_key, findings_statement(mine, evidence.receipt, evidence.share, evidence.findings_hash),
          evidence.signature))
    return AuditAnswer::AccusesMinus;
  if (evidence.receipt != layer_receipt(mine, last_sent)) return AuditAnswer::AccusesPlus;
  if (evidence.share != share_received) return AuditAnswer::AccusesMinus;
  const std::vector<std::uint8_t> findings = verify_plus_planes(
      mine, my_seed, {planes.right_own, planes.left_own, kWindowWords}, ProverPlusLinear(planes), proof, with_plus);
  if (findings_hash(mine, findings) != evidence.findings_hash) return AuditAnswer::AccusesPlus;
  if (verify_minus_planes(mine, {planes.left_previous, planes.right_previous, kWindowWords},
                          MinusLinear(planes.previous_prf, planes.left_previous, planes.right_previous), findings,
                          with_minus))
    return AuditAnswer::AccusesMinus;
  return AuditAnswer::AccusesNeither;
}

// What one party concluded, for the error it throws.
class Outcome {
 public:
  explicit Outcome(int party) : party_(party) {}
  void fail(const std::string& what) {
    failed_ = true;
    if (!text_.empty()) text_ += "; ";
    text_ += what;
  }
  void name(int deviated, const std::string& why) {
    claims_ |= static_cast<std::uint8_t>(1u << deviated);
    if (first_named_ < 0) first_named_ = deviated;
    fail(why + ": party " + std::to_string(deviated + 1) + " deviated");
  }
  bool failed() const { return failed_; }
  [[noreturn]] void raise(int suspect) const {
    throw AndCheckFailure("party " + std::to_string(party_ + 1) + ": the AND check failed: " + text_,
                          first_named_ >= 0 ? first_named_ : suspect, claims_);
  }

 private:
  int party_;
  bool failed_ = false;
  std::uint8_t claims_ = 0;
  int first_named_ = -1;
  std::string text_;
};

std::string party_name(int party) { return "party " + std::to_string(party + 1); }

}  // namespace

std::size_t check_batch(const AndTranscript& transcript, int party, const PrfKey& own, const PrfKey& previous,
                        BatchNonce nonce, LayerExchange& exchange, std::uint32_t first_layer,
                        const CheckIdentities& identities) {
  if (transcript.words() == 0) return 0;  // no AND: nothing any party could alter
  if (identities.own == nullptr) throw Error(Component::Protocol, "AND check without a signing key");

  PrfWords own_prf(transcript, own, nonce), previous_prf(transcript, previous, nonce);

  // The proof covers every lane of the transcript, the padding lanes of a partial chunk's last
  // byte included: they are zero in every plane of an honest party (its operands are recorded
  // without them, the layout sends them as zero, the PRF planes are cleared there), so a party
  // that sets one is refused like any other deviation.
  const std::size_t words = padded(transcript.words());
  const PartyPlanes planes{transcript.left_own.data(),  transcript.left_previous.data(),
                           transcript.right_own.data(), transcript.right_previous.data(),
                           transcript.received.data(),  own_prf,
                           previous_prf};

  const int before = previous_party(party), after = next_party(party);
  const Context mine{nonce, party, words}, of_before{nonce, before, words}, of_after{nonce, after, words};
  const CheckKey own_proof = proof_key(own), previous_proof = proof_key(previous);
  const auto key_of = [&](int p) {
    return std::span<const std::uint8_t, 32>(identities.public_keys[static_cast<std::size_t>(p)]);
  };
  const std::size_t last_bytes = transcript.layer_bytes.back();
  if (transcript.last_sent.size() != last_bytes)
    throw Error(Component::Protocol, "AND transcript without its last layer as sent");
  const std::span<const std::uint8_t> last_received(
      reinterpret_cast<const std::uint8_t*>(transcript.received.data()) + transcript.bytes - last_bytes, last_bytes);
  std::size_t sent = 0;

  // 0. As V+ of party-1, a receipt of its last layer to party+1 (its V-); party-1's receipt of
  //    party+1's last layer to me. Party+1 gets its seed share only after this, so it cannot
  //    learn its seed before its last layer is in its V+'s hands.
  const Seed receipt_out = layer_receipt(of_before, last_received);
  const Seed share_before = seed_share(of_before, seed_key(own), receipt_out);
  const Seed seed_before = weight_seed(of_before, share_before, last_received);
  Seed receipt_in{};
  exchange.exchange(first_layer, receipt_out, receipt_in);
  sent += receipt_out.size();

  // 1. The share of party+1's weights' seed to it (as its V-), drawn over that receipt;
  //    party-1's share of mine. As V+ of party-1 this party draws that share itself.
  const Seed share_out = seed_share(of_after, seed_key(previous), receipt_in);
  Seed share_in{};
  exchange.exchange(first_layer + 1, share_out, share_in);
  sent += share_out.size();
  const Seed my_seed = weight_seed(mine, share_in, transcript.last_sent);

  // 2. My proof to party+1 (x: c_{party-1}, V-'s; y: c_party, V+'s, each product's operand
  //    paired with the other's), party-1's proof to me.
  const std::vector<std::uint8_t> proof =
      prove_planes(mine, my_seed, {planes.left_previous, planes.right_previous, kWindowWords},
                   {planes.right_own, planes.left_own, kWindowWords}, previous_proof, own_proof);
  std::vector<std::uint8_t> proof_in(proof.size());
  exchange.exchange(first_layer + 2, proof, proof_in);
  sent += proof.size();

  // 3. As V+ of party-1 (holding c_{party-1}), my findings to party+1 (its V-), signed with what
  //    they rest on; party-1's signed findings on party+1 to me.
  std::vector<std::uint8_t> findings =
      verify_plus_planes(of_before, seed_before, {planes.right_previous, planes.left_previous, kWindowWords},
                         PlusLinear(planes), proof_in, previous_proof);
  const std::size_t findings_bytes = findings.size();
  const IdentitySignature findings_signature = identities.own->sign(
      findings_statement(of_before, receipt_out, share_before, findings_hash(of_before, findings)));
  findings.insert(findings.end(), findings_signature.begin(), findings_signature.end());
  std::vector<std::uint8_t> findings_in(findings.size());
  exchange.exchange(first_layer + 3, findings, findings_in);
  sent += findings.size();
  const std::span<const std::uint8_t> findings_of_after(findings_in.data(), findings_bytes);

  Outcome outcome(party);

  // 4. As V- of party+1 (holding c_party), the signed verdict to it; party-1's verdict on me.
  Verdict verdict;
  if (verify_minus_planes(of_after, {planes.left_own, planes.right_own, kWindowWords},
                          MinusLinear(planes.own_prf, planes.left_own, planes.right_own), findings_of_after,
                          own_proof)) {
    verdict.token = pass_token(of_after, token_key(previous));
  } else {
    Evidence& e = verdict.evidence;
    e.receipt = receipt_in;
    e.share = share_out;
    e.findings_hash = findings_hash(of_after, findings_of_after);
    std::memcpy(e.signature.data(), findings_in.data() + findings_bytes, e.signature.size());
    if (identity_signature_valid(key_of(before), findings_statement(of_after, e.receipt, e.share, e.findings_hash),
                                 e.signature)) {
      verdict.status = VerdictStatus::Rejected;
      outcome.fail("the check of " + party_name(after) + "'s AND gates failed (" + suspects(after, before) + ")");
    } else {
      verdict.status = VerdictStatus::FindingsRefused;
      outcome.name(before, "its signed findings on " + party_name(after) + " are not what it sent");
    }
  }
  const std::vector<std::uint8_t> verdict_out = encode_verdict(of_after, verdict, *identities.own);
  std::vector<std::uint8_t> verdict_in(kVerdictBytes);
  exchange.exchange(first_layer + 4, verdict_out, verdict_in);
  sent += verdict_out.size();

  // 5. As the prover, the verdict on me relayed to party+1 (my V+), with my audit if it rejects
  //    me; party-1's relay of the verdict on it to me.
  Relay relay;
  relay.verdict = verdict_in;
  const auto on_me = decode_verdict(verdict_in);
  if (!on_me || !verdict_signed_by(mine, verdict_in, key_of(before))) {
    relay.verdict_signature_failed = true;
    outcome.name(before, "its verdict on my AND gates is not signed");
  } else if (on_me->status == VerdictStatus::Pass) {
    if (!clean_pass(*on_me)) outcome.name(before, "its passing verdict on my AND gates carries evidence");
  } else if (on_me->status == VerdictStatus::FindingsRefused) {
    outcome.fail("party " + std::to_string(before + 1) + " refused party " + std::to_string(after + 1) +
                 "'s findings on my AND gates");
  } else {
    outcome.fail("the check of my AND gates failed at " + party_name(before) + " (" + suspects(party, after) + ")");
    relay.answer = audit_rejection(mine, my_seed, planes, proof, share_in, transcript.last_sent, on_me->evidence,
                                   key_of(after), own_proof, previous_proof);
    if (relay.answer == AuditAnswer::AccusesPlus)
      outcome.name(after, "my audit of that rejection found its findings or receipt false");
    else if (relay.answer == AuditAnswer::AccusesMinus)
      outcome.name(before, "my audit of its rejection found it false");
  }
  const bool relay_signed = relay.verdict_signature_failed || !on_me || on_me->status != VerdictStatus::Pass;
  const std::vector<std::uint8_t> relay_out = encode_relay(mine, relay, relay_signed ? identities.own : nullptr);
  std::vector<std::uint8_t> relay_in(kRelayBytes);
  exchange.exchange(first_layer + 5, relay_out, relay_in);
  sent += relay_out.size();

  // 6. As V+ of party-1, its relay forwarded to party+1 (its V-) unless a clean pass; party-1's
  //    forward of party+1's relay to me.
  ForwardKind forward = ForwardKind::Nothing;
  {
    const auto got = decode_relay(relay_in);
    const auto verdict_on_before = got ? decode_verdict(got->verdict) : std::nullopt;
    // Checked only off a clean pass: a signature check is the costliest step of a passing batch.
    const auto verdict_signed = [&] { return got && verdict_signed_by(of_before, got->verdict, key_of(after)); };
    const bool must_be_signed =
        !got || got->verdict_signature_failed || !verdict_on_before || verdict_on_before->status != VerdictStatus::Pass;
    if (got && !must_be_signed && got->answer == AuditAnswer::NotAsked && clean_pass(*verdict_on_before) &&
        equal_constant_time(verdict_on_before->token, pass_token(of_before, token_key(own)))) {
      // party-1 passed
    } else if (!got) {
      outcome.name(before, "its relay of the verdict on its AND gates is malformed");
    } else if (must_be_signed && !relay_signed_by(of_before, relay_in, key_of(before))) {
      forward = ForwardKind::RelayRefused;
      outcome.name(before, "its relay of the verdict on its AND gates is not signed");
    } else if (must_be_signed) {
      forward = ForwardKind::Relay;
      if (got->verdict_signature_failed) {
        if (verdict_signed() && verdict_on_before)
          outcome.name(before, "it says " + party_name(after) + "'s signed verdict was not");
        else
          outcome.fail(party_name(before) + " found " + party_name(after) + "'s verdict on it unsigned");
      } else if (!verdict_signed()) {
        outcome.name(before, "it relayed an unsigned verdict without saying so");
      } else if (verdict_on_before->status == VerdictStatus::FindingsRefused) {
        outcome.name(after, "it refused my findings on " + party_name(before) + ", which I signed as I sent them");
      } else {
        outcome.fail("the check of " + party_name(before) + "'s AND gates failed at " + party_name(after) + " (" +
                     suspects(before, party) + ")");
        if (got->answer == AuditAnswer::NotAsked)
          outcome.name(before, "it did not answer that rejection");
        else if (got->answer == AuditAnswer::AccusesPlus)
          outcome.name(before, "it accused my findings on its AND gates, which are right");
      }
    } else if (!verdict_signed()) {
      outcome.name(before, "it relayed an unsigned verdict without saying so");
    } else if (!clean_pass(*verdict_on_before)) {
      outcome.name(after, "its passing verdict on " + party_name(before) + " carries evidence");
    } else if (got->answer != AuditAnswer::NotAsked) {
      outcome.name(before, "it answered a verdict that passed it");
    } else {
      outcome.name(after, "its signed verdict on " + party_name(before) + " carries a wrong pass token");
    }
  }
  const std::vector<std::uint8_t> forward_out = encode_forward(forward, relay_in);
  std::vector<std::uint8_t> forward_in(kForwardBytes);
  exchange.exchange(first_layer + 6, forward_out, forward_in);
  sent += forward_out.size();

  // As V- of party+1: what party-1 (its V+) forwarded of party+1's relay.
  if (verdict.status != VerdictStatus::FindingsRefused) {
    const std::span<const std::uint8_t> forwarded(forward_in.data() + 1, kRelayBytes);
    const std::uint8_t kind = forward_in[0];
    if (kind == static_cast<std::uint8_t>(ForwardKind::Nothing)) {
      if (!std::all_of(forwarded.begin(), forwarded.end(), [](std::uint8_t b) { return b == 0; }))
        outcome.name(before, "its empty forward of " + party_name(after) + "'s relay is not empty");
      else if (verdict.status == VerdictStatus::Rejected)
        outcome.name(before, "it did not forward " + party_name(after) + "'s answer to my rejection");
    } else if (kind == static_cast<std::uint8_t>(ForwardKind::RelayRefused)) {
      outcome.fail(party_name(before) + " refused " + party_name(after) + "'s relay");
    } else if (kind != static_cast<std::uint8_t>(ForwardKind::Relay) ||
               !relay_signed_by(of_after, forwarded, key_of(after))) {
      outcome.name(before, "it forwarded a relay " + party_name(after) + " did not sign");
    } else {
      const auto got = decode_relay(forwarded);
      if (!got || !equal_constant_time(got->verdict, verdict_out)) {
        outcome.name(after, "its signed relay changed my verdict on its AND gates");
      } else if (got->verdict_signature_failed) {
        outcome.name(after, "it says my signed verdict on its AND gates was not");
      } else if (verdict.status == VerdictStatus::Pass) {
        outcome.name(before, "it forwarded a relay of my passing verdict on " + party_name(after));
      } else if (got->answer != AuditAnswer::AccusesPlus) {
        outcome.name(after, "its AND gates failed their check, and its audit does not put it on " +
                                party_name(before));
      }
    }
  }

  if (outcome.failed()) outcome.raise(verdict.status != VerdictStatus::Pass ? after : before);
  return sent;
}

}  // namespace mpc::rss3::and_check
