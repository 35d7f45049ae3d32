// A circuit whose inputs are drawn from another set of inputs: C' takes input groups of its own,
// and each input of C is one of them, or the XOR of two (a secret held as two XOR shares, one
// per party of a two-party computation). XOR gates only, one per shared input; inputs of C'
// that no input of C draws on are read by no gate.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "circuits/circuit.hpp"

namespace mpc::circuits {

struct InputSource {
  std::uint32_t first = 0;               // an input of C'
  std::optional<std::uint32_t> second;   // XORed in when present
};

// `sources` has one entry per input of C, naming inputs of C' (whose groups are
// `input_widths`). Throws FormatError(Circuit) for a source past C''s inputs or the wrong count.
Circuit with_input_wiring(const Circuit& circuit, std::vector<std::uint32_t> input_widths,
                          std::span<const InputSource> sources);

}  // namespace mpc::circuits
