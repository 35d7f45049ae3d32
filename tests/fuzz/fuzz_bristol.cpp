// libFuzzer target for the Bristol Fashion reader, the one parser in circuits/ that
// sees untrusted input. Every input must either parse into a circuit that validates,
// compiles into a valid program, evaluates identically both ways and survives a
// write/read round trip, or be rejected with FormatError; anything else (a crash, a
// sanitizer report, another exception, a disagreement) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string_view>
#include <vector>

#include "circuits/bristol.hpp"
#include "circuits/evaluate.hpp"
#include "circuits/program.hpp"
#include "circuits/stats.hpp"
#include "common/error.hpp"

namespace {

// Keeps each run fast; the parser itself is exercised at every size.
constexpr std::size_t kMaxEvaluatedWires = 1U << 16;

void check(bool condition) {
  if (!condition) std::abort();
}

void exercise(const mpc::circuits::Circuit& circuit, const std::uint8_t* data, std::size_t size) {
  using namespace mpc::circuits;
  validate(circuit);
  (void)format_stats(compute_stats(circuit));
  if (circuit.num_wires > kMaxEvaluatedWires) return;

  const Program program = compile(circuit);
  validate(program);
  std::vector<std::uint64_t> inputs(circuit.total_inputs());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    inputs[i] = 0x9e3779b97f4a7c15ULL * (i + 1) ^ (size == 0 ? 0 : data[i % size]);
  }
  const auto expected = evaluate_packed(circuit, inputs);
  check(evaluate_program_packed(program, inputs) == expected);

  std::ostringstream text;
  write_bristol(circuit, text);
  const Circuit again = parse_bristol(text.str());
  check(evaluate_packed(again, inputs) == expected);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  mpc::circuits::Circuit circuit;
  try {
    circuit = mpc::circuits::parse_bristol(text);
  } catch (const mpc::FormatError&) {
    return 0;
  }
  exercise(circuit, data, size);
  return 0;
}
