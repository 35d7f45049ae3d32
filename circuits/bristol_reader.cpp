// Bristol Fashion reader. Untrusted input: the header's counts are capped before any
// allocation depends on them, each gate line must have exactly the tokens its counts
// announce, and wires are checked for range, use before definition and redefinition
// on the line where they appear.
#include <algorithm>
#include <charconv>
#include <fstream>
#include <istream>
#include <limits>
#include <string>
#include <vector>

#include "circuits/bristol.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

constexpr std::size_t kMaxLineBytes = 4U << 20;
constexpr std::uint32_t kMaxMandWidth = 1U << 16;
constexpr std::size_t kMaxReserve = 1U << 20;

// Yields lines without their terminator; false at end of input.
class LineSource {
 public:
  virtual ~LineSource() = default;
  virtual bool next(std::string_view& line) = 0;
};

class TextLines final : public LineSource {
 public:
  explicit TextLines(std::string_view text) : rest_(text) {}
  bool next(std::string_view& line) override {
    if (done_) return false;
    const std::size_t end = rest_.find('\n');
    if (end == std::string_view::npos) {
      line = rest_;
      done_ = true;
      return true;
    }
    line = rest_.substr(0, end);
    rest_.remove_prefix(end + 1);
    return true;
  }

 private:
  std::string_view rest_;
  bool done_ = false;
};

class StreamLines final : public LineSource {
 public:
  explicit StreamLines(std::istream& in) : buffer_(in.rdbuf()) {
    if (buffer_ == nullptr || !in.good()) throw FormatError(Component::Circuit, "bristol: unreadable stream");
  }
  bool next(std::string_view& line) override {
    if (done_) return false;
    line_.clear();
    for (;;) {
      const int c = buffer_->sbumpc();
      if (c == std::char_traits<char>::eof()) {
        done_ = true;
        break;
      }
      if (c == '\n') break;
      if (line_.size() == kMaxLineBytes) throw FormatError(Component::Circuit, "bristol: line too long");
      line_.push_back(static_cast<char>(c));
    }
    line = line_;
    return true;
  }

 private:
  std::streambuf* buffer_;
  std::string line_;
  bool done_ = false;
};

class Parser {
 public:
  explicit Parser(LineSource& lines) : lines_(lines) {}

  Circuit parse() {
    next_content_line("header");
    expect_token_count(2, "header");
    const std::uint32_t num_gates = number(0, kMaxBristolGates, "gate count");
    circuit_.num_wires = number(1, kMaxBristolWires, "wire count");

    next_content_line("input groups");
    circuit_.input_widths = groups("input");
    next_content_line("output groups");
    circuit_.output_widths = groups("output");

    const std::uint32_t inputs = circuit_.total_inputs();
    if (circuit_.total_outputs() > circuit_.num_wires) fail("more output wires than wires");
    defined_.assign(circuit_.num_wires, false);
    std::fill(defined_.begin(), defined_.begin() + inputs, true);

    circuit_.gates.reserve(std::min<std::size_t>(num_gates, kMaxReserve));
    for (std::uint32_t gate = 0; gate < num_gates; ++gate) {
      next_content_line("gate");
      parse_gate();
    }
    std::string_view line;
    while (lines_.next(line)) {
      ++line_number_;
      tokenize(line);
      if (!tokens_.empty()) fail("content after the announced " + std::to_string(num_gates) + " gates");
    }
    validate(circuit_);
    return std::move(circuit_);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw FormatError(Component::Circuit, "bristol line " + std::to_string(line_number_) + ": " + message);
  }

  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

  void tokenize(std::string_view line) {
    tokens_.clear();
    std::size_t position = 0;
    while (position < line.size()) {
      while (position < line.size() && is_space(line[position])) ++position;
      const std::size_t start = position;
      while (position < line.size() && !is_space(line[position])) ++position;
      if (position > start) tokens_.push_back(line.substr(start, position - start));
    }
  }

  // Skips blank lines; fails at end of input.
  void next_content_line(const char* what) {
    std::string_view line;
    do {
      if (!lines_.next(line)) fail(std::string("unexpected end of file, expected ") + what);
      ++line_number_;
      tokenize(line);
    } while (tokens_.empty());
    cursor_ = 0;
  }

  void expect_token_count(std::size_t count, const char* what) const {
    if (tokens_.size() != count) {
      fail(std::string(what) + ": expected " + std::to_string(count) + " tokens, found " +
           std::to_string(tokens_.size()));
    }
  }

  // Next token as a decimal number in [minimum, maximum]; digits only.
  std::uint32_t number(std::uint32_t minimum, std::uint32_t maximum, const char* what) {
    if (cursor_ >= tokens_.size()) fail(std::string("missing ") + what);
    const std::string_view token = tokens_[cursor_++];
    std::uint32_t value = 0;
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (token.empty() || token[0] < '0' || token[0] > '9' || error != std::errc() ||
        end != token.data() + token.size()) {
      fail(std::string("bad ") + what + " '" + std::string(token.substr(0, 32)) + "'");
    }
    if (value < minimum || value > maximum) {
      fail(std::string(what) + " " + std::to_string(value) + " outside [" + std::to_string(minimum) + ", " +
           std::to_string(maximum) + "]");
    }
    return value;
  }

  std::vector<std::uint32_t> groups(const char* what) {
    const std::uint32_t count = number(0, kMaxBristolGroups, "group count");
    expect_token_count(std::size_t{count} + 1, what);
    std::vector<std::uint32_t> widths(count);
    std::uint64_t total = 0;
    for (auto& width : widths) {
      width = number(1, circuit_.num_wires, "group width");
      total += width;
      if (total > circuit_.num_wires) fail(std::string(what) + " widths exceed the wire count");
    }
    return widths;
  }

  std::uint32_t read_wire() { return number(0, circuit_.num_wires - 1, "wire index"); }

  void require_defined(std::uint32_t wire) const {
    if (!defined_[wire]) fail("wire " + std::to_string(wire) + " used before it is defined");
  }

  void define(std::uint32_t wire) {
    if (defined_[wire]) fail("wire " + std::to_string(wire) + " defined twice (or is an input)");
    defined_[wire] = true;
  }

  void parse_gate() {
    if (tokens_.size() < 3) fail("gate line too short");
    const std::string_view name = tokens_.back();
    const std::uint32_t inputs = number(1, 2 * kMaxMandWidth, "gate input count");
    const std::uint32_t outputs = number(1, kMaxMandWidth, "gate output count");
    expect_token_count(std::size_t{inputs} + outputs + 3, "gate");

    if (name == "MAND") {
      if (inputs != 2 * outputs) fail("MAND needs twice as many inputs as outputs");
      const std::size_t first = cursor_;
      for (std::uint32_t i = 0; i < outputs; ++i) {
        cursor_ = first + i;
        const std::uint32_t left = read_wire();
        cursor_ = first + outputs + i;
        const std::uint32_t right = read_wire();
        require_defined(left);
        require_defined(right);
        cursor_ = first + 2 * std::size_t{outputs} + i;
        const std::uint32_t out = read_wire();
        define(out);
        circuit_.gates.push_back(Gate{GateKind::And, left, right, out});
      }
      return;
    }

    GateKind kind;
    if (name == "XOR") {
      kind = GateKind::Xor;
    } else if (name == "AND") {
      kind = GateKind::And;
    } else if (name == "INV") {
      kind = GateKind::Inv;
    } else if (name == "EQW") {
      kind = GateKind::Copy;
    } else if (name == "EQ") {
      kind = GateKind::Const;
    } else {
      fail("unknown gate '" + std::string(name.substr(0, 32)) + "'");
    }
    const std::uint32_t expected_inputs = (kind == GateKind::Xor || kind == GateKind::And) ? 2 : 1;
    if (inputs != expected_inputs || outputs != 1) {
      fail(std::string(name) + " needs " + std::to_string(expected_inputs) + " inputs and 1 output");
    }
    Gate gate{kind, 0, 0, 0};
    if (kind == GateKind::Const) {
      gate.in0 = number(0, 1, "EQ constant");
    } else {
      gate.in0 = read_wire();
      require_defined(gate.in0);
      if (expected_inputs == 2) {
        gate.in1 = read_wire();
        require_defined(gate.in1);
      }
    }
    gate.out = read_wire();
    define(gate.out);
    circuit_.gates.push_back(gate);
  }

  LineSource& lines_;
  std::size_t line_number_ = 0;
  std::vector<std::string_view> tokens_;
  std::size_t cursor_ = 0;
  std::vector<bool> defined_;
  Circuit circuit_;
};

}  // namespace

Circuit parse_bristol(std::string_view text) {
  TextLines lines(text);
  return Parser(lines).parse();
}

Circuit read_bristol(std::istream& in) {
  StreamLines lines(in);
  return Parser(lines).parse();
}

Circuit read_bristol_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw FormatError(Component::Circuit, "cannot open circuit file " + path.string());
  return read_bristol(file);
}

}  // namespace mpc::circuits
