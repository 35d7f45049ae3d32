// Preprocessing by the two servers alone, with oblivious transfer. Per entry, server 1 draws r1
// and server 2 draws r2; they end with XOR shares of e_{r1 ^ r2} (masked_table.hpp).
//
// Construction: XOR-ing an index with r2 is eight conditional swaps, swap_i (index j <-> j ^ 2^i)
// applied when bit i of r2 is set. The servers start from the sharing (e_{r1}, 0) and apply the
// swaps obliviously, one random OT (IKNP, protocol/ot) per bit of r2 with server 2 choosing that
// bit b. On shares u = u1 ^ u2, swap_i^b(u) = swap_i^b(u2) ^ u1 ^ b * (u1 ^ swap_i(u1)): server 2
// swaps its own share; the term b * d with d = u1 ^ swap_i(u1) (server 1's vector, server 2's
// bit) is a 1-out-of-2 OT of 256-bit strings, derandomised from the random OT (k0, k1, server 2
// holding k_b) with G = the fixed-key TCCR hash (two tweaks per key) as the PRG:
//   server 1 keeps s = G(k0) and sends c = G(k0) ^ G(k1) ^ d;  server 2 gets G(k_b) ^ b * c = s ^ b * d;
//   new shares: u1' = u1 ^ s,  u2' = swap_i^b(u2) ^ G(k_b) ^ b * c.
// Server 1's shares never depend on server 2's bits, so it computes all eight corrections of an
// entry at once: one message for the whole batch after the OTs. Server 2 sees only the keys of
// its choices and corrections padded by the G(k_{1-b}) it cannot compute (semi-honest security).
//
// Cost per entry: 8 random OTs (128 bytes of IKNP traffic from server 2) and 8 x 32 bytes of
// corrections from server 1; 32 fixed-key AES calls at server 1 and 16 at server 2. (A
// Naor-Pinkas 1-out-of-256 OT of server 1's 256 candidate shares would send 8 KiB per entry and
// cost server 1 4096 AES calls.)
#pragma once

#include <cstdint>
#include <vector>

#include "protocol/lut2/masked_table.hpp"
#include "protocol/ot/ot_extension.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::lut2 {

// Server 1 (party 0) sends with `sender`, server 2 receives with `receiver`, over the channel
// the OT objects use. first_entry numbers the batch's entries (hash tweaks): unique per pair of
// OT objects and never reused.
std::vector<Entry> ot_preprocess_send(ot::OtExtensionSender& sender, two_party::Channel& peer, std::uint64_t first_entry,
                                      std::size_t count);
std::vector<Entry> ot_preprocess_receive(ot::OtExtensionReceiver& receiver, two_party::Channel& peer,
                                         std::uint64_t first_entry, std::size_t count);

// The 256-bit vector with indices j and j ^ 2^i exchanged (i < 8): the step both sides use.
std::array<std::uint64_t, 4> swap_dimension(const std::array<std::uint64_t, 4>& u, unsigned i);

}  // namespace mpc::lut2
