// AES-256 encryption with an equality bit against a secret block (the GCM tag check):
// random keys and blocks against OpenSSL, with G equal to the ciphertext, differing from it
// in one random bit, or unrelated; as a circuit and as a compiled program.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/catalogue.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/program.hpp"
#include "circuits/stats.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using test::Bytes;

constexpr std::size_t kRandomCases = 1280;

using Evaluator = std::function<std::vector<std::uint64_t>(const std::vector<std::uint64_t>&)>;

// Lane i of each batch: G = ciphertext when i % 3 == 0, ciphertext with one random bit
// flipped when i % 3 == 1, random otherwise. Returns the number of wrong lanes.
std::size_t count_mismatches(const Evaluator& evaluator, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::size_t mismatches = 0;
  std::size_t equal_lanes = 0;
  for (std::size_t done = 0; done < kRandomCases; done += 64) {
    const std::size_t lanes = std::min<std::size_t>(64, kRandomCases - done);
    std::vector<Bytes> inputs;
    std::vector<Bytes> ciphertexts;
    std::vector<bool> equal;
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      const Bytes key = test::random_bytes(rng, 32);
      const Bytes block = test::random_bytes(rng, 16);
      const Bytes ciphertext = test::openssl_encrypt(key, block);
      Bytes g = ciphertext;
      if (lane % 3 == 1) {
        const std::size_t bit = rng() % 128;
        g[bit / 8] ^= static_cast<std::uint8_t>(1U << (bit % 8));
      } else if (lane % 3 == 2) {
        g = test::random_bytes(rng, 16);
      }
      Bytes input = aes_expand_key(key);
      input.insert(input.end(), block.begin(), block.end());
      input.insert(input.end(), g.begin(), g.end());
      inputs.push_back(std::move(input));
      ciphertexts.push_back(ciphertext);
      equal.push_back(g == ciphertext);
      if (g == ciphertext) ++equal_lanes;
    }
    const auto outputs = evaluator(test::pack_lanes(inputs));
    if (outputs.size() != 129) return kRandomCases;
    const std::vector<std::uint64_t> cipher_words(outputs.begin(), outputs.begin() + 128);
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      const bool bit = ((outputs[128] >> lane) & 1U) != 0;
      if (test::unpack_lane(cipher_words, lane) != ciphertexts[lane] || bit != equal[lane]) ++mismatches;
    }
  }
  EXPECT_GE(equal_lanes, kRandomCases / 3);
  return mismatches;
}

class AesEncryptEqualTest : public ::testing::TestWithParam<SboxVariant> {};

TEST_P(AesEncryptEqualTest, CircuitMatchesOpenSsl) {
  const Circuit circuit = build_aes_encrypt_equal_circuit(AesKeySize::Aes256, GetParam());
  EXPECT_EQ(circuit.input_widths, (std::vector<std::uint32_t>{15 * 128, 128, 128}));
  EXPECT_EQ(circuit.output_widths, (std::vector<std::uint32_t>{128, 1}));
  const auto evaluator = [&](const std::vector<std::uint64_t>& words) { return evaluate_packed(circuit, words); };
  EXPECT_EQ(count_mismatches(evaluator, 11), 0U);
}

TEST_P(AesEncryptEqualTest, CompiledProgramMatchesOpenSsl) {
  const Program program = compile(build_aes_encrypt_equal_circuit(AesKeySize::Aes256, GetParam()));
  EXPECT_NO_THROW(validate(program));
  EXPECT_EQ(program.num_inputs, 15U * 128 + 256);
  EXPECT_EQ(program.num_outputs, 129U);
  const auto evaluator = [&](const std::vector<std::uint64_t>& words) {
    return evaluate_program_packed(program, words);
  };
  EXPECT_EQ(count_mismatches(evaluator, 12), 0U);
}

// The comparison costs the 127 ANDs of eq128 and adds its depth 7 after the cipher.
TEST_P(AesEncryptEqualTest, CostIsCipherPlusEquality) {
  const CircuitStats cipher = compute_stats(build_aes_circuit(AesKeySize::Aes256, AesDirection::Encrypt, GetParam()));
  const CircuitStats combined = compute_stats(build_aes_encrypt_equal_circuit(AesKeySize::Aes256, GetParam()));
  EXPECT_EQ(combined.and_gates, cipher.and_gates + 127);
  EXPECT_EQ(combined.and_depth, cipher.and_depth + 7);
}

INSTANTIATE_TEST_SUITE_P(All, AesEncryptEqualTest, ::testing::Values(SboxVariant::And32, SboxVariant::Depth4),
                         [](const auto& info) { return info.param == SboxVariant::And32 ? "And32" : "Depth4"; });

TEST(AesEncryptEqual, InCatalogue) {
  const auto names = catalogue_names();
  for (const char* name : {"aes256-enc-eq-and32", "aes256-enc-eq-depth4"}) {
    ASSERT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    const CircuitStats stats = compute_stats(build_named_circuit(name));
    EXPECT_EQ(stats.output_widths, (std::vector<std::uint32_t>{128, 1})) << name;
  }
  // The all-zero key encrypting the zero block, compared with the FIPS-197-style known answer
  // (AES-256 of zeros under the zero key) and with zeros.
  const Circuit circuit = build_named_circuit("aes256-enc-eq-and32");
  const Bytes expected = test::from_hex("dc95c078a2408989ad48a21492842087");
  std::vector<std::uint8_t> input_bits(15 * 128 + 128, 0);
  const Bytes round_keys = aes_expand_key(Bytes(32, 0));
  const auto key_bits = test::bytes_to_bits(round_keys);
  std::copy(key_bits.begin(), key_bits.end(), input_bits.begin());
  std::vector<std::uint8_t> with_g = input_bits;
  const auto g_bits = test::bytes_to_bits(expected);
  with_g.insert(with_g.end(), g_bits.begin(), g_bits.end());
  auto out = evaluate(circuit, with_g);
  ASSERT_EQ(out.size(), 129U);
  EXPECT_EQ(test::bits_to_bytes(std::span(out).first(128)), expected);
  EXPECT_EQ(out[128], 1U);
  input_bits.resize(input_bits.size() + 128, 0);
  out = evaluate(circuit, input_bits);
  EXPECT_EQ(out[128], 0U);
}

}  // namespace
}  // namespace mpc::circuits
