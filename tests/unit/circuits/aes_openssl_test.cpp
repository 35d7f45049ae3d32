// 10,000 random keys and blocks per circuit against OpenSSL, 64 at a time.
#include <gtest/gtest.h>

#include <functional>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/program.hpp"
#include "support.hpp"

namespace mpc::circuits {
namespace {

using test::Bytes;

constexpr std::size_t kRandomCases = 10000;

using Evaluator = std::function<std::vector<std::uint64_t>(const std::vector<std::uint64_t>&)>;

// Runs kRandomCases random (key, block) pairs through `evaluator` in batches of 64 and
// compares with OpenSSL; returns the number of mismatches.
std::size_t count_mismatches_against_openssl(AesKeySize size, AesDirection direction, const Evaluator& evaluator,
                                             std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::size_t key_bytes = aes_key_bits(size) / 8;
  std::size_t mismatches = 0;
  for (std::size_t done = 0; done < kRandomCases; done += 64) {
    const std::size_t lanes = std::min<std::size_t>(64, kRandomCases - done);
    std::vector<Bytes> inputs;
    std::vector<Bytes> expected;
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      const Bytes key = test::random_bytes(rng, key_bytes);
      const Bytes block = test::random_bytes(rng, 16);
      Bytes input = aes_expand_key(key);
      input.insert(input.end(), block.begin(), block.end());
      inputs.push_back(input);
      expected.push_back(direction == AesDirection::Encrypt ? test::openssl_encrypt(key, block)
                                                            : test::openssl_decrypt(key, block));
    }
    const auto outputs = evaluator(test::pack_lanes(inputs));
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      if (test::unpack_lane(outputs, lane) != expected[lane]) ++mismatches;
    }
  }
  return mismatches;
}

struct Case {
  AesKeySize size;
  AesDirection direction;
  SboxVariant sbox;
};

std::string case_name(const Case& c) {
  return std::string(c.size == AesKeySize::Aes128 ? "Aes128" : "Aes256") +
         (c.direction == AesDirection::Encrypt ? "Encrypt" : "Decrypt") +
         (c.sbox == SboxVariant::And32 ? "And32" : "Depth4");
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (auto size : {AesKeySize::Aes128, AesKeySize::Aes256}) {
    for (auto direction : {AesDirection::Encrypt, AesDirection::Decrypt}) {
      for (auto sbox : {SboxVariant::And32, SboxVariant::Depth4}) cases.push_back({size, direction, sbox});
    }
  }
  return cases;
}

class AesRandomTest : public ::testing::TestWithParam<Case> {};

TEST_P(AesRandomTest, CircuitMatchesOpenSsl) {
  const Case c = GetParam();
  const Circuit circuit = build_aes_circuit(c.size, c.direction, c.sbox);
  const auto evaluator = [&](const std::vector<std::uint64_t>& words) { return evaluate_packed(circuit, words); };
  EXPECT_EQ(count_mismatches_against_openssl(c.size, c.direction, evaluator, 1), 0U);
}

TEST_P(AesRandomTest, CompiledProgramMatchesOpenSsl) {
  const Case c = GetParam();
  const Program program = compile(build_aes_circuit(c.size, c.direction, c.sbox));
  EXPECT_NO_THROW(validate(program));
  const auto evaluator = [&](const std::vector<std::uint64_t>& words) {
    return evaluate_program_packed(program, words);
  };
  EXPECT_EQ(count_mismatches_against_openssl(c.size, c.direction, evaluator, 2), 0U);
}

INSTANTIATE_TEST_SUITE_P(All, AesRandomTest, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) { return case_name(info.param); });

class KeyExpansionRandomTest : public ::testing::TestWithParam<std::tuple<AesKeySize, SboxVariant>> {};

TEST_P(KeyExpansionRandomTest, CircuitAndProgramMatchReference) {
  const auto [size, sbox] = GetParam();
  const Circuit circuit = build_aes_key_expansion_circuit(size, sbox);
  const Program program = compile(circuit);
  EXPECT_NO_THROW(validate(program));
  std::mt19937_64 rng(3);
  for (std::size_t done = 0; done < kRandomCases; done += 64) {
    const std::size_t lanes = std::min<std::size_t>(64, kRandomCases - done);
    std::vector<Bytes> keys;
    for (std::size_t lane = 0; lane < lanes; ++lane) keys.push_back(test::random_bytes(rng, aes_key_bits(size) / 8));
    const auto words = test::pack_lanes(keys);
    const auto from_circuit = evaluate_packed(circuit, words);
    const auto from_program = evaluate_program_packed(program, words);
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      const Bytes expected = aes_expand_key(keys[lane]);
      ASSERT_EQ(test::unpack_lane(from_circuit, lane), expected);
      ASSERT_EQ(test::unpack_lane(from_program, lane), expected);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, KeyExpansionRandomTest,
                         ::testing::Combine(::testing::Values(AesKeySize::Aes128, AesKeySize::Aes256),
                                            ::testing::Values(SboxVariant::And32, SboxVariant::Depth4)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) == AesKeySize::Aes128 ? "Aes128" : "Aes256") +
                                  (std::get<1>(info.param) == SboxVariant::And32 ? "And32" : "Depth4");
                         });

}  // namespace
}  // namespace mpc::circuits
