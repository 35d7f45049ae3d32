// The servers' side of the client's checks of their key shares (protocol/client_checks/
// share_checks.hpp has the scheme): in each run, each party proves that what it fed on its
// share's input wires, with its blinding b on kCheckBits more, gives the sketch T = R s ^ b its
// peer was dealt at import, under the peer's matrix R, which it never learns.
//
// For the prover P's fed bits v_i = x_i ^ lambda^P_i ^ lambda^Q_i (x the masked values both hold,
// lambda the wires' masks) and R' = [R | I], R' v = R' x ^ R' lambda^Q ^ R' lambda^P. The checker
// Q computes the first two; the third is a sum over P's halves of the masks, which Q cannot see
// but holds the MAC keys of: K_i, with P holding M_i = K_i ^ lambda^P_i delta_Q. Q sends, per
// wire, w_i = H(K_i) ^ H(K_i ^ delta_Q) ^ R'_i (R'_i its column, 64 bits, H a tweakable
// correlation-robust hash cut to 64 bits); P answers S = the XOR over i of H(M_i) ^ lambda^P_i
// w_i, which is the XOR of H(K_i) ^ lambda^P_i R'_i, so Q gets R' lambda^P = S ^ the XOR of
// H(K_i). P knows H of only one of K_i and K_i ^ delta_Q, so w_i hides R'_i from it, and R serves
// every run of the key's life. A prover that sends another S shifts the result by a value it
// picks without knowing R: as good as a share fed as s ^ d, which passes only if R d = e.
// Cost: 8 bytes per share bit one way, 8 bytes the other, two hashes per bit on the checker
// and one on the prover.
#pragma once

#include <cstdint>
#include <span>

#include "protocol/auth2/auth_bits.hpp"
#include "protocol/auth2/authenticated_garbling.hpp"
#include "protocol/client_checks/check_rows.hpp"

namespace mpc::auth2 {

// After a run (masked_inputs from evaluate_authenticated): both parties call, each with the
// wires of its own committed share then its blinding (kCheckBits wires), the same of its peer,
// its own matrix seed and the peer's sketch (its client_checks::ShareCheck). Throws
// VerificationError ("share_check") when the peer fed another share or blinding than the
// client dealt it, or answered the check falsely.
void check_committed_shares(Session& session, const CircuitMasks& masks, std::span<const std::uint8_t> masked_inputs,
                            std::span<const std::uint32_t> own_wires, std::span<const std::uint32_t> peer_wires,
                            const client_checks::CheckSeed& own_rows, const client_checks::CheckBits& peer_sketch);

}  // namespace mpc::auth2
