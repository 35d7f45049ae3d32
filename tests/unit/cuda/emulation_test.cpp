// tests/unit/cuda/emulation_test.cpp: the GPU evaluator's algorithm (plan, levels,
// per-lane ops, message packing, segment copies, alpha production) emulated on the CPU
// (emulated_evaluator.hpp) and compared with the CPU evaluator: bit-identical messages
// and output shares for odd batch sizes, random programs, AES circuits (and OpenSSL),
// alpha from CorrelatedRandomness or from the T-table AES, inputs staged through slots of
// several sizes (rows cut by columns, many pieces, one piece) by one to four threads. Plus the plan's own
// guarantees: levels of independent ops, the CPU evaluator's validation rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "circuits/aes.hpp"
#include "circuits/aes_reference.hpp"
#include "common/error.hpp"
#include "cuda/device_plan.hpp"
#include "emulated_evaluator.hpp"
#include "support/random_program.hpp"
#include "three_parties.hpp"

namespace mpc::cuda {
namespace {

using circuits::OpKind;

const std::vector<std::uint64_t> kSizes = {1, 31, 32, 33, 1000, 2047, 2049};

void expect_identical(const test::ThreePartyResult& got, const test::ThreePartyResult& want, const std::string& what) {
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(got.transcripts[i], want.transcripts[i]) << what << ", party " << i << ": messages";
    EXPECT_EQ(got.outputs[i].x, want.outputs[i].x) << what << ", party " << i << ": x";
    EXPECT_EQ(got.outputs[i].a, want.outputs[i].a) << what << ", party " << i << ": a";
    EXPECT_EQ(got.stats[i].bytes_sent, want.stats[i].bytes_sent) << what;
    EXPECT_EQ(got.stats[i].layers_exchanged, want.stats[i].layers_exchanged) << what;
  }
}

test::ThreePartyResult run_emulated(const circuits::Program& program,
                                    const std::array<rss3::ShareMatrix, 3>& inputs, rss3::BatchNonce nonce,
                                    const std::array<rss3::PrfKey, 3>& keys, test::LevelOrder order,
                                    std::uint64_t segments, bool device_prf, std::uint32_t first_block = 0,
                                    test::EmulatedKernel kernel = {}, test::EmulatedStaging staging = {}) {
  return test::run_three_parties(inputs, [&](int i, const rss3::ShareMatrix& in, rss3::ShareMatrix& out,
                                             rss3::LayerExchange& exchange) {
    const rss3::PrfKey& own = keys[static_cast<std::size_t>(i)];
    const rss3::PrfKey& previous = keys[static_cast<std::size_t>(rss3::previous_party(i))];
    std::optional<DevicePrf> prf;
    if (device_prf) prf = DevicePrf{own, previous, nonce, first_block};
    test::EmulatedGpuEvaluator evaluator(order, prf, segments, kernel, staging);
    rss3::CorrelatedRandomness randomness(own, previous, nonce);
    return evaluator.evaluate(program, in, out, randomness, exchange);
  });
}

void compare_with_cpu(const circuits::Program& program, std::uint64_t n, std::mt19937_64& rng,
                      const std::string& what) {
  const std::size_t words = rss3::words_for(n);
  const auto inputs = rss3::share_matrix(rss3::testing::random_words(rng, program.num_inputs * words),
                                         program.num_inputs, n);
  const auto keys = test::random_keys(rng);
  const rss3::BatchNonce nonce{rng(), static_cast<std::uint32_t>(rng())};
  const auto cpu = test::run_cpu_reference(program, inputs, nonce, keys);
  const std::string label = what + ", n = " + std::to_string(n);
  expect_identical(run_emulated(program, inputs, nonce, keys, test::LevelOrder::Forward, 4, false), cpu,
                   label + ", forward");
  // One thread and one slot of 64 bytes (rows of more than 512 instances cut by columns).
  expect_identical(run_emulated(program, inputs, nonce, keys, test::LevelOrder::Reverse, 1, false, 0, {}, {1, 1, 64}),
                   cpu, label + ", reverse");
  // Four threads and slots large enough for a group in one piece.
  expect_identical(
      run_emulated(program, inputs, nonce, keys, test::LevelOrder::Forward, 3, true, 0, {}, {4, 10, 1 << 20}), cpu,
      label + ", device PRF");
  // The staged kernel with each block width, both level orders.
  for (std::uint32_t words : {8u, 16u, 32u}) {
    const test::LevelOrder order = words == 16 ? test::LevelOrder::Reverse : test::LevelOrder::Forward;
    expect_identical(run_emulated(program, inputs, nonce, keys, order, words == 8 ? 3 : 1, words != 32, 0, {words}),
                     cpu, label + ", staged, " + std::to_string(words) + " words per block");
  }
}

TEST(Emulation, RandomProgramsMatchCpu) {
  std::mt19937_64 rng(21);
  std::vector<rss3::testing::RandomProgramShape> shapes(3);
  shapes[1].unusual_percent = 60;
  shapes[1].and_layers = 7;
  shapes[2].ands_per_layer = 150;  // a message of many ANDs per chunk
  shapes[2].slots = 400;
  shapes[2].linear_per_layer = 300;
  shapes[2].and_layers = 2;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    const circuits::Program program = rss3::testing::random_program(rng, shapes[s]);
    for (std::uint64_t n : kSizes) compare_with_cpu(program, n, rng, "shape " + std::to_string(s));
  }
  const circuits::Program program = rss3::testing::random_program(rng, shapes[0]);
  compare_with_cpu(program, 4096 + 5, rng, "three chunks");
}

// A layer without ANDs before AND layers, and a last layer that has ANDs (so a final
// pass of finishes only), constants and in-place ops.
TEST(Emulation, UnusualLayeringMatchesCpu) {
  circuits::Program p;
  p.num_inputs = 3;
  p.num_slots = 10;
  circuits::Layer l0;
  l0.linear = {{OpKind::LoadInput, 0, 0, 0}, {OpKind::LoadInput, 1, 1, 0}, {OpKind::Xor, 2, 0, 1},
               {OpKind::Const, 3, 1, 0},     {OpKind::Xor, 0, 0, 3},       {OpKind::Inv, 1, 1, 0}};
  circuits::Layer l1;
  l1.linear = {{OpKind::LoadInput, 4, 2, 0}, {OpKind::Copy, 5, 4, 0}};
  l1.ands = {{6, 0, 4}, {7, 2, 5}, {8, 1, 1}};
  circuits::Layer l2;
  l2.linear = {{OpKind::Xor, 6, 6, 7}, {OpKind::Const, 9, 0, 0}};
  l2.ands = {{0, 6, 8}, {9, 7, 3}};
  p.layers = {l0, l1, l2};
  p.output_slots = {0, 9, 6, 8, 2};
  p.num_outputs = 5;
  p.and_gates = 5;
  p.and_depth = 2;
  std::mt19937_64 rng(22);
  for (std::uint64_t n : kSizes) compare_with_cpu(p, n, rng, "unusual layering");
}

TEST(Emulation, DevicePrfFromAnyBlockMatchesCpu) {
  std::mt19937_64 rng(23);
  const circuits::Program program = rss3::testing::random_program(rng, rss3::testing::RandomProgramShape{});
  for (std::uint32_t first_block : {1u, 1000u}) {
    const std::uint64_t n = 1000;
    const auto inputs = rss3::share_matrix(rss3::testing::random_words(rng, program.num_inputs * rss3::words_for(n)),
                                           program.num_inputs, n);
    const auto keys = test::random_keys(rng);
    const rss3::BatchNonce nonce{rng(), 9};
    const auto cpu = test::run_three_parties(inputs, [&](int i, const rss3::ShareMatrix& in, rss3::ShareMatrix& out,
                                                         rss3::LayerExchange& exchange) {
      rss3::CorrelatedRandomness randomness(keys[static_cast<std::size_t>(i)],
                                            keys[static_cast<std::size_t>(rss3::previous_party(i))], nonce);
      std::vector<std::uint8_t> skip(16 * std::size_t{first_block});
      randomness.next_alpha(skip);
      return rss3::make_cpu_evaluator(rss3::SimdLevel::Portable)->evaluate(program, in, out, randomness, exchange);
    });
    expect_identical(run_emulated(program, inputs, nonce, keys, test::LevelOrder::Forward, 4, true, first_block), cpu,
                     "first block " + std::to_string(first_block));
  }
}

struct AesCase {
  circuits::AesKeySize size;
  circuits::AesDirection direction;
  circuits::SboxVariant sbox;
};

TEST(Emulation, AesCircuitsMatchCpuAndOpenSsl) {
  std::mt19937_64 rng(24);
  const AesCase cases[] = {
      {circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt, circuits::SboxVariant::And32},
      {circuits::AesKeySize::Aes256, circuits::AesDirection::Decrypt, circuits::SboxVariant::Depth4}};
  for (const AesCase& c : cases) {
    const circuits::Program program = circuits::compile(circuits::build_aes_circuit(c.size, c.direction, c.sbox));
    const std::size_t key_bytes = c.size == circuits::AesKeySize::Aes128 ? 16 : 32;
    const std::size_t rk_bytes = circuits::aes_round_key_bits(c.size) / 8;
    for (std::uint64_t n : {33u, 2049u}) {
      std::vector<std::vector<std::uint8_t>> keys, blocks;
      std::vector<std::uint8_t> round_keys(n * rk_bytes), block_bytes(n * 16);
      for (std::size_t i = 0; i < n; ++i) {
        keys.push_back(test::random_bytes(rng, key_bytes));
        blocks.push_back(test::random_bytes(rng, 16));
        const auto expanded = circuits::aes_expand_key(keys.back());
        std::copy(expanded.begin(), expanded.end(), round_keys.begin() + i * rk_bytes);
        std::copy(blocks.back().begin(), blocks.back().end(), block_bytes.begin() + i * 16);
      }
      const std::size_t words = rss3::words_for(n);
      std::vector<std::uint64_t> clear(program.num_inputs * words);
      rss3::slice(round_keys, rk_bytes, n, clear, words, 0);
      rss3::slice(block_bytes, 16, n, clear, words, rk_bytes * 8);
      const auto inputs = rss3::share_matrix(clear, program.num_inputs, n);
      const auto prf_keys = test::random_keys(rng);
      const rss3::BatchNonce nonce{rng(), 1};
      const auto cpu = test::run_cpu_reference(program, inputs, nonce, prf_keys);
      const auto emulated = run_emulated(program, inputs, nonce, prf_keys, test::LevelOrder::Reverse, 4, true);
      expect_identical(emulated, cpu, "AES, n = " + std::to_string(n));
      expect_identical(run_emulated(program, inputs, nonce, prf_keys, test::LevelOrder::Forward, 2, true, 0, {16}), cpu,
                       "AES, staged, n = " + std::to_string(n));
      const auto opened = rss3::open_matrix(emulated.outputs);
      std::vector<std::uint8_t> result(n * 16);
      rss3::unslice(opened, words, 0, 16, n, result);
      std::size_t mismatches = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const auto want = test::openssl_aes(c.size, c.direction, keys[i], blocks[i]);
        mismatches += !std::equal(want.begin(), want.end(), result.begin() + static_cast<std::ptrdiff_t>(i * 16));
      }
      EXPECT_EQ(mismatches, 0u) << n;
    }
  }
}

// Reads and writes of an op on slots (for the independence check).
void slots_of(const detail::DeviceOp& op, std::vector<std::uint32_t>& reads, std::vector<std::uint32_t>& writes) {
  reads.clear();
  writes.clear();
  switch (op.code) {
    case detail::kDevXor: reads = {op.b, op.c}; writes = {op.a}; break;
    case detail::kDevInv:
    case detail::kDevCopy: reads = {op.b}; writes = {op.a}; break;
    case detail::kDevConst0:
    case detail::kDevConst1:
    case detail::kDevLoad:
    case detail::kDevFinish: writes = {op.a}; break;
    case detail::kDevAnd: reads = {op.b, op.c}; break;
    case detail::kDevOutput: reads = {op.a}; break;
    default: FAIL() << "unknown opcode " << op.code;
  }
}

void check_plan(const circuits::Program& program) {
  const detail::DevicePlan plan = detail::build_device_plan(program);
  const std::size_t layers = program.layers.size();
  ASSERT_EQ(plan.passes.size(), layers + (program.layers.back().ands.empty() ? 0 : 1));
  std::size_t expected_ops = program.output_slots.size();
  for (const auto& layer : program.layers) expected_ops += layer.linear.size() + 2 * layer.ands.size();
  EXPECT_EQ(plan.ops.size(), expected_ops);
  EXPECT_EQ(plan.level_bounds.front(), 0u);
  EXPECT_EQ(plan.level_bounds.back(), plan.ops.size());
  EXPECT_TRUE(std::is_sorted(plan.level_bounds.begin(), plan.level_bounds.end()));
  std::vector<std::uint32_t> r1, w1, r2, w2;
  for (const detail::PassPlan& pass : plan.passes) {
    for (std::uint32_t l = pass.first_level; l < pass.first_level + pass.levels; ++l) {
      const std::uint32_t begin = plan.level_bounds[l], end = plan.level_bounds[l + 1];
      EXPECT_LT(begin, end) << "empty level";
      for (std::uint32_t i = begin; i < end; ++i) {
        slots_of(plan.ops[i], r1, w1);
        for (std::uint32_t j = i + 1; j < end; ++j) {
          slots_of(plan.ops[j], r2, w2);
          for (std::uint32_t w : w1) {
            EXPECT_EQ(std::count(r2.begin(), r2.end(), w), 0) << "level " << l << ": ops " << i << ", " << j;
            EXPECT_EQ(std::count(w2.begin(), w2.end(), w), 0) << "level " << l << ": ops " << i << ", " << j;
          }
          for (std::uint32_t w : w2) EXPECT_EQ(std::count(r1.begin(), r1.end(), w), 0) << "level " << l;
        }
      }
    }
  }
  EXPECT_GE(plan.num_device_slots, program.num_slots);
  EXPECT_LE(plan.num_device_slots, program.num_slots * detail::kSlotBudgetFactor + detail::kSlotBudgetExtra);
  for (const detail::DeviceOp& op : plan.ops) {
    std::vector<std::uint32_t> reads, writes;
    slots_of(op, reads, writes);
    for (std::uint32_t s : reads) EXPECT_LT(s, plan.num_device_slots);
    for (std::uint32_t s : writes) EXPECT_LT(s, plan.num_device_slots);
  }
  EXPECT_TRUE(detail::plan_matches(program, plan));
  circuits::Program changed = program;
  changed.output_slots.back() ^= 1;
  EXPECT_FALSE(detail::plan_matches(changed, plan));
}

TEST(Plan, LevelsHoldIndependentOps) {
  std::mt19937_64 rng(25);
  rss3::testing::RandomProgramShape shape;
  shape.unusual_percent = 50;
  for (int trial = 0; trial < 5; ++trial) check_plan(rss3::testing::random_program(rng, shape));
  for (auto sbox : {circuits::SboxVariant::And32, circuits::SboxVariant::Depth4})
    check_plan(circuits::compile(
        circuits::build_aes_circuit(circuits::AesKeySize::Aes256, circuits::AesDirection::Decrypt, sbox)));
}

// Renaming removes the false dependencies of slot reuse: AES-128 needs a few hundred
// levels (its true dependence depth is 391), not thousands.
TEST(Plan, RenamingKeepsAesPassesShallow) {
  const detail::DevicePlan plan = detail::build_device_plan(circuits::compile(
      circuits::build_aes_circuit(circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt,
                                  circuits::SboxVariant::And32)));
  std::uint32_t levels = 0;
  for (const auto& pass : plan.passes) levels += pass.levels;
  EXPECT_LT(levels, 600u);
}

// Registers an op of a staged pass reads and writes, and the home it loads or stores.
struct StagedAccess {
  std::vector<std::uint32_t> reads, writes;
  std::int64_t loads_home = -1, stores_home = -1;
};

StagedAccess staged_access(const detail::DeviceOp& op) {
  using namespace detail;
  StagedAccess s;
  const std::uint32_t code = op.code & kStOpcodeMask;
  if (code == kStXor || code == kStAnd) s.reads = {op.b, op.c};
  if (code == kStInv || code == kStCopy || code == kStOutput) s.reads = {op.b};
  if (code == kStLoadState) s.loads_home = op.b;
  if ((op.code & kStKeep) != 0) s.writes = {op.a & 0xffffu};
  if ((op.code & kStStore) != 0) s.stores_home = op.a >> 16;
  return s;
}

void check_staged_plan(const circuits::Program& program) {
  const detail::DevicePlan plan = detail::build_device_plan(program);
  const detail::StagedPlan& staged = plan.staged;
  ASSERT_TRUE(staged.usable);
  ASSERT_EQ(staged.passes.size(), plan.passes.size());
  EXPECT_EQ(staged.level_bounds.back(), staged.ops.size());
  for (std::size_t p = 0; p < staged.passes.size(); ++p) {
    const detail::StagedPassPlan& pass = staged.passes[p];
    EXPECT_EQ(pass.ands, plan.passes[p].ands);
    EXPECT_EQ(pass.prev_ands, plan.passes[p].prev_ands);
    std::vector<std::int64_t> written_at(pass.regs, -1);  // level of the last write of each register
    std::vector<std::int64_t> loaded_at(program.num_slots, -1);
    std::uint32_t ands = 0;
    for (std::uint32_t l = 0; l < pass.levels; ++l) {
      const std::uint32_t begin = staged.level_bounds[pass.first_level + l];
      const std::uint32_t end = staged.level_bounds[pass.first_level + l + 1];
      for (std::uint32_t i = begin; i < end; ++i) {
        const StagedAccess a = staged_access(staged.ops[i]);
        if ((staged.ops[i].code & detail::kStOpcodeMask) == detail::kStAnd) ++ands;
        for (std::uint32_t r : a.reads) {
          ASSERT_LT(r, pass.regs);
          EXPECT_GE(written_at[r], 0) << "pass " << p << ": register " << r << " read before it is written";
          EXPECT_LT(written_at[r], static_cast<std::int64_t>(l)) << "pass " << p << ": read in the level that writes";
        }
        if (a.stores_home >= 0) {
          EXPECT_LT(loaded_at[static_cast<std::size_t>(a.stores_home)], static_cast<std::int64_t>(l))
              << "pass " << p << ": home " << a.stores_home << " stored in the level that loads it";
        }
        if (a.loads_home >= 0) loaded_at[static_cast<std::size_t>(a.loads_home)] = l;
        for (std::uint32_t j = begin; j < end; ++j) {
          if (j == i) continue;
          const StagedAccess b = staged_access(staged.ops[j]);
          for (std::uint32_t w : a.writes) {
            EXPECT_EQ(std::count(b.reads.begin(), b.reads.end(), w), 0) << "pass " << p << ", level " << l;
            EXPECT_EQ(std::count(b.writes.begin(), b.writes.end(), w), 0) << "pass " << p << ", level " << l;
          }
          if (a.stores_home >= 0) {
            EXPECT_NE(a.stores_home, b.stores_home);
          }
        }
      }
      for (std::uint32_t i = begin; i < end; ++i)
        for (std::uint32_t w : staged_access(staged.ops[i]).writes) written_at[w] = l;
    }
    EXPECT_EQ(ands, pass.ands) << "every AND of the layer is kept";
  }
}

TEST(StagedPlan, LevelsHoldIndependentOps) {
  std::mt19937_64 rng(27);
  rss3::testing::RandomProgramShape shape;
  shape.unusual_percent = 50;
  for (int trial = 0; trial < 5; ++trial) check_staged_plan(rss3::testing::random_program(rng, shape));
  for (auto sbox : {circuits::SboxVariant::And32, circuits::SboxVariant::Depth4})
    check_staged_plan(circuits::compile(
        circuits::build_aes_circuit(circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt, sbox)));
}

// For AES the staged passes move at most a third of what the device-memory ones would
// without any cache reuse, and their registers fit a 16-word block in the 227 KiB of
// shared memory a block may have on Hopper.
TEST(StagedPlan, AesMovesAThirdOfTheBytes) {
  for (auto sbox : {circuits::SboxVariant::And32, circuits::SboxVariant::Depth4}) {
    const detail::DevicePlan plan = detail::build_device_plan(circuits::compile(
        circuits::build_aes_circuit(circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt, sbox)));
    ASSERT_TRUE(plan.staged.usable);
    EXPECT_LT(plan.staged.bytes_per_word() * 3, detail::count_traffic(plan).bytes_per_word());
    EXPECT_LE(plan.staged.max_regs * 16 * 16, 227u * 1024);
  }
}

// A program whose slots do not fit the 16-bit fields has no staged plan (the evaluator
// then runs the device-memory kernel).
TEST(StagedPlan, LargeProgramsFallBack) {
  circuits::Program p;
  p.num_inputs = 1;
  p.num_slots = detail::kStagedMaxIndex + 2;
  circuits::Layer l0;
  l0.linear = {{OpKind::LoadInput, p.num_slots - 1, 0, 0}, {OpKind::Inv, 0, p.num_slots - 1, 0}};
  p.layers = {l0};
  p.output_slots = {0};
  p.num_outputs = 1;
  EXPECT_FALSE(detail::build_device_plan(p).staged.usable);
  p.num_slots = detail::kStagedMaxIndex + 1;
  l0.linear = {{OpKind::LoadInput, p.num_slots - 1, 0, 0}, {OpKind::Inv, 0, p.num_slots - 1, 0}};
  p.layers = {l0};
  EXPECT_TRUE(detail::build_device_plan(p).staged.usable);
}

// The GPU plan accepts and rejects exactly what the CPU evaluator does.
TEST(Plan, RejectsWhatTheCpuRejects) {
  auto base = [] {
    circuits::Program p;
    p.num_inputs = 2;
    p.num_slots = 4;
    circuits::Layer l0;
    l0.linear = {{OpKind::LoadInput, 0, 0, 0}, {OpKind::LoadInput, 1, 1, 0}};
    l0.ands = {{2, 0, 1}};
    circuits::Layer l1;
    l1.linear = {{OpKind::Xor, 3, 2, 0}};
    p.layers = {l0, l1};
    p.output_slots = {3};
    p.num_outputs = 1;
    p.and_gates = 1;
    p.and_depth = 1;
    return p;
  };
  std::vector<circuits::Program> bad;
  auto add = [&](auto mutate) {
    circuits::Program p = base();
    mutate(p);
    bad.push_back(p);
  };
  add([](circuits::Program& p) { p.layers[1].linear[0].in0 = 9; });                  // slot out of range
  add([](circuits::Program& p) { p.layers[0].ands[0].in1 = 3; });                    // read before write
  add([](circuits::Program& p) { p.layers[0].linear[1] = {OpKind::Const, 1, 2, 0}; });  // constant 2
  add([](circuits::Program& p) { p.layers[0].linear[1].in0 = 2; });                  // input row out of range
  add([](circuits::Program& p) { p.num_outputs = 2; });                              // outputs count
  add([](circuits::Program& p) { p.layers[1].linear[0].kind = static_cast<OpKind>(9); });
  add([](circuits::Program& p) { p.layers[0].ands[0].out = 4; });                    // AND writes out of range
  add([](circuits::Program& p) {  // output never written
    p.layers[0].ands[0].out = 3;
    p.layers[1].linear.clear();
    p.output_slots = {2};
  });
  std::mt19937_64 rng(26);
  for (std::size_t b = 0; b < bad.size(); ++b) {
    EXPECT_THROW((void)detail::build_device_plan(bad[b]), FormatError) << "case " << b;
    const std::size_t n = 64;
    const auto inputs = rss3::share_matrix(rss3::testing::random_words(rng, 2), 2, n);
    EXPECT_ANY_THROW((void)test::run_cpu_reference(bad[b], inputs, {1, 1}, test::random_keys(rng))) << "case " << b;
  }
  EXPECT_NO_THROW((void)detail::build_device_plan(base()));
  circuits::Program empty;
  EXPECT_NO_THROW((void)detail::build_device_plan(empty));
}

}  // namespace
}  // namespace mpc::cuda
