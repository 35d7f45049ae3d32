#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <random>

#include "circuits/aes.hpp"
#include "circuits/builder.hpp"
#include "circuits/catalogue.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/program.hpp"
#include "circuits/stats.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

bool same_program(const Program& a, const Program& b) {
  if (a.num_inputs != b.num_inputs || a.num_outputs != b.num_outputs || a.num_slots != b.num_slots ||
      a.output_slots != b.output_slots || a.and_gates != b.and_gates || a.and_depth != b.and_depth ||
      a.layers.size() != b.layers.size()) {
    return false;
  }
  for (std::size_t l = 0; l < a.layers.size(); ++l) {
    const auto& x = a.layers[l];
    const auto& y = b.layers[l];
    if (x.linear.size() != y.linear.size() || x.ands.size() != y.ands.size()) return false;
    for (std::size_t i = 0; i < x.linear.size(); ++i) {
      if (x.linear[i].kind != y.linear[i].kind || x.linear[i].out != y.linear[i].out ||
          x.linear[i].in0 != y.linear[i].in0 || x.linear[i].in1 != y.linear[i].in1) {
        return false;
      }
    }
    for (std::size_t i = 0; i < x.ands.size(); ++i) {
      if (x.ands[i].out != y.ands[i].out || x.ands[i].in0 != y.ands[i].in0 || x.ands[i].in1 != y.ands[i].in1) {
        return false;
      }
    }
  }
  return true;
}

std::vector<std::uint64_t> random_words(std::mt19937_64& rng, std::size_t count) {
  std::vector<std::uint64_t> words(count);
  for (auto& word : words) word = rng();
  return words;
}

void expect_program_matches_circuit(const Circuit& circuit, std::mt19937_64& rng, int rounds = 4) {
  const Program program = compile(circuit);
  ASSERT_NO_THROW(validate(program));
  for (int i = 0; i < rounds; ++i) {
    const auto inputs = random_words(rng, circuit.total_inputs());
    ASSERT_EQ(evaluate_program_packed(program, inputs), evaluate_packed(circuit, inputs));
  }
}

TEST(Program, CatalogueCircuitsCompileDeterministicallyAndAgree) {
  std::mt19937_64 rng(6);
  for (const std::string& name : catalogue_names()) {
    SCOPED_TRACE(name);
    const Circuit circuit = build_named_circuit(name);
    const Program program = compile(circuit);
    ASSERT_NO_THROW(validate(program));
    EXPECT_TRUE(same_program(program, compile(circuit)));
    const CircuitStats stats = compute_stats(circuit);
    EXPECT_EQ(program.and_gates, stats.and_gates);
    EXPECT_EQ(program.and_depth, stats.and_depth);
    EXPECT_EQ(program.layers.size(), stats.and_depth + 1U);
    EXPECT_EQ(program.num_inputs, circuit.total_inputs());
    EXPECT_EQ(program.num_outputs, circuit.total_outputs());
    expect_program_matches_circuit(circuit, rng, 2);
    std::cout << "[ slots    ] " << name << ": " << program.num_slots << " slots, " << program.and_gates
              << " AND in " << program.and_depth << " layers\n";
  }
}

TEST(Program, Aes128NeedsFewSlots) {
  for (SboxVariant sbox : {SboxVariant::And32, SboxVariant::Depth4}) {
    for (AesDirection direction : {AesDirection::Encrypt, AesDirection::Decrypt}) {
      const Program program = compile(build_aes_circuit(AesKeySize::Aes128, direction, sbox));
      EXPECT_LT(program.num_slots, 1000U);
    }
  }
}

TEST(Program, InputsAreLoadedInTheLayerOfTheirFirstUse) {
  // Round key 10 of AES-128 is first read by the last AddRoundKey, in the last layer.
  const Circuit circuit = build_aes_circuit(AesKeySize::Aes128, AesDirection::Encrypt, SboxVariant::And32);
  const Program program = compile(circuit);
  std::size_t loads = 0;
  for (std::size_t layer = 0; layer < program.layers.size(); ++layer) {
    for (const LinearOp& op : program.layers[layer].linear) {
      if (op.kind != OpKind::LoadInput) continue;
      ++loads;
      const std::size_t round = op.in0 < 11 * 128 ? op.in0 / 128 : 0;
      EXPECT_EQ(layer, round * 6) << "input row " << op.in0;
    }
  }
  EXPECT_EQ(loads, circuit.total_inputs());
}

TEST(Program, EdgeCircuits) {
  std::mt19937_64 rng(7);
  // Identity: the output wire is the input wire.
  expect_program_matches_circuit(Circuit{1, {1}, {1}, {}}, rng);
  // Constant outputs, an unused input, a dead AND, XOR of a wire with itself, a copy.
  Circuit mixed{9, {2, 1}, {4}, {}};
  mixed.gates = {
      {GateKind::And, 0, 1, 3},    // dead
      {GateKind::Const, 1, 0, 4},  // constant 1 feeding a later gate
      {GateKind::Xor, 0, 0, 5},    // always 0
      {GateKind::Const, 0, 0, 6},  // output: constant 0
      {GateKind::And, 0, 4, 7},    // output: input 0
      {GateKind::Copy, 7, 0, 8},   // output: copy
  };
  expect_program_matches_circuit(mixed, rng);
  const Program program = compile(mixed);
  EXPECT_EQ(program.and_gates, 1U);  // the dead AND is dropped
}

TEST(Program, RandomCircuitsAgreeWithCircuitEvaluation) {
  std::mt19937_64 rng(8);
  for (int trial = 0; trial < 300; ++trial) {
    CircuitBuilder builder;
    std::vector<std::uint32_t> wires;
    const std::uint32_t groups = 1 + rng() % 3;
    for (std::uint32_t g = 0; g < groups; ++g) {
      for (std::uint32_t wire : builder.add_input_group(1 + rng() % 8)) wires.push_back(wire);
    }
    const int gates = 1 + static_cast<int>(rng() % 200);
    for (int i = 0; i < gates; ++i) {
      const std::uint32_t a = wires[rng() % wires.size()];
      const std::uint32_t b = wires[rng() % wires.size()];
      switch (rng() % 8) {
        case 0:
        case 1:
        case 2: wires.push_back(builder.and_(a, b)); break;
        case 3:
        case 4:
        case 5: wires.push_back(builder.xor_(a, b)); break;
        case 6: wires.push_back(builder.inv(a)); break;
        default: wires.push_back(builder.constant(rng() % 2 == 1)); break;
      }
    }
    std::vector<std::vector<std::uint32_t>> outputs(1 + rng() % 3);
    for (auto& group : outputs) {
      const std::size_t width = 1 + rng() % 6;
      for (std::size_t i = 0; i < width; ++i) group.push_back(wires[rng() % wires.size()]);
    }
    expect_program_matches_circuit(builder.finish(outputs), rng, 2);
  }
}

// A valid two-layer program to break in the negative tests:
// layer 0: s0 = in0, s1 = in1, s2 = s0 & s1; layer 1: s3 = !s2, output s3.
Program small_program() {
  Program program;
  program.num_inputs = 2;
  program.num_outputs = 1;
  program.num_slots = 4;
  program.layers.resize(2);
  program.layers[0].linear = {{OpKind::LoadInput, 0, 0, 0}, {OpKind::LoadInput, 1, 1, 0}};
  program.layers[0].ands = {{2, 0, 1}};
  program.layers[1].linear = {{OpKind::Inv, 3, 2, 0}};
  program.output_slots = {3};
  program.and_gates = 1;
  program.and_depth = 1;
  return program;
}

TEST(ProgramValidate, AcceptsSmallProgram) {
  EXPECT_NO_THROW(validate(small_program()));
  EXPECT_EQ(evaluate_program_packed(small_program(), {0b1100, 0b1010}), (std::vector<std::uint64_t>{~0b1000ULL}));
}

TEST(ProgramValidate, RejectsBrokenPrograms) {
  std::vector<std::pair<const char*, std::function<void(Program&)>>> breakages = {
      {"no layers", [](Program& p) { p.layers.clear(); }},
      {"slot out of range", [](Program& p) { p.layers[1].linear[0].out = 4; }},
      {"read out of range", [](Program& p) { p.layers[1].linear[0].in0 = 9; }},
      {"read before write", [](Program& p) { p.layers[0].ands[0].in1 = 3; }},
      {"AND writes a slot read in its layer", [](Program& p) { p.layers[0].ands[0].out = 0; }},
      {"AND writes a slot a linear op reads",
       [](Program& p) {
         p.layers[0].linear.push_back({OpKind::LoadInput, 3, 0, 0});
         p.layers[0].linear.push_back({OpKind::Inv, 3, 3, 0});
         p.layers[0].ands[0].out = 3;
         p.layers[1].linear[0].in0 = 3;
       }},
      {"two ANDs write one slot", [](Program& p) { p.layers[0].ands.push_back({2, 0, 0}); }},
      {"final layer with ANDs", [](Program& p) { p.layers[1].ands.push_back({3, 2, 2}); }},
      {"middle layer without ANDs", [](Program& p) { p.layers.insert(p.layers.begin() + 1, Layer{}); }},
      {"wrong AND count", [](Program& p) { p.and_gates = 2; }},
      {"wrong AND depth", [](Program& p) { p.and_depth = 2; }},
      {"input row out of range", [](Program& p) { p.layers[0].linear[1].in0 = 2; }},
      {"constant other than 0/1", [](Program& p) { p.layers[1].linear.push_back({OpKind::Const, 0, 2, 0}); }},
      {"unknown op", [](Program& p) { p.layers[1].linear[0].kind = static_cast<OpKind>(77); }},
      {"output count", [](Program& p) { p.num_outputs = 2; }},
      {"output never written", [](Program& p) { p.output_slots = {3 + 1}; }},
      {"more slots than writes", [](Program& p) { p.num_slots = 0xffffffffU; }},
  };
  for (const auto& [name, breakage] : breakages) {
    Program program = small_program();
    breakage(program);
    EXPECT_THROW(validate(program), FormatError) << name;
  }
}

TEST(ProgramCompile, RejectsInvalidCircuit) {
  Circuit broken{3, {2}, {1}, {{GateKind::Xor, 0, 2, 2}}};
  EXPECT_THROW(compile(broken), FormatError);
}

}  // namespace
}  // namespace mpc::circuits
