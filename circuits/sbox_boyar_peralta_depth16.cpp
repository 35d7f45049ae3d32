// AES S-box with 34 AND gates and AND-depth 4.
//
// Implements the 128-gate, depth-16 circuit (34 AND, 90 XOR, 4 XNOR) of
//   Joan Boyar, Rene Peralta, "A depth-16 circuit for the AES S-box", IFIP SEC 2012,
//   AICT 376 (eprint 2011/332),
// with its top linear layer (T1..T27), shared non-linear middle (M1..M63) and bottom
// linear layer (L0..L29, S0..S7). The paper numbers bits from the most significant one:
// U0 is bit 7 of the byte and S0 bit 7 of the result.
#include "circuits/sbox_internal.hpp"

namespace mpc::circuits::detail {

ByteWires add_boyar_peralta_depth16(CircuitBuilder& b, const ByteWires& in, bool add_affine_constant) {
  auto X = [&](std::uint32_t p, std::uint32_t q) { return b.xor_(p, q); };
  auto A = [&](std::uint32_t p, std::uint32_t q) { return b.and_(p, q); };
  // The four XNORs of the paper are exactly the affine constant 0x63 on bits 0, 1, 5, 6.
  auto XN = [&](std::uint32_t p, std::uint32_t q) {
    const std::uint32_t sum = b.xor_(p, q);
    return add_affine_constant ? b.inv(sum) : sum;
  };
  const std::uint32_t U0 = in[7], U1 = in[6], U2 = in[5], U3 = in[4];
  const std::uint32_t U4 = in[3], U5 = in[2], U6 = in[1], U7 = in[0];

  // Top linear layer: 27 XOR.
  const auto T1 = X(U0, U3);
  const auto T2 = X(U0, U5);
  const auto T3 = X(U0, U6);
  const auto T4 = X(U3, U5);
  const auto T5 = X(U4, U6);
  const auto T6 = X(T1, T5);
  const auto T7 = X(U1, U2);
  const auto T8 = X(U7, T6);
  const auto T9 = X(U7, T7);
  const auto T10 = X(T6, T7);
  const auto T11 = X(U1, U5);
  const auto T12 = X(U2, U5);
  const auto T13 = X(T3, T4);
  const auto T14 = X(T6, T11);
  const auto T15 = X(T5, T11);
  const auto T16 = X(T5, T12);
  const auto T17 = X(T9, T16);
  const auto T18 = X(U3, U7);
  const auto T19 = X(T7, T18);
  const auto T20 = X(T1, T19);
  const auto T21 = X(U6, U7);
  const auto T22 = X(T7, T21);
  const auto T23 = X(T2, T22);
  const auto T24 = X(T2, T10);
  const auto T25 = X(T20, T17);
  const auto T26 = X(T3, T16);
  const auto T27 = X(T1, T12);
  const auto D = U7;

  // Non-linear middle: 34 AND, 29 XOR; AND-depth 4.
  const auto M1 = A(T13, T6);
  const auto M2 = A(T23, T8);
  const auto M3 = X(T14, M1);
  const auto M4 = A(T19, D);
  const auto M5 = X(M4, M1);
  const auto M6 = A(T3, T16);
  const auto M7 = A(T22, T9);
  const auto M8 = X(T26, M6);
  const auto M9 = A(T20, T17);
  const auto M10 = X(M9, M6);
  const auto M11 = A(T1, T15);
  const auto M12 = A(T4, T27);
  const auto M13 = X(M12, M11);
  const auto M14 = A(T2, T10);
  const auto M15 = X(M14, M11);
  const auto M16 = X(M3, M2);
  const auto M17 = X(M5, T24);
  const auto M18 = X(M8, M7);
  const auto M19 = X(M10, M15);
  const auto M20 = X(M16, M13);
  const auto M21 = X(M17, M15);
  const auto M22 = X(M18, M13);
  const auto M23 = X(M19, T25);
  const auto M24 = X(M22, M23);
  const auto M25 = A(M22, M20);
  const auto M26 = X(M21, M25);
  const auto M27 = X(M20, M21);
  const auto M28 = X(M23, M25);
  const auto M29 = A(M28, M27);
  const auto M30 = A(M26, M24);
  const auto M31 = A(M20, M23);
  const auto M32 = A(M27, M31);
  const auto M33 = X(M27, M25);
  const auto M34 = A(M21, M22);
  const auto M35 = A(M24, M34);
  const auto M36 = X(M24, M25);
  const auto M37 = X(M21, M29);
  const auto M38 = X(M32, M33);
  const auto M39 = X(M23, M30);
  const auto M40 = X(M35, M36);
  const auto M41 = X(M38, M40);
  const auto M42 = X(M37, M39);
  const auto M43 = X(M37, M38);
  const auto M44 = X(M39, M40);
  const auto M45 = X(M42, M41);
  const auto M46 = A(M44, T6);
  const auto M47 = A(M40, T8);
  const auto M48 = A(M39, D);
  const auto M49 = A(M43, T16);
  const auto M50 = A(M38, T9);
  const auto M51 = A(M37, T17);
  const auto M52 = A(M42, T15);
  const auto M53 = A(M45, T27);
  const auto M54 = A(M41, T10);
  const auto M55 = A(M44, T13);
  const auto M56 = A(M40, T23);
  const auto M57 = A(M39, T19);
  const auto M58 = A(M43, T3);
  const auto M59 = A(M38, T22);
  const auto M60 = A(M37, T20);
  const auto M61 = A(M42, T1);
  const auto M62 = A(M45, T4);
  const auto M63 = A(M41, T2);

  // Bottom linear layer: 34 XOR, 4 XNOR.
  const auto L0 = X(M61, M62);
  const auto L1 = X(M50, M56);
  const auto L2 = X(M46, M48);
  const auto L3 = X(M47, M55);
  const auto L4 = X(M54, M58);
  const auto L5 = X(M49, M61);
  const auto L6 = X(M62, L5);
  const auto L7 = X(M46, L3);
  const auto L8 = X(M51, M59);
  const auto L9 = X(M52, M53);
  const auto L10 = X(M53, L4);
  const auto L11 = X(M60, L2);
  const auto L12 = X(M48, M51);
  const auto L13 = X(M50, L0);
  const auto L14 = X(M52, M61);
  const auto L15 = X(M55, L1);
  const auto L16 = X(M56, L0);
  const auto L17 = X(M57, L1);
  const auto L18 = X(M58, L8);
  const auto L19 = X(M63, L4);
  const auto L20 = X(L0, L1);
  const auto L21 = X(L1, L7);
  const auto L22 = X(L3, L12);
  const auto L23 = X(L18, L2);
  const auto L24 = X(L15, L9);
  const auto L25 = X(L6, L10);
  const auto L26 = X(L7, L9);
  const auto L27 = X(L8, L10);
  const auto L28 = X(L11, L14);
  const auto L29 = X(L11, L17);
  const auto S0 = X(L6, L24);
  const auto S1 = XN(L16, L26);
  const auto S2 = XN(L19, L28);
  const auto S3 = X(L6, L21);
  const auto S4 = X(L20, L22);
  const auto S5 = X(L25, L29);
  const auto S6 = XN(L13, L27);
  const auto S7 = XN(L6, L23);

  return ByteWires{S7, S6, S5, S4, S3, S2, S1, S0};
}

}  // namespace mpc::circuits::detail
