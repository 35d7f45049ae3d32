// AES S-box and inverse S-box (FIPS-197 sections 5.1.1 and 5.3.2) from the
// Boyar-Peralta circuits.
//
// S(x) = A(x^-1) ^ 0x63 with A the affine map's linear part. The published circuits
// compute A(x^-1) (plus the constant), so the inverse S-box reuses them unchanged:
//   InvS(y) = (A^-1(y ^ 0x63))^-1 = A^-1( A( (A^-1(y) ^ 0x05)^-1 ) ),
// since A^-1(0x63) = 0x05. The maps A^-1 are XOR networks and the constant is two INV
// gates, all free in MPC, so both directions cost the same ANDs at the same depth.
#include "circuits/sbox.hpp"

#include "circuits/sbox_internal.hpp"
#include "common/error.hpp"

namespace mpc::circuits {
namespace {

ByteWires add_core(CircuitBuilder& builder, const ByteWires& in, SboxVariant variant, bool add_affine_constant) {
  switch (variant) {
    case SboxVariant::And32: return detail::add_boyar_peralta_113(builder, in, add_affine_constant);
    case SboxVariant::Depth4: return detail::add_boyar_peralta_depth16(builder, in, add_affine_constant);
  }
  throw FormatError(Component::Circuit, "unknown S-box variant");
}

// Linear part of the inverse affine map: bit i of A^-1(x) is x[i+2] ^ x[i+5] ^ x[i+7]
// (indices mod 8), 16 XORs.
ByteWires add_inverse_affine_linear(CircuitBuilder& builder, const ByteWires& in) {
  ByteWires out{};
  for (std::size_t bit = 0; bit < 8; ++bit) {
    const std::uint32_t pair = builder.xor_(in[(bit + 2) % 8], in[(bit + 5) % 8]);
    out[bit] = builder.xor_(pair, in[(bit + 7) % 8]);
  }
  return out;
}

}  // namespace

ByteWires add_sbox(CircuitBuilder& builder, const ByteWires& in, SboxVariant variant) {
  return add_core(builder, in, variant, true);
}

ByteWires add_inverse_sbox(CircuitBuilder& builder, const ByteWires& in, SboxVariant variant) {
  ByteWires field_input = add_inverse_affine_linear(builder, in);
  constexpr unsigned kInverseAffineConstant = 0x05;  // A^-1(0x63)
  for (std::size_t bit = 0; bit < 8; ++bit) {
    if ((kInverseAffineConstant >> bit) & 1U) field_input[bit] = builder.inv(field_input[bit]);
  }
  const ByteWires affine_of_inverse = add_core(builder, field_input, variant, false);
  return add_inverse_affine_linear(builder, affine_of_inverse);
}

}  // namespace mpc::circuits
