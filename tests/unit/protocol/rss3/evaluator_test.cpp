// The bitsliced evaluator: every gate kind on all input combinations, random programs
// against a cleartext interpreter for awkward instance counts, bit-identical shares and
// messages across SIMD levels, the documented message layout and size, program
// validation, and edge cases (no instances, no layers, final AND layer, aliasing).
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <thread>

#include "common/error.hpp"
#include "protocol/rss3/evaluator.hpp"
#include "protocol/rss3/local_three_party.hpp"
#include "protocol/rss3/memory_ring.hpp"
#include "support/random_program.hpp"
#include "test_util.hpp"

namespace mpc::rss3 {
namespace {

using circuits::OpKind;

circuits::LinearOp lin(OpKind kind, std::uint32_t out, std::uint32_t in0, std::uint32_t in1 = 0) {
  return {kind, out, in0, in1};
}

// Runs `body(party, exchange)` for the three parties in three threads over a MemoryRing.
void run_parties(const std::function<void(int, LayerExchange&)>& body) {
  MemoryRing ring(std::chrono::seconds(20));
  std::exception_ptr errors[3];
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&, i] {
      try {
        body(i, ring.endpoint(i));
      } catch (...) {
        errors[i] = std::current_exception();
        ring.abort();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

TEST(Evaluator, LevelsAndNames) {
  EXPECT_NO_THROW(make_cpu_evaluator(SimdLevel::Portable));
  for (SimdLevel level : test::supported_levels()) {
    auto evaluator = make_cpu_evaluator(level);
    EXPECT_EQ(evaluator->name(), std::string("cpu-") + simd_level_name(level));
  }
  EXPECT_STREQ(simd_level_name(SimdLevel::Avx512), "avx512");
}

// Every gate kind, with secret and public operands, on all input combinations.
TEST(Evaluator, EveryGateOnAllInputCombinations) {
  circuits::Program p;
  p.num_inputs = 2;
  p.num_slots = 18;
  circuits::Layer l0;
  l0.linear = {lin(OpKind::LoadInput, 0, 0),  lin(OpKind::LoadInput, 1, 1), lin(OpKind::Xor, 2, 0, 1),
               lin(OpKind::Inv, 3, 0),        lin(OpKind::Copy, 4, 1),      lin(OpKind::Const, 5, 0),
               lin(OpKind::Const, 6, 1),      lin(OpKind::Xor, 7, 0, 6),    lin(OpKind::Inv, 8, 5)};
  l0.ands = {{9, 0, 1}, {10, 0, 6}, {11, 1, 5}, {12, 3, 4}, {13, 0, 0}};
  circuits::Layer l1;
  l1.linear = {lin(OpKind::Xor, 14, 9, 2)};
  l1.ands = {{15, 9, 2}, {16, 14, 6}};
  circuits::Layer l2;
  l2.linear = {lin(OpKind::Inv, 17, 15), lin(OpKind::Xor, 0, 0, 0)};  // in place: slot 0 := 0
  p.layers = {l0, l1, l2};
  p.output_slots = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
  p.num_outputs = static_cast<std::uint32_t>(p.output_slots.size());
  p.and_gates = 7;
  p.and_depth = 2;

  // Instances 0..3 are the four combinations (a, b) = (n & 1, n >> 1); repeated to 4 * 37.
  const std::size_t n = 4 * 37;
  const std::size_t words = words_for(n);
  std::vector<std::uint64_t> clear(2 * words, 0);
  for (std::size_t i = 0; i < n; ++i) {
    clear[i / 64] |= std::uint64_t((i & 1)) << (i % 64);
    clear[words + i / 64] |= std::uint64_t((i >> 1) & 1) << (i % 64);
  }
  auto expect = [&](std::size_t slot, bool a, bool b) -> bool {
    switch (slot) {
      case 0: return false;
      case 1: return b;
      case 2: return a ^ b;
      case 3: return !a;
      case 4: return b;
      case 5: return false;
      case 6: return true;
      case 7: return !a;
      case 8: return true;
      case 9: return a & b;
      case 10: return a;
      case 11: return false;
      case 12: return !a & b;
      case 13: return a;
      case 14: return a | b;
      case 15: return false;
      case 16: return a | b;
      case 17: return true;
    }
    return false;
  };
  std::mt19937_64 rng(31);
  for (SimdLevel level : test::supported_levels()) {
    for (int public_inputs = 0; public_inputs < 2; ++public_inputs) {
      std::array<ShareMatrix, 3> inputs;
      if (public_inputs) {
        const ShareMatrix pub = public_matrix(clear, 2, n);
        inputs = {pub, pub, pub};
      } else {
        inputs = share_matrix(clear, 2, n);
      }
      const auto out = open_matrix(evaluate_three_parties(p, inputs, level, BatchNonce{rng(), 0}, test::random_keys(rng)));
      for (std::size_t slot = 0; slot < 18; ++slot)
        for (std::size_t i = 0; i < n; ++i) {
          const bool a = i & 1, b = (i >> 1) & 1;
          ASSERT_EQ(((out[slot * words + i / 64] >> (i % 64)) & 1) != 0, expect(slot, a, b))
              << simd_level_name(level) << " slot " << slot << " a=" << a << " b=" << b << " public=" << public_inputs;
        }
    }
  }
}

class RandomPrograms : public ::testing::TestWithParam<std::size_t> {};

TEST_P(RandomPrograms, MatchCleartextAndAgreeAcrossSimdLevels) {
  const std::size_t n = GetParam();
  std::mt19937_64 rng(1000 + n);
  testing::RandomProgramShape shape;
  shape.inputs = 24;
  shape.outputs = 20;
  shape.slots = 80;
  shape.and_layers = 5;
  shape.linear_per_layer = 50;
  shape.ands_per_layer = 13;
  for (int round = 0; round < 3; ++round) {
    const auto program = testing::random_program(rng, shape);
    auto clear = testing::random_words(rng, shape.inputs * words_for(n));
    const auto inputs = share_matrix(clear, shape.inputs, n);
    const auto expected = testing::evaluate_cleartext(program, clear, n);
    const auto keys = test::random_keys(rng);
    const BatchNonce nonce{rng(), static_cast<std::uint32_t>(round)};

    std::array<ShareMatrix, 3> reference_out;
    std::array<std::vector<std::uint8_t>, 3> reference_transcripts;
    bool first = true;
    for (SimdLevel level : test::supported_levels()) {
      std::array<EvaluationStats, 3> stats;
      std::array<std::vector<std::uint8_t>, 3> transcripts;
      ThreePartyOptions options;
      options.stats = &stats;
      options.transcripts = &transcripts;
      const auto out = evaluate_three_parties(program, inputs, level, nonce, keys, options);
      ASSERT_EQ(open_matrix(out), expected) << simd_level_name(level) << " n=" << n << " round " << round;
      for (int i = 0; i < 3; ++i) {
        const std::size_t per_and = (n / 2048) * 256 + ((n % 2048) + 7) / 8;
        EXPECT_EQ(stats[i].bytes_sent, program.and_gates * per_and);
        EXPECT_EQ(stats[i].layers_exchanged, shape.and_layers);
        EXPECT_EQ(transcripts[i].size(), stats[i].bytes_sent);
        if (n % 8 == 0) {
          EXPECT_EQ(stats[i].bytes_sent * 8, program.and_gates * n);
        }
      }
      if (first) {
        reference_out = out;
        reference_transcripts = transcripts;
        first = false;
      } else {
        for (int i = 0; i < 3; ++i) {
          // Padding bits of the output rows are unspecified; compare the defined lanes.
          const auto mask_padding = [&](std::vector<std::uint64_t> v) {
            const std::size_t words = words_for(n);
            if (n % 64) {
              for (std::size_t r = 0; r < v.size() / words; ++r) v[r * words + words - 1] &= (1ull << (n % 64)) - 1;
            }
            return v;
          };
          EXPECT_EQ(mask_padding(out[i].x), mask_padding(reference_out[i].x)) << simd_level_name(level);
          EXPECT_EQ(mask_padding(out[i].a), mask_padding(reference_out[i].a)) << simd_level_name(level);
          EXPECT_EQ(transcripts[i], reference_transcripts[i]) << simd_level_name(level);
        }
      }
    }
  }
}

// Around each tile width: one word, 8 words (512), 16 words (1,000), a whole chunk and past it.
INSTANTIATE_TEST_SUITE_P(InstanceCounts, RandomPrograms,
                         ::testing::Values(1, 7, 63, 64, 65, 100, 512, 513, 1000, 1500, 2048, 2049, 5000));

// A larger program of many layers and slots (several tiles and chunks, long runs).
TEST(Evaluator, LargeRandomProgram) {
  std::mt19937_64 rng(77);
  testing::RandomProgramShape shape;
  shape.inputs = 300;
  shape.outputs = 128;
  shape.slots = 700;
  shape.and_layers = 12;
  shape.linear_per_layer = 600;
  shape.ands_per_layer = 150;
  shape.unusual_percent = 5;
  const auto program = testing::random_program(rng, shape);
  const std::size_t n = 3 * 2048 + 1234;
  auto clear = testing::random_words(rng, shape.inputs * words_for(n));
  const auto expected = testing::evaluate_cleartext(program, clear, n);
  const auto inputs = share_matrix(clear, shape.inputs, n);
  for (SimdLevel level : test::supported_levels())
    EXPECT_EQ(open_matrix(evaluate_three_parties(program, inputs, level, BatchNonce{rng(), 1}, test::random_keys(rng))),
              expected)
        << simd_level_name(level);
}

// msg_0 ^ msg_1 ^ msg_2 = the AND's cleartext bits (r_i ^ r_{i-1} ^ r_{i-2} = v), so the
// XOR of the three transcripts shows the layout: per chunk, per AND, ceil(n_c/8) bytes,
// little-endian bits, padding bits zero.
TEST(Evaluator, MessageLayout) {
  circuits::Program p;
  p.num_inputs = 4;
  p.num_slots = 8;
  circuits::Layer l0;
  for (std::uint32_t i = 0; i < 4; ++i) l0.linear.push_back(lin(OpKind::LoadInput, i, i));
  l0.ands = {{4, 0, 1}, {5, 2, 3}, {6, 0, 3}};
  circuits::Layer l1;
  p.layers = {l0, l1};
  p.output_slots = {4, 5, 6};
  p.num_outputs = 3;
  p.and_gates = 3;
  p.and_depth = 1;
  std::mt19937_64 rng(41);
  // Partial chunks through scratch (3, 100) and ones whose tiles they fill, with padding bits
  // (63, 2047) and without (512, 1024).
  for (std::size_t n : {2048u + 100u, 3u, 4096u, 2048u + 8u, 63u, 2047u, 512u, 2048u + 1024u}) {
    const std::size_t words = words_for(n);
    auto clear = testing::random_words(rng, 4 * words);
    const auto inputs = share_matrix(clear, 4, n);
    for (SimdLevel level : test::supported_levels()) {
      std::array<std::vector<std::uint8_t>, 3> transcripts;
      ThreePartyOptions options;
      options.transcripts = &transcripts;
      evaluate_three_parties(p, inputs, level, BatchNonce{1, 2}, test::random_keys(rng), options);
      std::vector<std::uint8_t> expected;
      for (std::size_t c = 0; c * 2048 < n; ++c) {
        const std::size_t chunk_n = std::min<std::size_t>(2048, n - c * 2048);
        for (const auto& g : p.layers[0].ands) {
          std::vector<std::uint8_t> bytes((chunk_n + 7) / 8, 0);
          for (std::size_t i = 0; i < chunk_n; ++i) {
            const std::size_t inst = c * 2048 + i;
            const auto bit = [&](std::uint32_t row) { return (clear[row * words + inst / 64] >> (inst % 64)) & 1; };
            bytes[i / 8] |= static_cast<std::uint8_t>((bit(g.in0) & bit(g.in1)) << (i % 8));
          }
          expected.insert(expected.end(), bytes.begin(), bytes.end());
        }
      }
      ASSERT_EQ(transcripts[0].size(), expected.size()) << n;
      std::vector<std::uint8_t> combined(expected.size());
      for (std::size_t j = 0; j < combined.size(); ++j)
        combined[j] = transcripts[0][j] ^ transcripts[1][j] ^ transcripts[2][j];
      EXPECT_EQ(combined, expected) << n << " " << simd_level_name(level);
      if (n % 8 != 0) {  // each party sends zero padding bits, in the last byte of every AND
        const std::uint8_t high = static_cast<std::uint8_t>(0xff << (n % 8));
        const std::size_t chunk_bytes = (n % 2048 + 7) / 8, tail = expected.size() - 3 * chunk_bytes;
        for (int i = 0; i < 3; ++i)
          for (std::size_t k = 1; k <= 3; ++k)
            EXPECT_EQ(transcripts[i][tail + k * chunk_bytes - 1] & high, 0) << n << " party " << i << " AND " << k;
      }
    }
  }
}

// With all-zero public operands r_i = alpha_i, so a transcript shows the documented alpha
// order: per AND layer, the next round_up(message_bytes, 16) bytes of next_alpha, message
// byte j XOR alpha byte j, padding bits of a partial chunk's last byte cleared.
TEST(Evaluator, AlphaOrder) {
  circuits::Program p;
  p.num_inputs = 0;
  p.num_slots = 8;
  circuits::Layer l0, l1, l2;
  l0.linear = {lin(OpKind::Const, 0, 0)};
  l0.ands = {{1, 0, 0}, {2, 0, 0}, {3, 0, 0}};
  l1.linear = {lin(OpKind::Const, 4, 0)};
  l1.ands = {{5, 4, 4}, {6, 4, 4}};
  p.layers = {l0, l1, l2};
  p.output_slots = {1, 5};
  p.num_outputs = 2;
  std::mt19937_64 rng(42);
  const auto keys = test::random_keys(rng);
  const BatchNonce nonce{77, 78};
  for (std::size_t n : {2048u + 100u, 5u, 4096u}) {
    const std::size_t per_and = (n / 2048) * 256 + ((n % 2048) + 7) / 8;
    for (SimdLevel level : test::supported_levels()) {
      std::array<std::vector<std::uint8_t>, 3> transcripts;
      ThreePartyOptions options;
      options.transcripts = &transcripts;
      const ShareMatrix none(0, n);
      evaluate_three_parties(p, {none, none, none}, level, nonce, keys, options);
      for (int i = 0; i < 3; ++i) {
        CorrelatedRandomness randomness(keys[i], keys[previous_party(i)], nonce);
        std::vector<std::uint8_t> expected;
        for (std::size_t ands : {3u, 2u}) {
          const std::size_t message = ands * per_and;
          std::vector<std::uint8_t> alpha((message + 15) / 16 * 16);
          randomness.next_alpha(alpha);
          alpha.resize(message);
          if (n % 2048 != 0 && n % 8 != 0) {
            const std::size_t base = (n / 2048) * ands * 256, chunk_bytes = ((n % 2048) + 7) / 8;
            for (std::size_t k = 0; k < ands; ++k)
              alpha[base + k * chunk_bytes + chunk_bytes - 1] &= static_cast<std::uint8_t>((1u << (n % 8)) - 1);
          }
          expected.insert(expected.end(), alpha.begin(), alpha.end());
        }
        EXPECT_EQ(transcripts[i], expected) << "party " << i << " n=" << n << " " << simd_level_name(level);
      }
    }
  }
}

TEST(Evaluator, EdgeCases) {
  std::mt19937_64 rng(51);
  const auto keys = test::random_keys(rng);
  // No layers, no outputs.
  {
    circuits::Program p;
    p.num_inputs = 1;
    const auto out = evaluate_three_parties(p, share_matrix(std::vector<std::uint64_t>(2), 1, 100), SimdLevel::Portable,
                                            BatchNonce{1, 1}, keys);
    EXPECT_EQ(out[0].rows, 0u);
    EXPECT_EQ(out[0].instances, 100u);
  }
  // Final layer has ANDs (needs an extra finish pass); a middle layer has none.
  {
    circuits::Program p;
    p.num_inputs = 2;
    p.num_outputs = 2;
    p.num_slots = 4;
    circuits::Layer l0, l1, l2;
    l0.linear = {lin(OpKind::LoadInput, 0, 0), lin(OpKind::LoadInput, 1, 1)};
    l0.ands = {{2, 0, 1}};
    l1.linear = {lin(OpKind::Xor, 3, 2, 0)};
    l2.ands = {{0, 3, 1}};
    p.layers = {l0, l1, l2};
    p.output_slots = {0, 2};
    p.and_gates = 2;
    p.and_depth = 2;
    for (std::size_t n : {0u, 5u, 2048u}) {
      auto clear = testing::random_words(rng, 2 * words_for(n));
      std::array<EvaluationStats, 3> stats;
      ThreePartyOptions options;
      options.stats = &stats;
      for (SimdLevel level : test::supported_levels()) {
        const auto out = evaluate_three_parties(p, share_matrix(clear, 2, n), level, BatchNonce{2, 2}, keys, options);
        EXPECT_EQ(open_matrix(out), testing::evaluate_cleartext(p, clear, n));
        EXPECT_EQ(stats[0].layers_exchanged, n == 0 ? 0u : 2u);
      }
    }
  }
}

TEST(Evaluator, OutputsMayAliasInputs) {
  std::mt19937_64 rng(52);
  testing::RandomProgramShape shape;
  const auto program = testing::random_program(rng, shape);
  const std::size_t n = 300;
  auto clear = testing::random_words(rng, shape.inputs * words_for(n));
  auto shares = share_matrix(clear, shape.inputs, n);
  const auto keys = test::random_keys(rng);
  run_parties([&](int i, LayerExchange& exchange) {
    CorrelatedRandomness randomness(keys[i], keys[previous_party(i)], BatchNonce{3, 3});
    make_cpu_evaluator(best_simd_level())->evaluate(program, shares[i], shares[i], randomness, exchange);
  });
  EXPECT_EQ(open_matrix(shares), testing::evaluate_cleartext(program, clear, n));
}

// One evaluator object reused for several batches of different sizes keeps working (its
// workspace is reused and wiped between batches).
TEST(Evaluator, ReusedEvaluator) {
  std::mt19937_64 rng(53);
  testing::RandomProgramShape shape;
  const auto program = testing::random_program(rng, shape);
  const auto keys = test::random_keys(rng);
  std::array<std::unique_ptr<Evaluator>, 3> evaluators;
  for (auto& e : evaluators) e = make_cpu_evaluator(best_simd_level());
  for (std::size_t n : {5000u, 10u, 2049u, 64u}) {
    auto clear = testing::random_words(rng, shape.inputs * words_for(n));
    const auto inputs = share_matrix(clear, shape.inputs, n);
    std::array<ShareMatrix, 3> outputs;
    outputs[1] = ShareMatrix(3, 7);  // wrong shape: must be replaced
    run_parties([&](int i, LayerExchange& exchange) {
      CorrelatedRandomness randomness(keys[i], keys[previous_party(i)], BatchNonce{4, static_cast<std::uint32_t>(n)});
      evaluators[i]->evaluate(program, inputs[i], outputs[i], randomness, exchange);
    });
    EXPECT_EQ(open_matrix(outputs), testing::evaluate_cleartext(program, clear, n)) << n;
  }
}

TEST(Evaluator, ThreePartyRunsReuseGivenEvaluators) {
  std::mt19937_64 rng(54);
  testing::RandomProgramShape shape;
  const auto program = testing::random_program(rng, shape);
  const auto keys = test::random_keys(rng);
  std::array<std::unique_ptr<Evaluator>, 3> evaluators;
  ThreePartyOptions options;
  for (int i = 0; i < 3; ++i) {
    evaluators[i] = make_cpu_evaluator(SimdLevel::Portable);
    options.evaluators[i] = evaluators[i].get();
  }
  for (std::size_t n : {100u, 3000u, 100u}) {
    auto clear = testing::random_words(rng, shape.inputs * words_for(n));
    const auto out = evaluate_three_parties(program, share_matrix(clear, shape.inputs, n), SimdLevel::Portable,
                                            BatchNonce{6, static_cast<std::uint32_t>(n)}, keys, options);
    EXPECT_EQ(open_matrix(out), testing::evaluate_cleartext(program, clear, n));
  }
}

class NullExchange final : public LayerExchange {
 public:
  void exchange(std::uint32_t, std::span<const std::uint8_t>, std::span<std::uint8_t>) override { ++calls; }
  int calls = 0;
};

TEST(Evaluator, RejectsBadInputsAndPrograms) {
  auto evaluator = make_cpu_evaluator(SimdLevel::Portable);
  CorrelatedRandomness randomness(PrfKey{1}, PrfKey{2}, BatchNonce{5, 5});
  NullExchange exchange;
  circuits::Program good;
  good.num_inputs = 2;
  good.num_outputs = 1;
  good.num_slots = 3;
  circuits::Layer l0, l1;
  l0.linear = {lin(OpKind::LoadInput, 0, 0), lin(OpKind::LoadInput, 1, 1)};
  l0.ands = {{2, 0, 1}};
  good.layers = {l0, l1};
  good.output_slots = {2};
  ShareMatrix inputs(2, 100), outputs;
  EXPECT_NO_THROW(evaluator->evaluate(good, inputs, outputs, randomness, exchange));
  EXPECT_EQ(exchange.calls, 1);

  ShareMatrix wrong_rows(3, 100);
  EXPECT_THROW(evaluator->evaluate(good, wrong_rows, outputs, randomness, exchange), Error);
  ShareMatrix malformed(2, 100);
  malformed.x.pop_back();
  EXPECT_THROW(evaluator->evaluate(good, malformed, outputs, randomness, exchange), Error);
  ShareMatrix bad_width(2, 100);
  bad_width.words_per_row = 1;
  EXPECT_THROW(evaluator->evaluate(good, bad_width, outputs, randomness, exchange), Error);

  auto expect_format_error = [&](const std::function<void(circuits::Program&)>& mutate, const char* what) {
    circuits::Program p = good;
    mutate(p);
    EXPECT_THROW(evaluator->evaluate(p, inputs, outputs, randomness, exchange), FormatError) << what;
  };
  expect_format_error([](auto& p) { p.layers[0].linear[0].out = 3; }, "slot out of range");
  expect_format_error([](auto& p) { p.layers[0].linear[1].in0 = 2; }, "input row out of range");
  expect_format_error([](auto& p) { p.layers[0].ands[0].in1 = 2; }, "read before write");
  expect_format_error([](auto& p) { p.layers[0].ands[0].in1 = 9; }, "AND input out of range");
  expect_format_error([](auto& p) { p.layers[0].ands[0].out = 3; }, "AND output out of range");
  expect_format_error([](auto& p) { p.layers[0].linear.push_back(lin(OpKind::Const, 2, 2)); }, "constant 2");
  expect_format_error([](auto& p) { p.layers[0].linear.push_back(lin(static_cast<OpKind>(42), 2, 0)); }, "kind");
  expect_format_error([](auto& p) { p.layers[0].linear.push_back(lin(OpKind::Xor, 2, 0, 7)); }, "XOR operand");
  expect_format_error([](auto& p) { p.output_slots = {1, 2}; }, "output count");
  expect_format_error([](auto& p) { p.output_slots = {5}; }, "output slot out of range");
  expect_format_error(
      [](auto& p) {
        p.num_slots = 4;
        p.output_slots = {3};
      },
      "output never written");
}

}  // namespace
}  // namespace mpc::rss3
