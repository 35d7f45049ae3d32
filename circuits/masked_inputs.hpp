// A circuit that takes some of its inputs masked: C' reads `mask` extra input rows, placed
// right after the first `after` inputs of C, and XORs them into C's inputs
// [after + offset, after + offset + mask) before C uses them. So C'(k, r, d ^ r) = C(k, d) for
// the masked slice of d, and a protocol that holds r as a secret and d ^ r in clear computes
// C on a d nobody holds. XOR gates only: no AND gate and no AND layer more.
#pragma once

#include <cstdint>

#include "circuits/circuit.hpp"

namespace mpc::circuits {

// Throws FormatError(Circuit) unless `after` ends an input group of C and the masked slice
// lies within C's inputs after it. mask == 0 returns C unchanged.
Circuit with_masked_inputs(const Circuit& circuit, std::uint32_t after, std::uint32_t offset, std::uint32_t mask);

}  // namespace mpc::circuits
