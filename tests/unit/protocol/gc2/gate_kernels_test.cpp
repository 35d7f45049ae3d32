// tests/unit/protocol/gc2/gate_kernels_test.cpp: the per-layer AND kernels. For every pair of input
// values the evaluator's output label is W0 ^ (a AND b) * delta, with tables from either
// kernel; the VAES kernel gives the portable kernel's bytes (tables, labels) for every
// instance count (lanes shared by gates below 16 instances, rows from 16 on, partial groups)
// and writes nothing outside its rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "common/error.hpp"
#include "protocol/gc2/gate_kernels.hpp"
#include "protocol/gc2/half_gates.hpp"

namespace {

using mpc::circuits::AndOp;
using mpc::two_party::Block;
namespace detail = mpc::gc2::detail;

using GarbleFn = void (*)(const AndOp*, std::size_t, Block*, std::size_t, Block*, const Block&, std::uint64_t,
                          std::uint64_t);
using EvaluateFn = void (*)(const AndOp*, std::size_t, Block*, std::size_t, const Block*, std::uint64_t,
                            std::uint64_t);

struct Kernels {
  const char* name;
  GarbleFn garble;
  EvaluateFn evaluate;
};

std::vector<Kernels> kernels() {
  std::vector<Kernels> out{{"portable", detail::portable_garble_ands, detail::portable_evaluate_ands}};
  if (detail::vaes_supported()) out.push_back({"vaes", detail::vaes_garble_ands, detail::vaes_evaluate_ands});
  return out;
}

// A layer of `count` ANDs over 3 * count slots: inputs drawn from the first 2 * count slots
// (shared inputs allowed), distinct outputs in the last count slots (in shuffled order).
std::vector<AndOp> random_layer(std::mt19937_64& rng, std::size_t count) {
  std::vector<std::uint32_t> outs(count);
  for (std::size_t g = 0; g < count; ++g) outs[g] = static_cast<std::uint32_t>(2 * count + g);
  std::shuffle(outs.begin(), outs.end(), rng);
  std::vector<AndOp> ops(count);
  for (std::size_t g = 0; g < count; ++g)
    ops[g] = {outs[g], static_cast<std::uint32_t>(rng() % (2 * count)), static_cast<std::uint32_t>(rng() % (2 * count))};
  return ops;
}

std::vector<Block> random_blocks(std::mt19937_64& rng, std::size_t n) {
  std::vector<Block> out(n);
  for (auto& b : out) b = {rng(), rng()};
  return out;
}

TEST(GateKernels, EvaluatorGetsTheLabelOfTheAnd) {
  std::mt19937_64 rng(5);
  for (const auto& garbler : kernels())
    for (const auto& evaluator : kernels())
      for (std::size_t count : {1u, 3u, 7u})
        for (std::size_t n : {1u, 2u, 5u, 16u, 37u}) {
          const auto ops = random_layer(rng, count);
          const Block delta{rng() | 1, rng()};
          const std::uint64_t high = rng() >> 1, first = rng() >> 8;
          auto zero = random_blocks(rng, 3 * count * n);
          std::vector<Block> tables(2 * count * n);
          auto active = zero;
          std::vector<int> value(2 * count * n);
          for (std::size_t i = 0; i < value.size(); ++i) {
            value[i] = static_cast<int>(rng() & 1);
            if (value[i]) active[i] = active[i] ^ delta;
          }
          garbler.garble(ops.data(), count, zero.data(), n, tables.data(), delta, high, first);
          auto wrong_tweak = active;
          evaluator.evaluate(ops.data(), count, active.data(), n, tables.data(), high, first);
          evaluator.evaluate(ops.data(), count, wrong_tweak.data(), n, tables.data(), high, first + 1);
          for (std::size_t g = 0; g < count; ++g)
            for (std::size_t e = 0; e < n; ++e) {
              const int v = value[ops[g].in0 * n + e] & value[ops[g].in1 * n + e];
              const std::size_t out = ops[g].out * n + e;
              EXPECT_EQ(active[out], v ? zero[out] ^ delta : zero[out])
                  << garbler.name << " -> " << evaluator.name << " gates " << count << " n " << n;
              EXPECT_NE(wrong_tweak[out], zero[out]);
              EXPECT_NE(wrong_tweak[out], zero[out] ^ delta);
            }
        }
}

TEST(GateKernels, VaesGivesThePortableBytes) {
  if (!detail::vaes_supported()) GTEST_SKIP() << "no VAES on this CPU";
  std::mt19937_64 rng(6);
  const Block sentinel{0x1234, 0x5678};
  for (std::size_t count : {1u, 2u, 3u, 9u})
    for (std::size_t n = 1; n <= 40; ++n) {
      const auto ops = random_layer(rng, count);
      const Block delta{rng() | 1, rng()};
      const std::uint64_t high = rng() >> 1, first = rng() >> 8;
      const auto slots = random_blocks(rng, 3 * count * n);
      auto slots1 = slots, slots2 = slots;
      slots2.push_back(sentinel);
      std::vector<Block> tables1(2 * count * n), tables2(2 * count * n + 1, sentinel);
      detail::portable_garble_ands(ops.data(), count, slots1.data(), n, tables1.data(), delta, high, first);
      detail::vaes_garble_ands(ops.data(), count, slots2.data(), n, tables2.data(), delta, high, first);
      ASSERT_EQ(slots2.back(), sentinel) << "wrote past the slots: gates " << count << " n " << n;
      ASSERT_EQ(tables2.back(), sentinel) << "wrote past the tables: gates " << count << " n " << n;
      slots2.pop_back();
      tables2.pop_back();
      ASSERT_EQ(slots1, slots2) << "gates " << count << " n " << n;
      ASSERT_EQ(tables1, tables2) << "gates " << count << " n " << n;
      // Evaluation of the same tables from the same (here arbitrary) labels.
      auto eval1 = slots, eval2 = slots;
      eval2.push_back(sentinel);
      detail::portable_evaluate_ands(ops.data(), count, eval1.data(), n, tables1.data(), high, first);
      detail::vaes_evaluate_ands(ops.data(), count, eval2.data(), n, tables1.data(), high, first);
      ASSERT_EQ(eval2.back(), sentinel) << "gates " << count << " n " << n;
      eval2.pop_back();
      ASSERT_EQ(eval1, eval2) << "gates " << count << " n " << n;
      ASSERT_NE(eval1, slots);
    }
}

TEST(GateKernels, KernelChoiceFollowsTheCpu) {
  EXPECT_TRUE(mpc::gc2::kernel_available(mpc::gc2::Kernel::Portable));
  EXPECT_EQ(mpc::gc2::kernel_available(mpc::gc2::Kernel::Vaes), detail::vaes_supported());
  EXPECT_EQ(mpc::gc2::best_kernel() == mpc::gc2::Kernel::Vaes, detail::vaes_supported());
  if (!detail::vaes_supported()) {
    EXPECT_THROW(mpc::gc2::Garbler{mpc::gc2::Kernel::Vaes}, mpc::Error);
  }
}

}  // namespace
