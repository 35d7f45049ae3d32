// AES on XOR-shared state with one masked-table entry per S-box (masked_table.hpp): the
// linear layers and AddRoundKey are local; each round opens x ^ r for every S-box of the batch
// in one message each way (one byte per S-box each way) and looks up the shares. Ten rounds
// (fourteen for AES-256), so as many round trips per batch, whatever its size. This is the
// online phase of Keller, Orsini, Rotaru, Scholl, Soria-Vazquez and Vivek, "Faster Secure
// Multi-Party Computation of AES and DES Using Lookup Tables" (ACNS 2017, eprint 2017/378),
// for two parties. Both parties send their round's message before receiving the peer's, so
// neither waits on the other to speak first. The per-round work after the exchange is
// round_kernels.hpp's (AVX-512 where the CPU has it).
#pragma once

#include <cstdint>
#include <span>

#include "common/secret.hpp"
#include "protocol/lut2/masked_table.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::lut2 {

// Entries a batch of `blocks` blocks uses: 16 per block per round.
inline std::size_t entries_for(std::size_t round_key_bytes, std::size_t blocks) {
  return blocks * 16 * (round_key_bytes == 240 ? 14 : 10);
}

// This party's XOR share of AES (or the inverse cipher) of the public blocks `input` under the
// key whose expanded round keys (176 or 240 bytes) are XOR-shared as round_key_share. Party 0
// adds the public input; entries are consumed round by round, block by block, byte by byte.
// Both parties must pass the same entries' shares. Throws PeerError if the peer goes silent.
SecretBytes lut_aes(two_party::Channel& peer, int party, std::span<const std::uint8_t> round_key_share, bool decrypt,
                    std::span<const std::uint8_t> input, std::span<const Entry> entries);

}  // namespace mpc::lut2
