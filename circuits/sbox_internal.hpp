// The two published S-box circuits, split at the point the inverse S-box needs:
// each computes A(x^-1) in GF(2^8), and adds the affine constant 0x63 (as the four
// XNORs of the published circuits) only when asked.
#pragma once

#include "circuits/sbox.hpp"

namespace mpc::circuits::detail {

ByteWires add_boyar_peralta_113(CircuitBuilder& builder, const ByteWires& in, bool add_affine_constant);
ByteWires add_boyar_peralta_depth16(CircuitBuilder& builder, const ByteWires& in, bool add_affine_constant);

}  // namespace mpc::circuits::detail
