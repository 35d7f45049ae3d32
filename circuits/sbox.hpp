// AES S-box and inverse S-box as gates appended to a builder. Bytes are arrays of
// eight wires, bit 0 = least significant bit. Both directions use the same number
// of AND gates and the same AND-depth as the chosen variant.
#pragma once

#include <array>
#include <cstdint>

#include "circuits/aes_options.hpp"
#include "circuits/builder.hpp"

namespace mpc::circuits {

using ByteWires = std::array<std::uint32_t, 8>;

ByteWires add_sbox(CircuitBuilder& builder, const ByteWires& in, SboxVariant variant);
ByteWires add_inverse_sbox(CircuitBuilder& builder, const ByteWires& in, SboxVariant variant);

}  // namespace mpc::circuits
