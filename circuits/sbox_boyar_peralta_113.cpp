// AES S-box with 32 AND gates and AND-depth 6.
//
// Implements the 113-gate circuit (32 AND, 77 XOR, 4 XNOR) of
//   Joan Boyar, Rene Peralta, "A new combinational logic minimization technique with
//   applications to cryptology", SEA 2010, LNCS 6049 (eprint 2009/191):
// its top linear layer (y1..y21) and non-linear middle (t2..t45, z0..z17), followed by
// the 28-gate bottom linear layer (tc1..tc26, S0..S7) that brought the paper's 115 gates
// down to 113, as published by Boyar, Peralta and Calik in the Circuit Minimization
// Team's straight-line program SLP_AES_113 (cs-www.cs.yale.edu/homes/peralta/CircuitStuff/).
// Both number bits from the most significant one: x0 is bit 7 of the byte and s0 (S0)
// bit 7 of the result.
#include "circuits/sbox_internal.hpp"

namespace mpc::circuits::detail {

ByteWires add_boyar_peralta_113(CircuitBuilder& b, const ByteWires& in, bool add_affine_constant) {
  auto X = [&](std::uint32_t p, std::uint32_t q) { return b.xor_(p, q); };
  auto A = [&](std::uint32_t p, std::uint32_t q) { return b.and_(p, q); };
  // The four XNORs of the paper are exactly the affine constant 0x63 on bits 0, 1, 5, 6.
  auto XN = [&](std::uint32_t p, std::uint32_t q) {
    const std::uint32_t sum = b.xor_(p, q);
    return add_affine_constant ? b.inv(sum) : sum;
  };
  const std::uint32_t x0 = in[7], x1 = in[6], x2 = in[5], x3 = in[4];
  const std::uint32_t x4 = in[3], x5 = in[2], x6 = in[1], x7 = in[0];

  // Top linear layer: 23 XOR.
  const auto y14 = X(x3, x5);
  const auto y13 = X(x0, x6);
  const auto y9 = X(x0, x3);
  const auto y8 = X(x0, x5);
  const auto t0 = X(x1, x2);
  const auto y1 = X(t0, x7);
  const auto y4 = X(y1, x3);
  const auto y12 = X(y13, y14);
  const auto y2 = X(y1, x0);
  const auto y5 = X(y1, x6);
  const auto y3 = X(y5, y8);
  const auto t1 = X(x4, y12);
  const auto y15 = X(t1, x5);
  const auto y20 = X(t1, x1);
  const auto y6 = X(y15, x7);
  const auto y10 = X(y15, t0);
  const auto y11 = X(y20, y9);
  const auto y7 = X(x7, y11);
  const auto y17 = X(y10, y11);
  const auto y19 = X(y10, y8);
  const auto y16 = X(t0, y11);
  const auto y21 = X(y13, y16);
  const auto y18 = X(x0, y16);

  // Non-linear middle: 32 AND, 28 XOR.
  const auto t2 = A(y12, y15);
  const auto t3 = A(y3, y6);
  const auto t4 = X(t3, t2);
  const auto t5 = A(y4, x7);
  const auto t6 = X(t5, t2);
  const auto t7 = A(y13, y16);
  const auto t8 = A(y5, y1);
  const auto t9 = X(t8, t7);
  const auto t10 = A(y2, y7);
  const auto t11 = X(t10, t7);
  const auto t12 = A(y9, y11);
  const auto t13 = A(y14, y17);
  const auto t14 = X(t13, t12);
  const auto t15 = A(y8, y10);
  const auto t16 = X(t15, t12);
  const auto t17 = X(t4, t14);
  const auto t18 = X(t6, t16);
  const auto t19 = X(t9, t14);
  const auto t20 = X(t11, t16);
  const auto t21 = X(t17, y20);
  const auto t22 = X(t18, y19);
  const auto t23 = X(t19, y21);
  const auto t24 = X(t20, y18);
  const auto t25 = X(t21, t22);
  const auto t26 = A(t21, t23);
  const auto t27 = X(t24, t26);
  const auto t28 = A(t25, t27);
  const auto t29 = X(t28, t22);
  const auto t30 = X(t23, t24);
  const auto t31 = X(t22, t26);
  const auto t32 = A(t31, t30);
  const auto t33 = X(t32, t24);
  const auto t34 = X(t23, t33);
  const auto t35 = X(t27, t33);
  const auto t36 = A(t24, t35);
  const auto t37 = X(t36, t34);
  const auto t38 = X(t27, t36);
  const auto t39 = A(t29, t38);
  const auto t40 = X(t25, t39);
  const auto t41 = X(t40, t37);
  const auto t42 = X(t29, t33);
  const auto t43 = X(t29, t40);
  const auto t44 = X(t33, t37);
  const auto t45 = X(t42, t41);
  const auto z0 = A(t44, y15);
  const auto z1 = A(t37, y6);
  const auto z2 = A(t33, x7);
  const auto z3 = A(t43, y16);
  const auto z4 = A(t40, y1);
  const auto z5 = A(t29, y7);
  const auto z6 = A(t42, y11);
  const auto z7 = A(t45, y17);
  const auto z8 = A(t41, y10);
  const auto z9 = A(t44, y12);
  const auto z10 = A(t37, y3);
  const auto z11 = A(t33, y4);
  const auto z12 = A(t43, y13);
  const auto z13 = A(t40, y5);
  const auto z14 = A(t29, y2);
  const auto z15 = A(t42, y9);
  const auto z16 = A(t45, y14);
  const auto z17 = A(t41, y8);

  // Bottom linear layer of SLP_AES_113: 24 XOR, 4 XNOR.
  const auto tc1 = X(z15, z16);
  const auto tc2 = X(z10, tc1);
  const auto tc3 = X(z9, tc2);
  const auto tc4 = X(z0, z2);
  const auto tc5 = X(z1, z0);
  const auto tc6 = X(z3, z4);
  const auto tc7 = X(z12, tc4);
  const auto tc8 = X(z7, tc6);
  const auto tc9 = X(z8, tc7);
  const auto tc10 = X(tc8, tc9);
  const auto tc11 = X(tc6, tc5);
  const auto tc12 = X(z3, z5);
  const auto tc13 = X(z13, tc1);
  const auto tc14 = X(tc4, tc12);
  const auto s3 = X(tc3, tc11);
  const auto tc16 = X(z6, tc8);
  const auto tc17 = X(z14, tc10);
  const auto tc18 = X(tc13, tc14);
  const auto s7 = XN(z12, tc18);
  const auto tc20 = X(z15, tc16);
  const auto tc21 = X(tc2, z11);
  const auto s0 = X(tc3, tc16);
  const auto s6 = XN(tc10, tc18);
  const auto s4 = X(tc14, s3);
  const auto s1 = XN(s3, tc16);
  const auto tc26 = X(tc17, tc20);
  const auto s2 = XN(tc26, z17);
  const auto s5 = X(tc21, tc17);

  return ByteWires{s7, s6, s5, s4, s3, s2, s1, s0};
}

}  // namespace mpc::circuits::detail
