// Preprocessing by the two servers alone, with oblivious transfer: per entry, server 1 draws
// r1 and its one-hot share R; server 2 draws r2 and obtains, by a 1-out-of-256 OT, the message
// e_{r1 ^ j} ^ R for j = r2, its share of e_{r1 ^ r2}. The 1-out-of-256 OT is Naor-Pinkas'
// construction from eight random 1-out-of-2 OTs (IKNP, protocol/ot): message j is padded with
// XOR_i H(k_i^{j_i}, (entry, j, i)), which server 2 can compute only for j = r2.
//
// Cost per entry: 8 random OTs and 256 x 32 bytes from server 1 (8 KiB), 4096 fixed-key AES
// calls at server 1 and 16 at server 2.
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

}  // namespace mpc::lut2
