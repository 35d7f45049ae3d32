#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "circuits/bristol.hpp"
#include "circuits/builder.hpp"
#include "circuits/catalogue.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/stats.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

std::string to_bristol(const Circuit& circuit) {
  std::ostringstream out;
  write_bristol(circuit, out);
  return out.str();
}

bool same_gates(const Circuit& a, const Circuit& b) {
  if (a.num_wires != b.num_wires || a.input_widths != b.input_widths || a.output_widths != b.output_widths ||
      a.gates.size() != b.gates.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.gates.size(); ++i) {
    const Gate& x = a.gates[i];
    const Gate& y = b.gates[i];
    const bool binary = x.kind == GateKind::Xor || x.kind == GateKind::And;
    if (x.kind != y.kind || x.in0 != y.in0 || x.out != y.out || (binary && x.in1 != y.in1)) return false;
  }
  return true;
}

void expect_round_trip(const Circuit& circuit) {
  const Circuit back = parse_bristol(to_bristol(circuit));
  EXPECT_TRUE(same_gates(circuit, back));
  EXPECT_EQ(format_stats(compute_stats(circuit)), format_stats(compute_stats(back)));
  std::mt19937_64 rng(9);
  std::vector<std::uint64_t> inputs(circuit.total_inputs());
  for (auto& word : inputs) word = rng();
  EXPECT_EQ(evaluate_packed(circuit, inputs), evaluate_packed(back, inputs));
}

TEST(Bristol, RoundTripCatalogue) {
  for (const char* name : {"aes128-enc-and32", "aes256-dec-depth4", "aes128-keyexp-and32", "gt64"}) {
    SCOPED_TRACE(name);
    expect_round_trip(build_named_circuit(name));
  }
}

TEST(Bristol, RoundTripConstantsAndCopies) {
  CircuitBuilder builder;
  const auto a = builder.add_input_group(2);
  const auto b = builder.add_input_group(1);
  const std::uint32_t one = builder.constant(true);
  const std::uint32_t mixed = builder.xor_(builder.and_(a[0], one), builder.inv(b[0]));
  expect_round_trip(builder.finish({{mixed, a[1], mixed}, {builder.constant(false)}}));
}

TEST(Bristol, StreamAndFileReadersAgreeWithText) {
  const Circuit circuit = build_named_circuit("gt64");
  const std::string text = to_bristol(circuit);
  std::istringstream stream(text);
  EXPECT_TRUE(same_gates(read_bristol(stream), circuit));

  const auto path = std::filesystem::temp_directory_path() / ("mpc_circuits_test_" + std::to_string(::getpid()) + ".txt");
  {
    std::ofstream file(path);
    file << text;
  }
  EXPECT_TRUE(same_gates(read_bristol_file(path), circuit));
  std::filesystem::remove(path);
  EXPECT_THROW(read_bristol_file(path), FormatError);
}

TEST(Bristol, AcceptsPublishedLayoutQuirks) {
  // Trailing spaces, CRLF line ends, trailing blank lines, no final newline on the last gate.
  const Circuit circuit = parse_bristol("2 4 \r\n2 1 1 \r\n1 1\r\n\r\n2 1 0 1 2 AND\r\n1 1 2 3 INV");
  EXPECT_EQ(circuit.gates.size(), 2U);
  EXPECT_EQ(evaluate(circuit, {1, 1}), (std::vector<std::uint8_t>{0}));
  EXPECT_NO_THROW(parse_bristol("1 3\n1 2\n1 1\n\n2 1 0 1 2 XOR\n\n\n"));
}

TEST(Bristol, ExpandsMand) {
  const Circuit circuit = parse_bristol("1 6\n1 2\n1 2\n\n4 2 0 0 1 0 4 5 MAND\n");
  ASSERT_EQ(circuit.gates.size(), 2U);
  EXPECT_EQ(circuit.gates[0].kind, GateKind::And);
  EXPECT_EQ(evaluate(circuit, {1, 1}), (std::vector<std::uint8_t>{1, 1}));
  EXPECT_EQ(evaluate(circuit, {1, 0}), (std::vector<std::uint8_t>{0, 1}));
  EXPECT_EQ(evaluate(circuit, {0, 1}), (std::vector<std::uint8_t>{0, 0}));
}

TEST(Bristol, ConstantsAndCopies) {
  const Circuit circuit = parse_bristol("3 4\n1 1\n1 2\n\n1 1 1 1 EQ\n1 1 0 2 EQW\n2 1 1 2 3 XOR\n");
  EXPECT_EQ(evaluate(circuit, {0}), (std::vector<std::uint8_t>{0, 1}));
  EXPECT_EQ(evaluate(circuit, {1}), (std::vector<std::uint8_t>{1, 0}));
}

TEST(Bristol, RejectsMalformedFiles) {
  const char* const header = "1 3\n1 2\n1 1\n\n";
  const std::pair<const char*, std::string> cases[] = {
      {"empty", ""},
      {"only blank lines", "\n\n  \n"},
      {"truncated header", "1"},
      {"truncated before gates", "1 3\n1 2\n1 1\n"},
      {"truncated gate list", "2 4\n1 2\n1 1\n\n2 1 0 1 2 XOR\n"},
      {"truncated gate line", std::string(header) + "2 1 0 1 XOR\n"},
      {"extra gate line", std::string(header) + "2 1 0 1 2 XOR\n2 1 0 1 2 XOR\n"},
      {"extra token in header", "1 3 7\n1 2\n1 1\n\n2 1 0 1 2 XOR\n"},
      {"group count mismatch", "1 3\n2 2\n1 1\n\n2 1 0 1 2 XOR\n"},
      {"zero-width group", "1 3\n2 2 0\n1 1\n\n2 1 0 1 2 XOR\n"},
      {"inputs exceed wires", "1 3\n2 2 2\n1 1\n\n2 1 0 1 2 XOR\n"},
      {"outputs exceed wires", "1 3\n1 2\n1 4\n\n2 1 0 1 2 XOR\n"},
      {"negative number", "1 3\n1 2\n1 1\n\n2 1 -0 1 2 XOR\n"},
      {"signed number", "1 3\n1 +2\n1 1\n\n2 1 0 1 2 XOR\n"},
      {"hex number", "1 3\n1 2\n1 1\n\n2 1 0x0 1 2 XOR\n"},
      {"number overflow", "1 3\n1 2\n1 1\n\n2 1 4294967296 1 2 XOR\n"},
      {"garbage token", "1 3\n1 2\n1 1\n\n2 1 0 1a 2 XOR\n"},
      {"index out of range", std::string(header) + "2 1 0 3 2 XOR\n"},
      {"output index out of range", std::string(header) + "2 1 0 1 3 XOR\n"},
      {"use before definition", "2 4\n1 2\n1 1\n\n2 1 0 3 2 XOR\n2 1 0 1 3 XOR\n"},
      {"duplicate definition", "2 4\n1 2\n1 1\n\n2 1 0 1 3 XOR\n2 1 0 1 3 AND\n"},
      {"defines an input", std::string(header) + "2 1 0 1 1 XOR\n"},
      {"output never defined", "1 4\n1 2\n1 1\n\n2 1 0 1 2 XOR\n"},
      {"unknown gate", std::string(header) + "2 1 0 1 2 NAND\n"},
      {"lower-case gate", std::string(header) + "2 1 0 1 2 xor\n"},
      {"wrong arity for XOR", std::string(header) + "1 1 0 2 XOR\n"},
      {"wrong arity for INV", std::string(header) + "2 1 0 1 2 INV\n"},
      {"EQ constant not a bit", std::string(header) + "1 1 2 2 EQ\n"},
      {"MAND arity mismatch", "1 4\n1 2\n1 2\n\n3 2 0 1 0 2 3 MAND\n"},
      {"gate count word", std::string(header) + "two 1 0 1 2 XOR\n"},
      {"NUL byte in token", std::string(header) + std::string("2 1 0 1 2 XO\0R\n", 16)},
      {"zero wires", "0 0\n0\n0\n\n"},
  };
  for (const auto& [name, text] : cases) {
    EXPECT_THROW(parse_bristol(text), FormatError) << name;
  }
}

TEST(Bristol, RejectsHugeCountsFast) {
  const auto start = std::chrono::steady_clock::now();
  const std::string cases[] = {
      "4294967295 4294967295\n1 1\n1 1\n\n",
      "67108865 100\n1 1\n1 1\n\n",
      "100 67108865\n1 1\n1 1\n\n",
      "1 10\n65537 1\n1 1\n\n",
      // Maximal header accepted, but the announced gates never come.
      "67108864 67108864\n1 33554432\n1 33554432\n\n2 1 0 1 33554432 XOR\n",
      "1 10\n1 5\n1 1\n\n4294967295 1 0 1 2 MAND\n",
      "1 10\n1 5\n1 1\n\n200000 100000 0 MAND\n",
  };
  for (const std::string& text : cases) EXPECT_THROW(parse_bristol(text), FormatError) << text.substr(0, 40);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), 2000);
}

TEST(Bristol, RejectsOverlongStreamLine) {
  std::istringstream stream(std::string(5U << 20, '1'));
  EXPECT_THROW(read_bristol(stream), FormatError);
}

TEST(Bristol, WriterRefusesInvalidCircuit) {
  Circuit broken{3, {2}, {1}, {{GateKind::Xor, 0, 2, 2}}};
  std::ostringstream out;
  EXPECT_THROW(write_bristol(broken, out), FormatError);
}

}  // namespace
}  // namespace mpc::circuits
