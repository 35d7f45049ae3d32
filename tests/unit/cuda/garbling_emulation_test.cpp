// tests/unit/cuda/garbling_emulation_test.cpp: the GPU half-gates garbler's algorithm
// emulated on the CPU (emulated_garbling.hpp) against the CPU garbler of gc2: the same
// tables byte for byte, the same decoding bits and output zero labels, and as evaluator
// the same colour bits and active labels, for random programs and AES-128, batch sizes
// with partial tiles of 32, and chunks that split the batch; input labels staged through
// slots smaller than a chunk's row (the garbler) and larger than a chunk (the evaluator).
// Plus the plan's checks.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "circuits/aes.hpp"
#include "common/error.hpp"
#include "cuda/garble_plan.hpp"
#include "emulated_garbling.hpp"
#include "protocol/gc2/half_gates.hpp"
#include "support/random_program.hpp"
#include "protocol/two_party/buffer_channel.hpp"

namespace mpc::cuda {
namespace {

using two_party::Block;

constexpr std::size_t kHeader = 8 + sizeof(Block);

struct Stream {
  std::uint64_t number = 0;
  detail::Label constant{};
  std::vector<detail::Label> tables;
};

Stream parse(const std::vector<std::uint8_t>& bytes) {
  Stream s;
  EXPECT_GE(bytes.size(), kHeader);
  if (bytes.size() < kHeader) return s;
  for (int i = 0; i < 8; ++i) s.number |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  std::memcpy(&s.constant, bytes.data() + 8, sizeof s.constant);
  s.tables.resize((bytes.size() - kHeader) / sizeof(detail::Label));
  std::memcpy(s.tables.data(), bytes.data() + kHeader, s.tables.size() * sizeof(detail::Label));
  return s;
}

bool same(const detail::Label& a, const detail::Label& b) { return a.lo == b.lo && a.hi == b.hi; }

std::size_t label_mismatches(const std::vector<detail::Label>& got, std::span<const Block> want) {
  if (got.size() != want.size()) return std::max(got.size(), want.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) bad += !same(got[i], test::to_label(want[i]));
  return bad;
}

std::size_t label_mismatches(const std::vector<detail::Label>& got, const std::vector<detail::Label>& want) {
  if (got.size() != want.size()) return std::max(got.size(), want.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) bad += !same(got[i], want[i]);
  return bad;
}

// Garbles with the CPU garbler, then garbles and evaluates the same with the emulation.
void check_program(const circuits::Program& program, std::uint64_t n, std::uint64_t chunk, std::mt19937_64& rng,
                   const std::string& what) {
  SCOPED_TRACE(what + ", n = " + std::to_string(n) + ", chunk = " + std::to_string(chunk));
  Block delta{rng(), rng()};
  delta.lo |= 1;
  gc2::Garbler cpu(delta, gc2::Kernel::Portable);
  (void)cpu.draw_garbling_number();  // a garbling number other than 0: the tweaks' high half matters
  const gc2::Labels zero = gc2::zero_labels(std::size_t{program.num_inputs} * n);
  two_party::RecordingChannel recording;
  gc2::Labels cpu_zero_out;
  const std::vector<std::uint8_t> decoding = cpu.garble(program, n, zero, recording, cpu_zero_out);
  const std::vector<std::uint8_t> bytes = recording.take();
  ASSERT_EQ(bytes.size(), gc2::garbled_bytes(program, n));
  const Stream stream = parse(bytes);
  EXPECT_EQ(stream.number, 1u);

  const detail::GarblePlan plan = detail::build_garble_plan(program);
  const auto garbled = test::emulate_garbling(plan, n, zero.span(), test::to_label(delta), stream.constant,
                                              stream.number, true, {}, chunk);
  EXPECT_EQ(label_mismatches(garbled.tables, stream.tables), 0u) << "tables";
  EXPECT_EQ(garbled.bits, decoding) << "decoding bits";
  EXPECT_EQ(label_mismatches(garbled.labels, cpu_zero_out.span()), 0u) << "output zero labels";

  // The evaluator's side, on random input values.
  std::vector<std::uint8_t> values(zero.size());
  for (auto& v : values) v = static_cast<std::uint8_t>(rng() & 1);
  const gc2::Labels active = gc2::garbler_input_labels(cpu, values, zero);
  two_party::ReplayChannel replay(bytes);
  gc2::Labels cpu_active_out;
  const std::vector<std::uint8_t> colours = gc2::evaluate(program, n, active, replay, cpu_active_out,
                                                          gc2::Kernel::Portable);
  const auto evaluated =
      test::emulate_garbling(plan, n, active.span(), detail::Label{0, 0}, stream.constant, stream.number, false,
                             stream.tables, chunk, 1, 1, std::uint64_t{1} << 20);
  EXPECT_EQ(evaluated.bits, colours) << "colour bits";
  EXPECT_EQ(label_mismatches(evaluated.labels, cpu_active_out.span()), 0u) << "active output labels";
}

TEST(GarblingEmulation, RandomProgramsMatchTheCpuGarbler) {
  std::mt19937_64 rng(51);
  std::vector<rss3::testing::RandomProgramShape> shapes(3);
  shapes[1].unusual_percent = 60;  // constants, inversions, copies, in-place ops
  shapes[2].ands_per_layer = 40;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    const circuits::Program program = rss3::testing::random_program(rng, shapes[s]);
    for (std::uint64_t n : {1u, 31u, 32u, 33u, 100u})
      for (std::uint64_t chunk : {32u, 64u, 4096u}) check_program(program, n, chunk, rng, "shape " + std::to_string(s));
  }
}

TEST(GarblingEmulation, AesMatchesTheCpuGarbler) {
  std::mt19937_64 rng(52);
  const circuits::Program program = circuits::compile(circuits::build_aes_circuit(
      circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt, circuits::SboxVariant::And32));
  check_program(program, 3, 4096, rng, "AES-128");
  check_program(program, 45, 32, rng, "AES-128");
}

TEST(GarblingEmulation, PlanRefusesBadPrograms) {
  std::mt19937_64 rng(53);
  const circuits::Program good = rss3::testing::random_program(rng, rss3::testing::RandomProgramShape{});
  EXPECT_NO_THROW((void)detail::build_garble_plan(good));
  auto refused = [&](auto mutate) {
    circuits::Program p = good;
    mutate(p);
    EXPECT_THROW((void)detail::build_garble_plan(p), Error);
  };
  refused([](circuits::Program& p) { p.and_gates += 1; });
  refused([](circuits::Program& p) { p.output_slots.push_back(0); });
  refused([](circuits::Program& p) { p.output_slots[0] = p.num_slots; });
  refused([](circuits::Program& p) { p.layers[0].ands[0].in1 = p.num_slots + 3; });
  refused([](circuits::Program& p) {
    for (auto& op : p.layers[0].linear)
      if (op.kind == circuits::OpKind::LoadInput) op.in0 = p.num_inputs;
  });
}

// The layout of one chunk: every region 256-byte aligned, in order, none overlapping.
TEST(GarblingEmulation, ChunkLayoutHoldsEverything) {
  std::mt19937_64 rng(54);
  const detail::GarblePlan plan =
      detail::build_garble_plan(rss3::testing::random_program(rng, rss3::testing::RandomProgramShape{}));
  const detail::GarbleLayout layout = detail::garble_layout(plan, 4096);
  const std::size_t label = 16;
  EXPECT_EQ(layout.slots, 0u);
  EXPECT_GE(layout.inputs, layout.slots + plan.num_slots * 4096 * label);
  EXPECT_GE(layout.tables, layout.inputs + plan.num_inputs * 4096 * label);
  EXPECT_GE(layout.bits, layout.tables + 2 * plan.and_gates * 4096 * label);
  EXPECT_GE(layout.labels, layout.bits + plan.num_outputs * 4096);
  EXPECT_GE(layout.total, layout.labels + plan.num_outputs * 4096 * label);
  for (std::size_t offset : {layout.inputs, layout.tables, layout.bits, layout.labels}) EXPECT_EQ(offset % 256, 0u);
  EXPECT_THROW((void)detail::garble_layout(plan, std::uint64_t{1} << 62), Error);
}

}  // namespace
}  // namespace mpc::cuda
