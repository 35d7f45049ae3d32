#include "protocol/rss3/and_check.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/field_kernels.hpp"
#include "protocol/rss3/gf128.hpp"
#include "protocol/rss3/shares.hpp"
#include "protocol/rss3/bit_combination.hpp"
#include "protocol/rss3/target_clones.hpp"

namespace mpc::rss3::and_check {
namespace {

constexpr std::size_t kSegmentWords = kSegmentGates / 64;
constexpr std::size_t kElement = 16;
constexpr char kDomain[] = "mpc-kdc rss3 AND check v2";

// The first rounds bind the bit variables: which product of the gate (sigma) and the low four
// bits of the word index. A window is the 2^kBitRounds words a grid point combines: 16 words
// of each operand product.
constexpr unsigned kBitRounds = 5;
constexpr std::size_t kWindowEntries = std::size_t{1} << kBitRounds;
constexpr std::size_t kWindowWords = kWindowEntries / 2;
constexpr std::size_t kGridPoints = 243;  // 3^kBitRounds: each bit variable at 0, 1 and infinity
static_assert(kSegmentWords % kWindowWords == 0);

std::size_t segment_count(std::size_t words) { return (words + kSegmentWords - 1) / kSegmentWords; }
std::size_t segment_words(std::size_t words, std::size_t segment) {
  return std::min(kSegmentWords, words - segment * kSegmentWords);
}
std::size_t segment_windows(std::size_t words) { return (words + kWindowWords - 1) / kWindowWords; }
std::size_t fold_rounds(std::size_t len) {
  std::size_t rounds = 0;
  for (; len > 1; len = (len + 1) / 2) ++rounds;
  return rounds;
}
// Field entries after the bit rounds: one per lane of each window, and the mask pair's.
std::size_t field_length(std::size_t words) { return 64 * segment_windows(words) + 1; }
std::size_t segment_rounds(std::size_t words) { return kBitRounds + fold_rounds(field_length(words)); }

// A vector holding functions of secret shares (bits or field elements): wiped when it goes.
template <class T>
class Wiped {
 public:
  explicit Wiped(std::size_t size) : values_(size) {}
  Wiped(const Wiped&) = delete;
  Wiped& operator=(const Wiped&) = delete;
  ~Wiped() { wipe(values_.data(), values_.size() * sizeof(T)); }
  T* data() { return values_.data(); }
  T& operator[](std::size_t i) { return values_[i]; }
  std::span<const T> span() const { return values_; }

 private:
  std::vector<T> values_;
};
using Elements = Wiped<Gf128>;
using Words = Wiped<std::uint64_t>;

// The statement's halves, a segment of words at a time, from the transcript's planes. Plain
// loops over restrict pointers, so that each is one vectorised pass.
MPC_RSS3_CLONES void xor_planes(std::uint64_t* __restrict out, const std::uint64_t* __restrict a,
                                const std::uint64_t* __restrict b, std::size_t n) {
  for (std::size_t w = 0; w < n; ++w) out[w] = a[w] ^ b[w];
}
// out = sent ^ (lx & rx) ^ (la & ra) ^ own: c_{party-1}'s half of r_{party-1} ^ F(k_{party-1}),
// from what this party sent (lx, la: x and a slots of the left operand; rx, ra of the right).
MPC_RSS3_CLONES void previous_half(std::uint64_t* __restrict out, const std::uint64_t* __restrict sent,
                                   const std::uint64_t* __restrict lx, const std::uint64_t* __restrict rx,
                                   const std::uint64_t* __restrict la, const std::uint64_t* __restrict ra,
                                   const std::uint64_t* __restrict own, std::size_t n) {
  for (std::size_t w = 0; w < n; ++w) out[w] = sent[w] ^ (lx[w] & rx[w]) ^ (la[w] & ra[w]) ^ own[w];
}
MPC_RSS3_CLONES void and_xor(std::uint64_t* __restrict out, const std::uint64_t* __restrict a,
                             const std::uint64_t* __restrict b, const std::uint64_t* __restrict c, std::size_t n) {
  for (std::size_t w = 0; w < n; ++w) out[w] = (a[w] & b[w]) ^ c[w];
}
MPC_RSS3_CLONES void add_and(std::uint64_t* __restrict out, const std::uint64_t* __restrict a,
                             const std::uint64_t* __restrict b, std::size_t n) {
  for (std::size_t w = 0; w < n; ++w) out[w] ^= a[w] & b[w];
}
MPC_RSS3_CLONES void add_plane(std::uint64_t* __restrict out, const std::uint64_t* __restrict a, std::size_t n) {
  for (std::size_t w = 0; w < n; ++w) out[w] ^= a[w];
}

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

// ChaCha20 under `key`, one stream per segment.
void expand(const CheckKey& key, std::size_t segment, std::span<std::uint8_t> out) {
  std::uint8_t nonce[crypto_stream_chacha20_ietf_NONCEBYTES] = {};
  for (int i = 0; i < 8; ++i) nonce[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(segment) >> (8 * i));
  crypto_stream_chacha20_ietf(out.data(), out.size(), nonce, key.data());
}

Gf128 update_claim(const detail::FieldKernels& k, Gf128 claim, Gf128 c0, Gf128 c2, Gf128 t) {
  // P(X) = c0 + c1 X + c2 X^2 with P(0) + P(1) = claim gives c1 = claim + c2.
  const Gf128 c1 = claim ^ c2;
  return c0 ^ k.mul(c1, t) ^ k.mul(c2, k.mul(t, t));
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

// The weights of one segment. Gate (w, j) of the segment (word w, lane j), w = 16 c + l, has
// weight beta^l rho_c x^j with beta^l = prod over the bits b of l of beta[b + 1]; the product
// selector sigma has weight 1 (the statement adds both products). Distinct monomials per gate,
// so a wrong gate leaves a nonzero polynomial of degree 5 in the random weights.
struct Weights {
  explicit Weights(const Seed& seed, std::size_t segment, std::size_t windows) : rho(windows) {
    std::vector<std::uint8_t> bytes((kBitRounds - 1 + windows) * kElement);
    CheckKey key;
    std::memcpy(key.data(), seed.data(), key.size());
    expand(key, segment, bytes);
    beta[0] = Gf128{1, 0};
    for (unsigned b = 1; b < kBitRounds; ++b) beta[b] = gf128_load(bytes.data() + (b - 1) * kElement);
    for (std::size_t c = 0; c < windows; ++c) rho[c] = gf128_load(bytes.data() + (kBitRounds - 1 + c) * kElement);
  }
  // The weight of word l of a window, without rho_c.
  Gf128 word_weight(const detail::FieldKernels& k, std::size_t l) const {
    Gf128 w{1, 0};
    for (unsigned b = 1; b < kBitRounds; ++b)
      if ((l >> (b - 1)) & 1) w = k.mul(w, beta[b]);
    return w;
  }
  Gf128 beta[kBitRounds];
  std::vector<Gf128> rho;
};

// A verifier's share of the weighted claim: sum over gates of their weight times `linear`.
Gf128 weighted_claim(const detail::FieldKernels& k, const Weights& weights, std::span<const std::uint64_t> linear) {
  Gf128 by_word[kWindowWords];
  k.window_sums(linear.data(), weights.rho.size(), kWindowWords, weights.rho.data(), by_word);
  Gf128 claim;
  for (std::size_t l = 0; l < kWindowWords; ++l) claim ^= k.mul(weights.word_weight(k, l), by_word[l]);
  return claim;
}

// One operand side of a segment (`first` and `second` hold its words), padded to whole windows:
// entry s of window c is word 16 c + (s >> 1) of `first` (s even) or `second` (s odd), stored
// window by window.
class Side {
 public:
  Side(std::span<const std::uint64_t> first, std::span<const std::uint64_t> second)
      : entries_(kWindowEntries * segment_windows(first.size())) {
    for (std::size_t w = 0; w < first.size(); ++w) {
      const std::size_t c = w / kWindowWords, l = w % kWindowWords;
      entries_[kWindowEntries * c + 2 * l] = first[w];
      entries_[kWindowEntries * c + 2 * l + 1] = second[w];
    }
  }
  const std::uint64_t* window(std::size_t c) const { return entries_.span().data() + kWindowEntries * c; }
  const std::uint64_t* data() const { return entries_.span().data(); }

 private:
  Wiped<std::uint64_t> entries_;
};

// grid[p] = sum over windows c and lanes j of rho_c x^j X(p, c, j) Y(p, c, j): every sum the bit
// rounds need, computed once (the small-value sum-check of and_check.hpp): on the grid, X and Y
// are bits and so is their product.
void grid_sums(const detail::FieldKernels& k, const Side& x, const Side& y, const Weights& weights, Gf128* grid) {
  constexpr std::size_t kChunk = 16;
  const std::size_t windows = weights.rho.size();
  Words products(kChunk * kGridPoints);
  alignas(32) Words4 scratch[kGridScratch];
  Gf128 partial[kGridPoints];
  for (std::size_t p = 0; p < kGridPoints; ++p) grid[p] = Gf128{};
  for (std::size_t c0 = 0; c0 < windows; c0 += kChunk) {
    const std::size_t count = std::min(kChunk, windows - c0);
    for (std::size_t c = 0; c < count; c += kGridWindows) {
      const std::size_t side_by_side = std::min(kGridWindows, count - c);
      const std::uint64_t* xs[kGridWindows];
      const std::uint64_t* ys[kGridWindows];
      for (std::size_t m = 0; m < side_by_side; ++m) xs[m] = x.window(c0 + c + m), ys[m] = y.window(c0 + c + m);
      grid_products(xs, ys, side_by_side, kBitRounds, products.data() + kGridPoints * c, scratch);
    }
    k.window_sums(products.data(), count, kGridPoints, weights.rho.data() + c0, partial);
    for (std::size_t p = 0; p < kGridPoints; ++p) grid[p] ^= partial[p];
  }
  wipe(partial, sizeof partial);
  wipe(scratch, sizeof scratch);
}

// The prover's sums over the grid, with the bit variables before the current round bound to
// their challenges: `values` holds one entry per point of {0, 1, inf} for each variable not yet
// bound, the current one the lowest digit.
class Grid {
 public:
  explicit Grid(const Gf128* sums) : values_(kGridPoints) {
    for (std::size_t p = 0; p < kGridPoints; ++p) values_[p] = sums[p];
  }
  // q(z) of round r (z = 1, or 2 for the leading coefficient): the variables after it summed
  // over {0, 1} with their weights.
  Gf128 round_value(const detail::FieldKernels& k, unsigned r, unsigned z, const Weights& weights) {
    Gf128 value;
    const unsigned later = kBitRounds - 1 - r;
    for (std::size_t s = 0; s < (std::size_t{1} << later); ++s) {
      std::size_t point = z, power = 3;
      Gf128 weight{1, 0};
      for (unsigned b = 0; b < later; ++b, power *= 3)
        if ((s >> b) & 1) {
          point += power;
          weight = k.mul(weight, weights.beta[r + 1 + b]);
        }
      value ^= k.mul(weight, values_[point]);
    }
    return value;
  }
  // Binds the current variable to t through the degree-2 basis on {0, 1, inf}: 1 + t, t, t + t^2.
  void bind(const detail::FieldKernels& k, Gf128 t) {
    const Gf128 at0 = t ^ Gf128{1, 0}, at1 = t, at_inf = t ^ k.mul(t, t);
    points_ /= 3;
    for (std::size_t m = 0; m < points_; ++m)
      values_[m] = k.mul(at0, values_[3 * m]) ^ k.mul(at1, values_[3 * m + 1]) ^ k.mul(at_inf, values_[3 * m + 2]);
  }

 private:
  Elements values_;
  std::size_t points_ = kGridPoints;
};

// The field vector after the bit rounds, bound at t: out[64 c + j] = sum over window entries s
// of eq(t, s) times bit j of entry s, with eq(t, s) = prod over b of t_b (s_b = 1) or 1 + t_b.
void bind_bits(const detail::FieldKernels& k, const Side& side, std::size_t windows, const Gf128* t, Gf128* out) {
  const Gf128 one{1, 0};
  // Doubled one variable at a time: entries below 2^b hold eq over the first b variables.
  Gf128 eq[kWindowEntries];
  eq[0] = one;
  for (unsigned b = 0; b < kBitRounds; ++b) {
    const std::size_t filled = std::size_t{1} << b;
    for (std::size_t s = 0; s < filled; ++s) {
      eq[filled + s] = k.mul(eq[s], t[b]);
      eq[s] = k.mul(eq[s], t[b] ^ one);
    }
  }
  combine_bits(side.data(), windows, kWindowEntries, eq, out);
}


// A transcript's gates without its padding lanes. A partial chunk of n_c instances, n_c not a
// multiple of 8, sends ceil(n_c / 8) bytes per AND of which only n_c bits are instances: with
// one instance, 7 bits in 8 are padding. Padding lanes reach no output, so the proof leaves
// them out; every party drops the same lanes, from the batch's layout alone, keeping the
// gates' order. Without padding the gates are the transcript's words as they are.
class DenseGates {
 public:
  explicit DenseGates(const AndTranscript& t) : t_(t) {
    const std::size_t partial = t.instances % kChunkInstances;
    tail_bits_ = static_cast<unsigned>(partial % 8);
    chunk_bytes_ = (partial + 7) / 8;
    full_bytes_ = t.instances / kChunkInstances * (kChunkInstances / 8);
    std::size_t ands = 0;
    for (std::size_t k : t.layer_ands) ands += k;
    words_ = tail_bits_ == 0 ? t.words() : (ands * t.instances + 63) / 64;
  }
  bool padded() const { return tail_bits_ != 0; }
  std::size_t words() const { return words_; }

  // `gates`: the transcript's layout (t.words() words); `out`: words() words.
  void gather(const std::uint64_t* gates, std::uint64_t* out) const {
    const auto* src = reinterpret_cast<const std::uint8_t*>(gates);
    std::uint64_t* to = out;
    std::uint64_t acc = 0;
    unsigned fill = 0;
    auto put = [&](std::uint64_t value, unsigned count) {  // count < 64, value < 2^count
      acc |= value << fill;
      fill += count;
      if (fill >= 64) {
        *to++ = acc;
        fill -= 64;
        acc = fill == 0 ? 0 : value >> (count - fill);
      }
    };
    // Whole bytes of gates, four at a time.
    auto put_bytes = [&](const std::uint8_t* bytes, std::size_t count) {
      std::size_t i = 0;
      for (; i + 4 <= count; i += 4) {
        std::uint32_t four;
        std::memcpy(&four, bytes + i, 4);
        put(four, 32);
      }
      for (; i < count; ++i) put(bytes[i], 8);
    };
    std::size_t from = 0;
    const auto tail_mask = static_cast<std::uint8_t>((1u << tail_bits_) - 1);
    if (full_bytes_ == 0 && chunk_bytes_ == 1) {
      // Fewer than eight instances: every AND is one byte holding tail_bits_ gates, so the
      // transcript is one run of bytes, packed eight at a time without a branch per gate.
      std::size_t bytes = 0;
      for (std::size_t ands : t_.layer_ands) bytes += ands;
      for (; from + 8 <= bytes; from += 8) {
        std::uint64_t eight;
        std::memcpy(&eight, src + from, 8);
        std::uint64_t packed = 0;
        for (unsigned b = 0; b < 8; ++b) packed |= ((eight >> (8 * b)) & tail_mask) << (tail_bits_ * b);
        put(packed, 8 * tail_bits_);
      }
      for (; from < bytes; ++from) put(src[from] & tail_mask, tail_bits_);
      if (fill != 0) *to++ = acc;
      std::fill(to, out + words_, 0);
      return;
    }
    for (std::size_t ands : t_.layer_ands) {
      put_bytes(src + from, ands * full_bytes_);
      from += ands * full_bytes_;
      for (std::size_t k = 0; k < ands; ++k, from += chunk_bytes_) {
        put_bytes(src + from, chunk_bytes_ - 1);
        put(src[from + chunk_bytes_ - 1] & tail_mask, tail_bits_);
      }
    }
    if (fill != 0) *to++ = acc;
    std::fill(to, out + words_, 0);
  }

 private:
  const AndTranscript& t_;
  unsigned tail_bits_ = 0;
  std::size_t chunk_bytes_ = 0, full_bytes_ = 0, words_ = 0;
};
// A verifier's part in one segment's rounds: its claim share from its linear part, updated by
// each round's (first, second, challenge) from `next_round`, and its own vector (A for V-,
// weighted; B for V+) bound at the bit rounds' challenges, `last` appended, then folded.
// Returns the final claim share; the vector's final value is v[0].
template <class NextRound>
Gf128 verifier_rounds(const detail::FieldKernels& k, const Weights& weights, std::span<const std::uint64_t> linear,
                      const Side& side, bool weighted, Gf128 last, Gf128* v, NextRound next_round) {
  const std::size_t words = linear.size();
  const std::size_t windows = segment_windows(words), len = field_length(words);
  Words padded(kWindowWords * windows);
  std::memcpy(padded.data(), linear.data(), words * 8);
  Gf128 claim = weighted_claim(k, weights, padded.span());
  Gf128 bound[kBitRounds];
  for (unsigned r = 0; r < kBitRounds; ++r) {
    const auto [q1, q_inf, t] = next_round();
    claim = bit_round_claim(k, claim, q1, q_inf, weights.beta[r], t);
    bound[r] = t;
  }
  bind_bits(k, side, windows, bound, v);
  if (weighted) k.weight_lanes(v, windows, weights.rho.data());
  v[len - 1] = last;
  for (std::size_t n = len; n > 1; n = (n + 1) / 2) {
    const auto [c0, c2, t] = next_round();
    claim = update_claim(k, claim, c0, c2, t);
    k.fold(v, n, t);
  }
  return claim;
}

// A role's halves segment by segment: spans of `words` words from word w0 of the batch. A
// caller that derives the halves from a transcript computes one segment at a time, so a batch's
// check holds no whole-batch copies.
using MinusSource = std::function<MinusPart(std::size_t w0, std::size_t words)>;
using PlusSource = std::function<PlusPart(std::size_t w0, std::size_t words)>;

MinusSource whole(const MinusPart& part) {
  return [&part](std::size_t w0, std::size_t words) {
    return MinusPart{part.left.subspan(w0, words), part.right.subspan(w0, words), part.linear.subspan(w0, words)};
  };
}
PlusSource whole(const PlusPart& part) {
  return [&part](std::size_t w0, std::size_t words) {
    return PlusPart{part.left.subspan(w0, words), part.right.subspan(w0, words), part.linear.subspan(w0, words)};
  };
}

std::vector<std::uint8_t> prove_segments(const Context& context, const Seed& seed, const MinusSource& minus_of,
                                         const PlusSource& plus_of, const CheckKey& with_minus,
                                         const CheckKey& with_plus);
std::vector<std::uint8_t> verify_plus_segments(const Context& context, const Seed& seed, const PlusSource& plus_of,
                                               std::span<const std::uint8_t> proof, const CheckKey& with_prover);
bool verify_minus_segments(const Context& context, const MinusSource& minus_of,
                           std::span<const std::uint8_t> from_plus, const CheckKey& with_prover);

}  // namespace

CheckKey proof_key(const PrfKey& edge) {
  CheckKey out;
  Hash(edge).update(kDomain).update("proof key").finish(out);
  return out;
}

CheckKey token_key(const PrfKey& edge) {
  CheckKey out;
  Hash(edge).update(kDomain).update("token key").finish(out);
  return out;
}

std::size_t proof_bytes(std::size_t words) {
  std::size_t total = 0;
  for (std::size_t s = 0; s < segment_count(words); ++s) total += segment_rounds(segment_words(words, s)) * 2 * kElement;
  return total;
}

std::size_t verifier_bytes(std::size_t words) {
  std::size_t total = 32;
  for (std::size_t s = 0; s < segment_count(words); ++s)
    total += (segment_rounds(segment_words(words, s)) + 2) * kElement;
  return total;
}

Seed weight_seed(const Context& context, std::span<const std::uint64_t> sent) {
  Seed seed;
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(sent.data()), sent.size_bytes());
  context_hash(context).update("weights").update(bytes).finish(seed);
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
  return prove_segments(context, seed, whole(minus), whole(plus), with_minus, with_plus);
}

std::vector<std::uint8_t> verify_plus(const Context& context, const Seed& seed, const PlusPart& plus,
                                      std::span<const std::uint8_t> proof, const CheckKey& with_prover) {
  return verify_plus_segments(context, seed, whole(plus), proof, with_prover);
}

bool verify_minus(const Context& context, const MinusPart& minus, std::span<const std::uint8_t> from_plus,
                  const CheckKey& with_prover) {
  return verify_minus_segments(context, whole(minus), from_plus, with_prover);
}

namespace {

std::vector<std::uint8_t> prove_segments(const Context& context, const Seed& seed, const MinusSource& minus_of,
                                         const PlusSource& plus_of, const CheckKey& with_minus,
                                         const CheckKey& with_plus) {
  const detail::FieldKernels& k = detail::field_kernels();
  std::vector<std::uint8_t> proof(proof_bytes(context.words));
  const CheckKey share_key = purpose_key(context, with_minus, "round shares");
  const CheckKey mask_key = purpose_key(context, with_plus, "mask");
  std::uint8_t* out = proof.data();
  const std::size_t most = field_length(std::min(kSegmentWords, context.words));
  Elements a(most), b(most), sums(kGridPoints);
  for (std::size_t s = 0; s < segment_count(context.words); ++s) {
    const std::size_t w0 = s * kSegmentWords, words = segment_words(context.words, s);
    const std::size_t windows = segment_windows(words), len = field_length(words), rounds = segment_rounds(words);
    const Weights weights(seed, s, windows);
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

    // x: V-'s components (u, u'), y: V+'s (v, v'); the statement is u v + u' v' per gate.
    const MinusPart minus = minus_of(w0, words);
    const PlusPart plus = plus_of(w0, words);
    const Side x(minus.left, minus.right), y(plus.right, plus.left);
    grid_sums(k, x, y, weights, sums.data());
    Grid grid(sums.data());
    Gf128 bound[kBitRounds];
    for (unsigned r = 0; r < kBitRounds; ++r) {
      bound[r] = emit(grid.round_value(k, r, 1, weights), grid.round_value(k, r, 2, weights));
      grid.bind(k, bound[r]);
    }
    bind_bits(k, x, windows, bound, a.data());
    k.weight_lanes(a.data(), windows, weights.rho.data());
    bind_bits(k, y, windows, bound, b.data());
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

std::vector<std::uint8_t> verify_plus_segments(const Context& context, const Seed& seed, const PlusSource& plus_of,
                                               std::span<const std::uint8_t> proof, const CheckKey& with_prover) {
  if (proof.size() != proof_bytes(context.words))
    throw VerificationError(Component::Protocol, "AND check proof of " + std::to_string(proof.size()) + " bytes");
  const detail::FieldKernels& k = detail::field_kernels();
  std::vector<std::uint8_t> message(verifier_bytes(context.words));
  std::memcpy(message.data(), seed.data(), seed.size());
  std::uint8_t* out = message.data() + seed.size();
  const std::uint8_t* in = proof.data();
  const CheckKey mask_key = purpose_key(context, with_prover, "mask");
  Elements b(field_length(std::min(kSegmentWords, context.words)));
  for (std::size_t s = 0; s < segment_count(context.words); ++s) {
    const std::size_t w0 = s * kSegmentWords, words = segment_words(context.words, s);
    const std::size_t windows = segment_windows(words), rounds = segment_rounds(words);
    const Weights weights(seed, s, windows);
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
    const PlusPart plus = plus_of(w0, words);
    const Gf128 claim = verifier_rounds(k, weights, plus.linear, Side(plus.right, plus.left),
                                        false, gf128_load(mask.data()), b.data(), receive);
    gf128_store(b[0], out + rounds * kElement);
    gf128_store(claim, out + (rounds + 1) * kElement);
    in += rounds * 2 * kElement;
    out += (rounds + 2) * kElement;
  }
  return message;
}

bool verify_minus_segments(const Context& context, const MinusSource& minus_of,
                           std::span<const std::uint8_t> from_plus, const CheckKey& with_prover) {
  if (from_plus.size() != verifier_bytes(context.words)) return false;
  const detail::FieldKernels& k = detail::field_kernels();
  Seed seed;
  std::memcpy(seed.data(), from_plus.data(), seed.size());
  const std::uint8_t* in = from_plus.data() + seed.size();
  const CheckKey share_key = purpose_key(context, with_prover, "round shares");
  bool passed = true;
  Elements a(field_length(std::min(kSegmentWords, context.words)));
  for (std::size_t s = 0; s < segment_count(context.words); ++s) {
    const std::size_t w0 = s * kSegmentWords, words = segment_words(context.words, s);
    const std::size_t windows = segment_windows(words), rounds = segment_rounds(words);
    const Weights weights(seed, s, windows);
    SecretBytes shares(rounds * 2 * kElement);
    expand(share_key, s, shares.span());
    std::size_t round = 0;
    auto receive = [&]() {
      const std::uint8_t* share = shares.data() + round * 2 * kElement;
      const Gf128 t = gf128_load(in + round * kElement);
      ++round;
      return std::array<Gf128, 3>{gf128_load(share), gf128_load(share + kElement), t};
    };
    const MinusPart minus = minus_of(w0, words);
    const Gf128 claim = verifier_rounds(k, weights, minus.linear, Side(minus.left, minus.right),
                                        true, Gf128{}, a.data(), receive);
    const Gf128 b_final = gf128_load(in + rounds * kElement);
    const Gf128 claim_plus = gf128_load(in + (rounds + 1) * kElement);
    // Every segment is checked, pass or fail, so the time taken does not say which failed.
    passed &= k.mul(a[0], b_final) == (claim ^ claim_plus);
    in += (rounds + 2) * kElement;
  }
  return passed;
}

}  // namespace

std::size_t check_batch(const AndTranscript& transcript, int party, const PrfKey& own, const PrfKey& previous,
                 BatchNonce nonce, LayerExchange& exchange, std::uint32_t first_layer) {
  if (transcript.words() == 0) return 0;  // no AND: nothing any party could alter

  // F(k_party) per gate: the alpha stream is drawn layer by layer, 16-byte aligned.
  Words own_half(transcript.words());
  {
    std::size_t stream_bytes = 0;
    for (std::size_t bytes : transcript.layer_bytes) stream_bytes += (bytes + 15) / 16 * 16;
    SecretBytes stream(stream_bytes);
    prf_stream(own, nonce, stream.span());
    auto* gates = reinterpret_cast<std::uint8_t*>(own_half.data());
    std::size_t from = 0, to = 0;
    for (std::size_t bytes : transcript.layer_bytes) {
      std::memcpy(gates + to, stream.data() + from, bytes);
      from += (bytes + 15) / 16 * 16;
      to += bytes;
    }
    transcript.clear_padding({gates, transcript.bytes});
  }

  // The gates the proof covers: the transcript's, less padding lanes.
  const DenseGates dense(transcript);
  const std::size_t words = dense.words();
  // Padded batches are gathered into planes of their own; the others are read in place.
  Words gathered(dense.padded() ? 7 * words : 0);
  std::size_t next_plane = 0;
  auto plane = [&](std::span<const std::uint64_t> from) -> std::span<const std::uint64_t> {
    if (!dense.padded()) return from.first(words);
    std::uint64_t* to = gathered.data() + words * next_plane++;
    dense.gather(from.data(), to);
    return {to, words};
  };
  const auto left_x = plane(transcript.left_x), left_a = plane(transcript.left_a);
  const auto right_x = plane(transcript.right_x), right_a = plane(transcript.right_a);
  const auto sent = plane(transcript.sent), received = plane(transcript.received), own_bits = plane(own_half.span());

  // c_party is slot a; c_{party-1} is x ^ a. Each role's halves are derived one segment at a
  // time into buffers of one segment.
  Words left_prev(kSegmentWords), right_prev(kSegmentWords), linear(kSegmentWords), second_linear(kSegmentWords);
  auto derive_previous = [&](std::size_t w0, std::size_t n) {
    xor_planes(left_prev.data(), left_x.data() + w0, left_a.data() + w0, n);
    xor_planes(right_prev.data(), right_x.data() + w0, right_a.data() + w0, n);
  };
  auto previous_half_into = [&](std::uint64_t* out, std::size_t w0, std::size_t n) {
    previous_half(out, sent.data() + w0, left_x.data() + w0, right_x.data() + w0, left_a.data() + w0,
                  right_a.data() + w0, own_bits.data() + w0, n);
  };
  auto span_of = [](const Words& buffer, std::size_t n) { return buffer.span().first(n); };

  const int before = previous_party(party), after = next_party(party);
  const Context mine{nonce, party, words}, of_before{nonce, before, words}, of_after{nonce, after, words};
  const CheckKey own_proof = proof_key(own), previous_proof = proof_key(previous);

  // 1. My proof to party+1, party-1's proof to me.
  const MinusSource prover_minus = [&](std::size_t w0, std::size_t n) {
    derive_previous(w0, n);
    previous_half_into(linear.data(), w0, n);
    add_and(linear.data(), left_prev.data(), right_prev.data(), n);
    return MinusPart{span_of(left_prev, n), span_of(right_prev, n), span_of(linear, n)};
  };
  const PlusSource prover_plus = [&](std::size_t w0, std::size_t n) {
    xor_planes(second_linear.data(), sent.data() + w0, own_bits.data() + w0, n);
    return PlusPart{left_a.subspan(w0, n), right_a.subspan(w0, n), span_of(second_linear, n)};
  };
  const std::vector<std::uint8_t> proof = prove_segments(mine, weight_seed(mine, transcript.sent), prover_minus,
                                                         prover_plus, previous_proof, own_proof);
  std::vector<std::uint8_t> proof_in(proof.size());
  exchange.exchange(first_layer, proof, proof_in);

  // 2. As V+ of party-1, my findings to party+1 (its V-); party-1's findings on party+1 to me.
  const PlusSource plus_of_before = [&](std::size_t w0, std::size_t n) {
    derive_previous(w0, n);
    previous_half_into(linear.data(), w0, n);
    add_plane(linear.data(), received.data() + w0, n);
    return PlusPart{span_of(left_prev, n), span_of(right_prev, n), span_of(linear, n)};
  };
  const std::vector<std::uint8_t> findings = verify_plus_segments(
      of_before, weight_seed(of_before, transcript.received), plus_of_before, proof_in, previous_proof);
  std::vector<std::uint8_t> findings_in(findings.size());
  exchange.exchange(first_layer + 1, findings, findings_in);

  // 3. As V- of party+1, the verdict; it travels through party+1, which cannot forge it.
  const MinusSource minus_of_after = [&](std::size_t w0, std::size_t n) {
    and_xor(linear.data(), left_a.data() + w0, right_a.data() + w0, own_bits.data() + w0, n);
    return MinusPart{left_a.subspan(w0, n), right_a.subspan(w0, n), span_of(linear, n)};
  };
  if (!verify_minus_segments(of_after, minus_of_after, findings_in, own_proof))
    throw VerificationError(Component::Protocol, "party " + std::to_string(party + 1) + ": the check of party " +
                                                     std::to_string(after + 1) + "'s AND gates failed (" +
                                                     suspects(after, before) + ")");
  const Token verdict = pass_token(of_after, token_key(previous));
  Token about_me{}, relayed{};
  exchange.exchange(first_layer + 2, verdict, about_me);

  // 4. Relay party-1's verdict on me to party+1; take party+1's verdict on party-1.
  exchange.exchange(first_layer + 3, about_me, relayed);
  const Token expected = pass_token(of_before, token_key(own));
  if (!equal_constant_time(relayed, expected))
    throw VerificationError(Component::Protocol, "party " + std::to_string(party + 1) + ": the check of party " +
                                                     std::to_string(before + 1) + "'s AND gates failed at party " +
                                                     std::to_string(after + 1) + " or its verdict was altered (" +
                                                     suspects(before, after) + ")");
  return proof.size() + findings.size() + 2 * verdict.size();
}

}  // namespace mpc::rss3::and_check
