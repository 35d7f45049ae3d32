// The AND check of active security (and_check.hpp): honest evaluations pass, and a party that
// deviates in an AND layer or in the check's own messages is caught, where the same deviation
// without the check changes the output silently.
#include <gtest/gtest.h>

#include <openssl/evp.h>

#include <array>
#include <random>
#include <string>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/program.hpp"
#include "common/error.hpp"
#include "protocol/rss3/and_check.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "protocol/rss3/transpose.hpp"
#include "test_util.hpp"

namespace mpc::rss3 {
namespace {

using namespace and_check;

CheckKey random_key(std::mt19937_64& rng) {
  CheckKey key;
  for (auto& b : key) b = static_cast<std::uint8_t>(rng());
  return key;
}

// A prover's statement built from random bits, true unless changed afterwards.
struct Statement {
  explicit Statement(std::size_t words, std::mt19937_64& rng)
      : u(words), u2(words), v(words), v2(words), minus_linear(words), plus_linear(words) {
    for (std::size_t w = 0; w < words; ++w) {
      u[w] = rng(), u2[w] = rng(), v[w] = rng(), v2[w] = rng(), minus_linear[w] = rng();
      plus_linear[w] = minus_linear[w] ^ (u[w] & v[w]) ^ (u2[w] & v2[w]);
    }
  }
  MinusPart minus() const { return {u, u2, minus_linear}; }
  PlusPart plus() const { return {v2, v, plus_linear}; }  // left = c_i(x) pairs with u2 = c_{i-1}(y)
  std::vector<std::uint64_t> u, u2, v, v2, minus_linear, plus_linear;
};

bool run_proof(const Statement& s, std::size_t words, std::mt19937_64& rng, int tamper_proof_byte = -1) {
  const Context context{{rng(), 7}, 1, words};
  const CheckKey with_minus = random_key(rng), with_plus = random_key(rng);
  Seed seed;
  for (auto& b : seed) b = static_cast<std::uint8_t>(rng());
  std::vector<std::uint8_t> proof = prove(context, seed, s.minus(), s.plus(), with_minus, with_plus);
  EXPECT_EQ(proof.size(), proof_bytes(words));
  if (tamper_proof_byte >= 0) proof[static_cast<std::size_t>(tamper_proof_byte) % proof.size()] ^= 0x10;
  const auto findings = verify_plus(context, seed, s.plus(), proof, with_plus);
  EXPECT_EQ(findings.size(), verifier_bytes(words));
  return verify_minus(context, s.minus(), findings, with_minus);
}

TEST(AndCheckProof, TrueStatementsPass) {
  std::mt19937_64 rng(1);
  // One word, a few, exactly one segment, and two segments with a short second one.
  const std::size_t segment = kSegmentGates / 64;
  for (std::size_t words : {std::size_t{1}, std::size_t{3}, segment, segment + 5}) {
    const Statement s(words, rng);
    EXPECT_TRUE(run_proof(s, words, rng)) << words << " words";
  }
}

TEST(AndCheckProof, OneWrongGateFails) {
  std::mt19937_64 rng(2);
  for (std::size_t words : {std::size_t{1}, std::size_t{3}, kSegmentGates / 64 + 5}) {
    for (int trial = 0; trial < 4; ++trial) {
      Statement s(words, rng);
      const std::size_t gate = rng() % (64 * words);
      s.plus_linear[gate / 64] ^= std::uint64_t{1} << (gate % 64);
      EXPECT_FALSE(run_proof(s, words, rng)) << words << " words, gate " << gate;
    }
  }
}

// Every position a gate can take in the proof's structure: each lane, each word of a window (the
// bit rounds), the second window and a partial last window (padding).
TEST(AndCheckProof, AWrongGateFailsAtEveryPosition) {
  std::mt19937_64 rng(6);
  const std::size_t words = 2 * kWindowWords + 5;
  for (std::size_t gate = 0; gate < 64 * words; gate += 13) {
    Statement s(words, rng);
    (gate % 2 ? s.minus_linear : s.plus_linear)[gate / 64] ^= std::uint64_t{1} << (gate % 64);
    EXPECT_FALSE(run_proof(s, words, rng)) << "gate " << gate;
  }
}

TEST(AndCheckProof, TwoWrongGatesDoNotCancel) {
  std::mt19937_64 rng(3);
  Statement s(8, rng);
  s.plus_linear[2] ^= 1;
  s.minus_linear[5] ^= std::uint64_t{1} << 40;
  EXPECT_FALSE(run_proof(s, 8, rng));
  // The same gate wrong on both sides is a true statement again.
  Statement t(8, rng);
  t.plus_linear[2] ^= 1;
  t.minus_linear[2] ^= 1;
  EXPECT_TRUE(run_proof(t, 8, rng));
}

TEST(AndCheckProof, AlteredProofFails) {
  std::mt19937_64 rng(4);
  const Statement s(20, rng);
  for (int byte : {0, 17, 100, 1000}) EXPECT_FALSE(run_proof(s, 20, rng, byte)) << "byte " << byte;
}

// ---- Whole evaluations: three parties, one of them deviating.

struct AesBatch {
  explicit AesBatch(std::size_t n, std::mt19937_64& rng)
      : program(circuits::compile(circuits::build_aes_circuit(circuits::AesKeySize::Aes128,
                                                              circuits::AesDirection::Encrypt,
                                                              circuits::SboxVariant::And32))),
        instances(n),
        keys(test::random_keys(rng)),
        nonce{rng(), 3} {
    key.resize(16);
    for (auto& b : key) b = static_cast<std::uint8_t>(rng());
    blocks.resize(16 * n);
    for (auto& b : blocks) b = static_cast<std::uint8_t>(rng());
    const auto round_keys = circuits::aes_expand_key(key);
    std::vector<std::uint8_t> all_keys(n * round_keys.size());
    for (std::size_t i = 0; i < n; ++i) std::copy(round_keys.begin(), round_keys.end(), all_keys.begin() + i * 176);
    const std::size_t words = words_for(n), rows = 176 * 8 + 128;
    std::vector<std::uint64_t> clear(rows * words);
    slice(all_keys, 176, n, clear, words, 0);
    slice(blocks, 16, n, clear, words, 176 * 8);
    shares = share_matrix(clear, rows, n);
  }

  // The ciphertexts the three parties open (throws what a party throws).
  std::vector<std::uint8_t> run(const ThreePartyOptions& options) const {
    const auto out = evaluate_three_parties(program, shares, best_simd_level(), nonce, keys, options);
    const auto opened = open_matrix(out);
    std::vector<std::uint8_t> bytes(16 * instances);
    unslice(opened, words_for(instances), 0, 16, instances, bytes);
    return bytes;
  }

  std::vector<std::uint8_t> openssl() const {
    std::vector<std::uint8_t> out(16 * instances);
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    int len = 0;
    EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nullptr, key.data(), nullptr);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    EVP_EncryptUpdate(ctx, out.data(), &len, blocks.data(), static_cast<int>(blocks.size()));
    EVP_CIPHER_CTX_free(ctx);
    return out;
  }

  std::uint32_t last_and_layer() const {
    for (std::size_t l = program.layers.size(); l-- > 0;)
      if (!program.layers[l].ands.empty()) return static_cast<std::uint32_t>(l);
    return 0;
  }

  circuits::Program program;
  std::size_t instances;
  std::array<PrfKey, kParties> keys;
  BatchNonce nonce;
  std::vector<std::uint8_t> key, blocks;
  std::array<ShareMatrix, kParties> shares;
};

ThreePartyOptions checked() {
  ThreePartyOptions options;
  options.check_ands = true;
  return options;
}

TEST(AndCheckEvaluation, HonestBatchesPassAndMatchOpenSsl) {
  std::mt19937_64 rng(10);
  // One instance; a partial chunk with padding bits; a full chunk and a partial one (several
  // proof segments); and batches without padding lanes, whose PRF halves the check draws as it
  // reads them (8, 512, two chunks).
  for (std::size_t n : {1u, 5u, 100u, 2048u + 3u, 8u, 512u, 4096u}) {
    const AesBatch batch(n, rng);
    EXPECT_EQ(batch.run(checked()), batch.openssl()) << n << " instances";
  }
}

// One party flips one bit of its r in one AND layer, in place: its own share and the copy it
// sends agree, so no reconstruction disagrees. Unchecked, the output is silently wrong; checked,
// the batch fails with VerificationError.
TEST(AndCheckEvaluation, AFlippedAndShareIsCaughtAtEveryPosition) {
  std::mt19937_64 rng(11);
  const AesBatch batch(100, rng);
  const std::vector<std::uint8_t> expected = batch.openssl();
  for (int cheater = 0; cheater < kParties; ++cheater) {
    for (const std::uint32_t layer : {1u, batch.last_and_layer()}) {
      ThreePartyOptions options;
      options.deviate = [&](int party, std::uint32_t at, std::span<std::uint8_t> outgoing) {
        if (party == cheater && at == layer) outgoing[0] ^= 1;  // instance 0, the layer's first AND
      };
      EXPECT_NE(batch.run(options), expected) << "party " << cheater + 1 << ", layer " << layer;
      options.check_ands = true;
      EXPECT_THROW(batch.run(options), VerificationError) << "party " << cheater + 1 << ", layer " << layer;
    }
  }
}

// With one instance each AND share travels as a byte of which only bit 0 is an instance; the other
// seven are padding lanes, which the layout sends as zero. Unchecked, a party that sets one
// changes nothing the client sees; checked, the proof covers every lane of the transcript, so it
// is refused like a flip of bit 0.
TEST(AndCheckEvaluation, APaddingBitSetIsRefusedLikeAnyDeviation) {
  std::mt19937_64 rng(13);
  const AesBatch batch(1, rng);
  const std::vector<std::uint8_t> expected = batch.openssl();
  for (int cheater = 0; cheater < kParties; ++cheater) {
    for (const std::uint8_t flip : {std::uint8_t{0x80}, std::uint8_t{0x01}}) {
      ThreePartyOptions options;
      options.deviate = [&](int party, std::uint32_t at, std::span<std::uint8_t> outgoing) {
        if (party == cheater && at == 1) outgoing[0] ^= flip;
      };
      if (flip == 0x80) EXPECT_EQ(batch.run(options), expected) << "party " << cheater + 1;
      options.check_ands = true;
      EXPECT_THROW(batch.run(options), VerificationError) << "party " << cheater + 1 << ", bit " << int{flip};
    }
  }
}

// Gates of batches with padding lanes, flipped where the layout is least regular: with five
// instances each AND share is one byte of five gates (the last instance of AND 13); with 100
// instances each AND is 13 bytes (instance 50 of AND 5); with 2,051 a full chunk's bytes come
// first (instance 1,163 of AND 3). Caught when checked, a wrong output when not.
TEST(AndCheckEvaluation, AFlippedGateOfAPaddedBatchIsCaught) {
  struct Flip {
    std::size_t instances, byte;
    std::uint8_t bit;
  };
  std::mt19937_64 rng(14);
  for (const Flip flip : {Flip{5, 13, 0x10}, Flip{100, 13 * 5 + 6, 0x04}, Flip{2051, 256 * 3 + 145, 0x08}}) {
    const AesBatch batch(flip.instances, rng);
    const std::vector<std::uint8_t> expected = batch.openssl();
    for (int cheater = 0; cheater < kParties; ++cheater) {
      ThreePartyOptions options;
      options.deviate = [&](int party, std::uint32_t at, std::span<std::uint8_t> outgoing) {
        if (party == cheater && at == 1) outgoing[flip.byte] ^= flip.bit;
      };
      EXPECT_NE(batch.run(options), expected) << flip.instances << " instances, party " << cheater + 1;
      options.check_ands = true;
      EXPECT_THROW(batch.run(options), VerificationError) << flip.instances << " instances, party " << cheater + 1;
    }
  }
}

// `batch` run with `options`, in which `cheater` deviates, is refused, and of what the honest
// parties conclude: none names another honest party (that would hand the deviating one a seat as
// the third, honest server), and at least one names the cheater. What the cheater itself
// concludes is not asked: any claim it makes names itself as one of the pair.
void expect_refused_and_named(const AesBatch& batch, ThreePartyOptions options, int cheater,
                              const std::string& where) {
  std::array<std::uint8_t, kParties> claims{};
  options.check_ands = true;
  options.claims = &claims;
  EXPECT_THROW(batch.run(options), VerificationError) << where;
  const auto cheater_bit = static_cast<std::uint8_t>(1u << cheater);
  std::uint8_t named = 0;
  for (int party = 0; party < kParties; ++party) {
    if (party == cheater) continue;
    EXPECT_EQ(claims[static_cast<std::size_t>(party)] & ~cheater_bit, 0)
        << where << ": honest party " << party + 1 << " names an honest party";
    named |= claims[static_cast<std::size_t>(party)];
  }
  EXPECT_EQ(named, cheater_bit) << where << ": no honest party names party " << cheater + 1;
}

// A party alters one of the check's own messages as it sends it (after signing what it signs):
// its receipt of the previous party's last layer, the share of the next party's weights' seed it
// sends as V-, its proof, its findings as V+, its verdict as V-, the verdict it relays, or the
// relay it forwards. The batch is refused, and an honest party names the one that deviated.
TEST(AndCheckEvaluation, AlteredCheckMessagesAreCaughtAndNameTheirSender) {
  std::mt19937_64 rng(12);
  const AesBatch batch(100, rng);
  const auto first = static_cast<std::uint32_t>(batch.program.layers.size());
  for (int cheater = 0; cheater < kParties; ++cheater) {
    for (std::uint32_t hop = 0; hop < and_check::kCheckMessages; ++hop) {
      ThreePartyOptions options;
      options.deviate = [&](int party, std::uint32_t at, std::span<std::uint8_t> outgoing) {
        if (party == cheater && at == first + hop) outgoing[outgoing.size() / 2] ^= 0x40;
      };
      expect_refused_and_named(batch, options, cheater,
                               "party " + std::to_string(cheater + 1) + ", hop " + std::to_string(hop));
    }
  }
}

// A prover's flipped AND share: its V- rejects it, its own audit cannot put the failure on a
// verifier that followed the protocol, so an honest verifier names it.
TEST(AndCheckBlame, AFlippedAndShareNamesItsSender) {
  std::mt19937_64 rng(15);
  const AesBatch batch(100, rng);
  for (int cheater = 0; cheater < kParties; ++cheater) {
    for (const std::uint32_t layer : {1u, batch.last_and_layer()}) {
      ThreePartyOptions options;
      options.deviate = [&](int party, std::uint32_t at, std::span<std::uint8_t> outgoing) {
        if (party == cheater && at == layer) outgoing[0] ^= 1;
      };
      expect_refused_and_named(batch, options, cheater,
                               "party " + std::to_string(cheater + 1) + ", layer " + std::to_string(layer));
    }
  }
}

// A party that deviates consistently: it proves and verifies from a changed record of the batch
// (one bit of one of its planes: the components it holds, or what it received), so that what it
// signs agrees with what it sends. As V- it rejects a valid proof, as V+ it signs findings of
// another statement, as prover it proves one: each is traced to it by the prover's audit or by an
// honest verifier.
TEST(AndCheckBlame, AConsistentlyDeviatingPartyIsNamed) {
  std::mt19937_64 rng(16);
  const AesBatch batch(100, rng);
  const char* plane_names[] = {"left_own", "left_previous", "right_own", "right_previous", "received"};
  for (int cheater = 0; cheater < kParties; ++cheater) {
    for (int plane = 0; plane < 5; ++plane) {
      for (const std::size_t word : {std::size_t{0}, std::size_t{37}}) {
        ThreePartyOptions options;
        options.alter_transcript = [&](int party, AndTranscript& t) {
          if (party != cheater) return;
          SecretWords* planes[] = {&t.left_own, &t.left_previous, &t.right_own, &t.right_previous, &t.received};
          planes[plane]->data()[word] ^= std::uint64_t{1} << 9;
        };
        expect_refused_and_named(batch, options, cheater,
                                 "party " + std::to_string(cheater + 1) + ", " + plane_names[plane] + " word " +
                                     std::to_string(word));
      }
    }
  }
}

TEST(AndCheckBlame, HonestBatchesNameNobody) {
  std::mt19937_64 rng(17);
  const AesBatch batch(64, rng);
  std::array<std::uint8_t, kParties> claims{};
  ThreePartyOptions options = checked();
  options.claims = &claims;
  EXPECT_EQ(batch.run(options), batch.openssl());
  EXPECT_EQ(claims, (std::array<std::uint8_t, kParties>{}));
}

// The prover's seed share exists only once its V+ holds its last layer: V- draws it over V+'s
// receipt of that layer, so a last layer chosen after the share was known (a prover grinding
// variants of it for a seed that hides its errors) meets another share and another seed.
TEST(AndCheckSeed, TheSeedShareFollowsTheLastLayerTheProverSent) {
  const Context context{BatchNonce{7, 9}, 1, 64};
  CheckKey verifiers{};
  verifiers[0] = 1;
  std::vector<std::uint8_t> last_layer(48, 0x5a);
  const Seed receipt = and_check::layer_receipt(context, last_layer);
  const Seed share = and_check::seed_share(context, verifiers, receipt);
  EXPECT_EQ(share, and_check::seed_share(context, verifiers, and_check::layer_receipt(context, last_layer)));
  for (std::size_t bit = 0; bit < last_layer.size() * 8; bit += 61) {
    auto variant = last_layer;
    variant[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    const Seed other = and_check::layer_receipt(context, variant);
    EXPECT_NE(other, receipt);
    EXPECT_NE(and_check::seed_share(context, verifiers, other), share);
    EXPECT_NE(and_check::weight_seed(context, and_check::seed_share(context, verifiers, other), variant),
              and_check::weight_seed(context, share, last_layer));
  }
}

}  // namespace
}  // namespace mpc::rss3
