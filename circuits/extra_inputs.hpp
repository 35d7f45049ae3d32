// A circuit with more input groups than it reads: the groups are appended after its own (their
// wires follow its inputs, the rest of its wires move past them) and no gate reads them. A
// protocol uses them for inputs it checks apart from the circuit, or joins them in with gates
// of its own after the circuit's (the outputs stay the last wires only if it adds none).
#pragma once

#include <cstdint>
#include <span>

#include "circuits/circuit.hpp"

namespace mpc::circuits {

// Throws FormatError(Circuit) if `circuit` is not valid.
Circuit with_extra_inputs(const Circuit& circuit, std::span<const std::uint32_t> widths);

}  // namespace mpc::circuits
