#include "protocol/rss3/and_check.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/rss3/field_kernels.hpp"
#include "protocol/rss3/gf128.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::rss3::and_check {
namespace {

constexpr std::size_t kSegmentWords = kSegmentGates / 64;
constexpr std::size_t kElement = 16;
constexpr char kDomain[] = "mpc-kdc rss3 AND check v1";

std::size_t segment_count(std::size_t words) { return (words + kSegmentWords - 1) / kSegmentWords; }
std::size_t segment_words(std::size_t words, std::size_t segment) {
  return std::min(kSegmentWords, words - segment * kSegmentWords);
}
std::size_t fold_rounds(std::size_t len) {
  std::size_t rounds = 0;
  for (; len > 1; len = (len + 1) / 2) ++rounds;
  return rounds;
}
// Round one (u with u') and the folds of the 64 * words + 1 entries that follow.
std::size_t segment_rounds(std::size_t words) { return 1 + fold_rounds(64 * words + 1); }

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

// The weights of one segment: mu_j for the 64 lanes, rho_w for its words.
struct Weights {
  explicit Weights(const Seed& seed, std::size_t segment, std::size_t words) : rho(words) {
    std::vector<std::uint8_t> bytes((64 + words) * kElement);
    CheckKey key;
    std::memcpy(key.data(), seed.data(), key.size());
    expand(key, segment, bytes);
    for (std::size_t j = 0; j < 64; ++j) mu[j] = gf128_load(bytes.data() + j * kElement);
    for (std::size_t w = 0; w < words; ++w) rho[w] = gf128_load(bytes.data() + (64 + w) * kElement);
  }
  Gf128 mu[64];
  std::vector<Gf128> rho;
};

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

// B after round one: v + t (v + v') lane by lane.
void lift_bits(const std::uint64_t* v, const std::uint64_t* v2, std::size_t words, Gf128 t, Gf128* out) {
  const Gf128 one{1, 0};
  for (std::size_t w = 0; w < words; ++w)
    for (unsigned j = 0; j < 64; ++j) {
      const std::uint64_t bit = (v[w] >> j) & 1, differ = ((v[w] ^ v2[w]) >> j) & 1;
      const std::uint64_t m1 = 0 - bit, mt = 0 - differ;
      out[64 * w + j] = {(one.lo & m1) ^ (t.lo & mt), (one.hi & m1) ^ (t.hi & mt)};
    }
}

// A verifier cannot tell a prover that cheated from the other verifier lying about it: the
// error names both, so an operator knows where to look.
std::string suspects(int prover, int other) {
  const int low = std::min(prover, other) + 1, high = std::max(prover, other) + 1;
  return "one of parties " + std::to_string(low) + " and " + std::to_string(high) + " deviated";
}

// A after round one, computed alike by the prover and V-: rho_g (u + t (u + u')) for the
// segment's gates (u, u': V-'s left and right components), then the zero of the mask pair.
void lift_minus(const detail::FieldKernels& k, const MinusPart& minus, std::size_t w0, std::size_t words,
                const Weights& weights, Gf128 t, Words& u_differ, Elements& a) {
  const std::uint64_t* u = minus.left.data() + w0;
  const std::uint64_t* u2 = minus.right.data() + w0;
  for (std::size_t w = 0; w < words; ++w) u_differ[w] = u[w] ^ u2[w];
  Gf128 lane_t[64];
  for (std::size_t j = 0; j < 64; ++j) lane_t[j] = k.mul(t, weights.mu[j]);
  k.lift(u, u_differ.data(), words, weights.rho.data(), weights.mu, lane_t, a.data());
  a[64 * words] = Gf128{};
}

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
  const detail::FieldKernels& k = detail::field_kernels();
  std::vector<std::uint8_t> proof(proof_bytes(context.words));
  const CheckKey share_key = purpose_key(context, with_minus, "round shares");
  const CheckKey mask_key = purpose_key(context, with_plus, "mask");
  std::uint8_t* out = proof.data();
  const std::size_t most = std::min(kSegmentWords, context.words);
  Words same(most), differ(most), u_differ(most);
  Elements a(64 * most + 1), b(64 * most + 1);
  for (std::size_t s = 0; s < segment_count(context.words); ++s) {
    const std::size_t w0 = s * kSegmentWords, words = segment_words(context.words, s), n = 64 * words;
    const std::size_t rounds = segment_rounds(words);
    const Weights weights(seed, s, words);
    SecretBytes shares(rounds * 2 * kElement);
    expand(share_key, s, shares.span());
    SecretBytes mask(kElement);
    expand(mask_key, s, mask.span());
    Challenges challenges(context, seed, s);
    std::size_t round = 0;
    auto emit = [&](Gf128 c0, Gf128 c2) {
      std::uint8_t* share = out + round * 2 * kElement;
      gf128_store(c0 ^ gf128_load(shares.data() + round * 2 * kElement), share);
      gf128_store(c2 ^ gf128_load(shares.data() + round * 2 * kElement + kElement), share + kElement);
      ++round;
      return challenges.next({share, 2 * kElement});
    };

    const std::uint64_t* u = minus.left.data() + w0;
    const std::uint64_t* u2 = minus.right.data() + w0;
    const std::uint64_t* v = plus.right.data() + w0;
    const std::uint64_t* v2 = plus.left.data() + w0;
    for (std::size_t w = 0; w < words; ++w) {
      same[w] = u[w] & v[w];
      differ[w] = (u[w] ^ u2[w]) & (v[w] ^ v2[w]);
    }
    Gf128 t = emit(k.weighted_bits(same.data(), words, weights.rho.data(), weights.mu),
                   k.weighted_bits(differ.data(), words, weights.rho.data(), weights.mu));
    lift_minus(k, minus, w0, words, weights, t, u_differ, a);
    lift_bits(v, v2, words, t, b.data());
    b[n] = gf128_load(mask.data());
    for (std::size_t len = n + 1; len > 1; len = (len + 1) / 2) {
      Gf128 c0, c2;
      k.round_sums(a.data(), b.data(), len, &c0, &c2);
      t = emit(c0, c2);
      k.fold(a.data(), len, t);
      k.fold(b.data(), len, t);
    }
    out += rounds * 2 * kElement;
  }
  return proof;
}

std::vector<std::uint8_t> verify_plus(const Context& context, const Seed& seed, const PlusPart& plus,
                                      std::span<const std::uint8_t> proof, const CheckKey& with_prover) {
  if (proof.size() != proof_bytes(context.words))
    throw VerificationError(Component::Protocol, "AND check proof of " + std::to_string(proof.size()) + " bytes");
  const detail::FieldKernels& k = detail::field_kernels();
  std::vector<std::uint8_t> message(verifier_bytes(context.words));
  std::memcpy(message.data(), seed.data(), seed.size());
  std::uint8_t* out = message.data() + seed.size();
  const std::uint8_t* in = proof.data();
  const CheckKey mask_key = purpose_key(context, with_prover, "mask");
  Elements b(64 * std::min(kSegmentWords, context.words) + 1);
  for (std::size_t s = 0; s < segment_count(context.words); ++s) {
    const std::size_t w0 = s * kSegmentWords, words = segment_words(context.words, s), n = 64 * words;
    const std::size_t rounds = segment_rounds(words);
    const Weights weights(seed, s, words);
    SecretBytes mask(kElement);
    expand(mask_key, s, mask.span());
    Challenges challenges(context, seed, s);
    Gf128 claim = k.weighted_bits(plus.linear.data() + w0, words, weights.rho.data(), weights.mu);
    std::size_t round = 0;
    auto receive = [&]() {
      const std::uint8_t* share = in + round * 2 * kElement;
      const Gf128 t = challenges.next({share, 2 * kElement});
      claim = update_claim(k, claim, gf128_load(share), gf128_load(share + kElement), t);
      gf128_store(t, out + round * kElement);
      ++round;
      return t;
    };
    Gf128 t = receive();
    lift_bits(plus.right.data() + w0, plus.left.data() + w0, words, t, b.data());
    b[n] = gf128_load(mask.data());
    for (std::size_t len = n + 1; len > 1; len = (len + 1) / 2) {
      t = receive();
      k.fold(b.data(), len, t);
    }
    gf128_store(b[0], out + rounds * kElement);
    gf128_store(claim, out + (rounds + 1) * kElement);
    in += rounds * 2 * kElement;
    out += (rounds + 2) * kElement;
  }
  return message;
}

bool verify_minus(const Context& context, const MinusPart& minus, std::span<const std::uint8_t> from_plus,
                  const CheckKey& with_prover) {
  if (from_plus.size() != verifier_bytes(context.words)) return false;
  const detail::FieldKernels& k = detail::field_kernels();
  Seed seed;
  std::memcpy(seed.data(), from_plus.data(), seed.size());
  const std::uint8_t* in = from_plus.data() + seed.size();
  const CheckKey share_key = purpose_key(context, with_prover, "round shares");
  bool passed = true;
  const std::size_t most = std::min(kSegmentWords, context.words);
  Words u_differ(most);
  Elements a(64 * most + 1);
  for (std::size_t s = 0; s < segment_count(context.words); ++s) {
    const std::size_t w0 = s * kSegmentWords, words = segment_words(context.words, s), n = 64 * words;
    const std::size_t rounds = segment_rounds(words);
    const Weights weights(seed, s, words);
    SecretBytes shares(rounds * 2 * kElement);
    expand(share_key, s, shares.span());
    Gf128 claim = k.weighted_bits(minus.linear.data() + w0, words, weights.rho.data(), weights.mu);
    std::size_t round = 0;
    auto receive = [&]() {
      const Gf128 t = gf128_load(in + round * kElement);
      const std::uint8_t* share = shares.data() + round * 2 * kElement;
      claim = update_claim(k, claim, gf128_load(share), gf128_load(share + kElement), t);
      ++round;
      return t;
    };
    Gf128 t = receive();
    lift_minus(k, minus, w0, words, weights, t, u_differ, a);
    for (std::size_t len = n + 1; len > 1; len = (len + 1) / 2) {
      t = receive();
      k.fold(a.data(), len, t);
    }
    const Gf128 b_final = gf128_load(in + rounds * kElement);
    const Gf128 claim_plus = gf128_load(in + (rounds + 1) * kElement);
    // Every segment is checked, pass or fail, so the time taken does not say which failed.
    passed &= k.mul(a[0], b_final) == (claim ^ claim_plus);
    in += (rounds + 2) * kElement;
  }
  return passed;
}

std::size_t check_batch(const AndTranscript& transcript, int party, const PrfKey& own, const PrfKey& previous,
                 BatchNonce nonce, LayerExchange& exchange, std::uint32_t first_layer) {
  const std::size_t words = transcript.words();
  if (words == 0) return 0;  // no AND: nothing any party could alter

  // F(k_party) per gate: the alpha stream is drawn layer by layer, 16-byte aligned.
  Words own_half(words);
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

  // c_party is slot a; c_{party-1} is x ^ a.
  Words left_prev(words), right_prev(words), prover_minus(words), prover_plus(words), plus_linear(words),
      minus_linear(words);
  for (std::size_t w = 0; w < words; ++w) {
    const std::uint64_t lx = transcript.left_x[w], la = transcript.left_a[w];
    const std::uint64_t rx = transcript.right_x[w], ra = transcript.right_a[w];
    const std::uint64_t alpha = transcript.sent[w] ^ (lx & rx) ^ (la & ra);
    const std::uint64_t previous_half = alpha ^ own_half[w];
    left_prev[w] = lx ^ la;
    right_prev[w] = rx ^ ra;
    prover_minus[w] = (left_prev[w] & right_prev[w]) ^ previous_half;
    prover_plus[w] = transcript.sent[w] ^ own_half[w];
    plus_linear[w] = transcript.received[w] ^ previous_half;
    minus_linear[w] = (la & ra) ^ own_half[w];
  }

  const int before = previous_party(party), after = next_party(party);
  const Context mine{nonce, party, words}, of_before{nonce, before, words}, of_after{nonce, after, words};
  const CheckKey own_proof = proof_key(own), previous_proof = proof_key(previous);

  // 1. My proof to party+1, party-1's proof to me.
  const std::vector<std::uint8_t> proof =
      prove(mine, weight_seed(mine, transcript.sent),
            {left_prev.span(), right_prev.span(), prover_minus.span()},
            {transcript.left_a, transcript.right_a, prover_plus.span()}, previous_proof, own_proof);
  std::vector<std::uint8_t> proof_in(proof.size());
  exchange.exchange(first_layer, proof, proof_in);

  // 2. As V+ of party-1, my findings to party+1 (its V-); party-1's findings on party+1 to me.
  const std::vector<std::uint8_t> findings =
      verify_plus(of_before, weight_seed(of_before, transcript.received),
                  {left_prev.span(), right_prev.span(), plus_linear.span()}, proof_in, previous_proof);
  std::vector<std::uint8_t> findings_in(findings.size());
  exchange.exchange(first_layer + 1, findings, findings_in);

  // 3. As V- of party+1, the verdict; it travels through party+1, which cannot forge it.
  if (!verify_minus(of_after, {transcript.left_a, transcript.right_a, minus_linear.span()}, findings_in, own_proof))
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
