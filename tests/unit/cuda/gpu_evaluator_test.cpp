// tests/unit/cuda/gpu_evaluator_test.cpp: the GPU evaluator on a real device, three
// parties on one GPU over an in-memory ring: every AES circuit (128/256, encrypt/decrypt,
// both S-boxes), the comparator and a Bristol round-trip circuit, for odd batch sizes up
// to 1,000,003 instances. Messages and output shares must be bit-identical to the CPU
// evaluator's, with alpha from CorrelatedRandomness and from the GPU PRF, and the opened
// results must equal OpenSSL (or the comparison itself).
//
// Every test skips with "no CUDA device: GPU tests skipped" where there is no device.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <sstream>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "circuits/bristol.hpp"
#include "circuits/comparator.hpp"
#include "circuits/program.hpp"
#include "cuda/aes_ttable.hpp"
#include "cuda/cuda_evaluator.hpp"
#include "three_parties.hpp"

#define MPC_REQUIRE_GPU()                                                             \
  do {                                                                                \
    if (!::mpc::cuda::cuda_device_available()) GTEST_SKIP() << "no CUDA device: GPU tests skipped"; \
  } while (0)

namespace mpc::cuda {
namespace {

using circuits::AesDirection;
using circuits::AesKeySize;
using circuits::SboxVariant;

constexpr detail::AesTables kTables = detail::make_aes_tables();
const std::vector<std::uint64_t> kSizes = {1, 31, 32, 33, 1000, 1000003};

using Evaluators = std::array<std::unique_ptr<CudaEvaluator>, 3>;

Evaluators make_evaluators() {
  return {create_cuda_evaluator(0), create_cuda_evaluator(0), create_cuda_evaluator(0)};
}

test::ThreePartyResult run_gpu(Evaluators& evaluators, const circuits::Program& program,
                               const std::array<rss3::ShareMatrix, 3>& inputs, rss3::BatchNonce nonce,
                               const std::array<rss3::PrfKey, 3>& keys, bool device_prf) {
  return test::run_three_parties(inputs, [&](int i, const rss3::ShareMatrix& in, rss3::ShareMatrix& out,
                                             rss3::LayerExchange& exchange) {
    const rss3::PrfKey& own = keys[static_cast<std::size_t>(i)];
    const rss3::PrfKey& previous = keys[static_cast<std::size_t>(rss3::previous_party(i))];
    CudaEvaluator& evaluator = *evaluators[static_cast<std::size_t>(i)];
    if (device_prf) return evaluator.evaluate_with_device_prf(program, in, out, DevicePrf{own, previous, nonce, 0}, exchange);
    rss3::CorrelatedRandomness randomness(own, previous, nonce);
    return evaluator.evaluate(program, in, out, randomness, exchange);
  });
}

void expect_identical(const test::ThreePartyResult& got, const test::ThreePartyResult& want, const std::string& what) {
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(test::first_difference(got.transcripts[i], want.transcripts[i]), "") << what << ", party " << i << ": messages";
    EXPECT_EQ(test::first_difference(got.outputs[i].x, want.outputs[i].x), "") << what << ", party " << i << ": x";
    EXPECT_EQ(test::first_difference(got.outputs[i].a, want.outputs[i].a), "") << what << ", party " << i << ": a";
    EXPECT_EQ(got.stats[i].bytes_sent, want.stats[i].bytes_sent) << what;
    EXPECT_EQ(got.stats[i].layers_exchanged, want.stats[i].layers_exchanged) << what;
  }
}

// One batch of work for a circuit: cleartext input rows and a check of the opened output.
struct Workload {
  std::vector<std::uint64_t> rows;  // num_inputs rows of words_for(n) words
  // Instances whose opened output rows (words_for(n) words each) are wrong.
  std::function<std::size_t(const std::vector<std::uint64_t>& opened)> mismatches;
};

Workload aes_workload(AesKeySize size, AesDirection direction, std::size_t inputs, std::uint64_t n,
                      std::mt19937_64& rng) {
  const std::size_t key_bytes = size == AesKeySize::Aes128 ? 16 : 32;
  const std::size_t rk_bytes = circuits::aes_round_key_bits(size) / 8;
  auto keys = std::make_shared<std::vector<std::uint8_t>>(test::random_bytes(rng, n * key_bytes));
  auto blocks = std::make_shared<std::vector<std::uint8_t>>(test::random_bytes(rng, n * 16));
  if (n > 0) {  // instance 0: the FIPS-197 appendix C example
    for (std::size_t i = 0; i < key_bytes; ++i) (*keys)[i] = static_cast<std::uint8_t>(i);
    for (std::size_t i = 0; i < 16; ++i) (*blocks)[i] = static_cast<std::uint8_t>(0x11 * i);
  }
  std::vector<std::uint8_t> round_keys(n * rk_bytes);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::span<const std::uint8_t> key(keys->data() + i * key_bytes, key_bytes);
    const auto expanded = test::fast_expand_key(key, kTables.sbox);
    if (i < 3) {
      EXPECT_EQ(expanded, circuits::aes_expand_key(key));
    }
    std::copy(expanded.begin(), expanded.end(), round_keys.begin() + static_cast<std::ptrdiff_t>(i * rk_bytes));
  }
  Workload w;
  const std::size_t words = rss3::words_for(n);
  w.rows.assign(inputs * words, 0);
  rss3::slice(round_keys, rk_bytes, n, w.rows, words, 0);
  rss3::slice(*blocks, 16, n, w.rows, words, rk_bytes * 8);
  w.mismatches = [=](const std::vector<std::uint64_t>& opened) {
    std::vector<std::uint8_t> out(n * 16);
    rss3::unslice(opened, words, 0, 16, n, out);
    std::size_t bad = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto want = test::openssl_aes(size, direction, {keys->data() + i * key_bytes, key_bytes},
                                          {blocks->data() + i * 16, 16});
      bad += std::memcmp(want.data(), out.data() + i * 16, 16) != 0;
    }
    return bad;
  };
  return w;
}

// Comparator: records a (8 bytes, little-endian) || b (8 bytes); output bit a > b.
Workload greater_than_workload(std::uint64_t n, std::mt19937_64& rng) {
  auto records = std::make_shared<std::vector<std::uint8_t>>(n * 16);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t a = rng(), b = rng();
    if (i % 4 == 1) b = a;                          // equal
    if (i % 4 == 2) b = a ^ (std::uint64_t{1} << (rng() % 64));  // one bit apart
    std::memcpy(records->data() + i * 16, &a, 8);
    std::memcpy(records->data() + i * 16 + 8, &b, 8);
  }
  Workload w;
  const std::size_t words = rss3::words_for(n);
  w.rows.assign(128 * words, 0);
  rss3::slice(*records, 16, n, w.rows, words, 0);
  w.mismatches = [=](const std::vector<std::uint64_t>& opened) {
    std::size_t bad = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t a, b;
      std::memcpy(&a, records->data() + i * 16, 8);
      std::memcpy(&b, records->data() + i * 16 + 8, 8);
      bad += ((opened[i / 64] >> (i % 64)) & 1) != (a > b ? 1u : 0u);
    }
    return bad;
  };
  return w;
}

enum class Kind { Aes, GreaterThan };

struct CircuitCase {
  std::string name;
  Kind kind;
  AesKeySize size;
  AesDirection direction;
  std::function<circuits::Circuit()> build;
};

std::string case_name(const ::testing::TestParamInfo<CircuitCase>& info) { return info.param.name; }
void PrintTo(const CircuitCase& c, std::ostream* os) { *os << c.name; }

std::vector<CircuitCase> all_cases() {
  std::vector<CircuitCase> cases;
  for (AesKeySize size : {AesKeySize::Aes128, AesKeySize::Aes256})
    for (AesDirection direction : {AesDirection::Encrypt, AesDirection::Decrypt})
      for (SboxVariant sbox : {SboxVariant::And32, SboxVariant::Depth4}) {
        std::string name = std::string(size == AesKeySize::Aes128 ? "Aes128" : "Aes256") +
                           (direction == AesDirection::Encrypt ? "Encrypt" : "Decrypt") +
                           (sbox == SboxVariant::And32 ? "And32" : "Depth4");
        cases.push_back({name, Kind::Aes, size, direction,
                         [=] { return circuits::build_aes_circuit(size, direction, sbox); }});
      }
  cases.push_back({"GreaterThan64", Kind::GreaterThan, AesKeySize::Aes128, AesDirection::Encrypt,
                   [] { return circuits::build_greater_than_circuit(64); }});
  cases.push_back({"BristolRoundTripAes128", Kind::Aes, AesKeySize::Aes128, AesDirection::Encrypt, [] {
                     std::ostringstream text;
                     circuits::write_bristol(
                         circuits::build_aes_circuit(AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::And32),
                         text);
                     return circuits::parse_bristol(text.str());
                   }});
  return cases;
}

class GpuCircuits : public ::testing::TestWithParam<CircuitCase> {};

TEST_P(GpuCircuits, MatchCpuEvaluatorAndReference) {
  MPC_REQUIRE_GPU();
  const CircuitCase& c = GetParam();
  const circuits::Program program = circuits::compile(c.build());
  std::mt19937_64 rng(std::hash<std::string>{}(c.name));
  Evaluators evaluators = make_evaluators();  // reused across sizes: plans cached, memory grown
  for (std::uint64_t n : test::sizes_within_limit(kSizes)) {
    const std::string what = c.name + ", n = " + std::to_string(n);
    SCOPED_TRACE(what);
    const Workload work = c.kind == Kind::Aes ? aes_workload(c.size, c.direction, program.num_inputs, n, rng)
                                              : greater_than_workload(n, rng);
    ASSERT_EQ(work.rows.size(), program.num_inputs * rss3::words_for(n));
    const auto inputs = rss3::share_matrix(work.rows, program.num_inputs, n);
    const auto keys = test::random_keys(rng);
    const rss3::BatchNonce nonce{rng(), static_cast<std::uint32_t>(rng())};
    const auto cpu = test::run_cpu_reference(program, inputs, nonce, keys);
    const auto gpu = run_gpu(evaluators, program, inputs, nonce, keys, false);
    expect_identical(gpu, cpu, what + ", alpha from CorrelatedRandomness");
    const auto gpu_prf = run_gpu(evaluators, program, inputs, nonce, keys, true);
    expect_identical(gpu_prf, cpu, what + ", alpha from the GPU PRF");

    EXPECT_EQ(work.mismatches(rss3::open_matrix(gpu_prf.outputs)), 0u) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(AllCircuits, GpuCircuits, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace mpc::cuda
