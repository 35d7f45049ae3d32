// Internal to lut_aes.cpp: the hot loop of a round. After the masked bytes of a round are
// opened, one call turns every block's 16 opened bytes into this party's shares of the S-box
// outputs (masked_table.hpp) and applies the rest of the round to the share: the linear layers
// and AddRoundKey (a party's share of a linear function of the state is that function of its
// share; the round key is itself a share).
//
// Round shapes (the decryption reorders FIPS-197's inverse cipher so that each exchange is
// followed by everything up to the next one; lut_aes applies InvShiftRows once before the first):
//   EncryptMiddle: SubBytes, ShiftRows, MixColumns, AddRoundKey
//   EncryptLast:   SubBytes, ShiftRows, AddRoundKey
//   DecryptMiddle: InvSubBytes, AddRoundKey, InvMixColumns, InvShiftRows
//   DecryptLast:   InvSubBytes, AddRoundKey
//
// Two implementations compute the same bytes (tests compare them with each other and with
// circuits/aes_reference):
//   portable: eight POPCNT parities per S-box and the reference linear layers;
//   avx512:   one 512-bit AND/XOR chain over the word-major public rows per S-box, VPOPCNTQ
//             for the eight parities at once, SSSE3 byte shuffles for the linear layers. Its
//             translation unit alone is compiled with AVX-512 flags and is entered only after
//             avx512_supported().
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/lut2/masked_table.hpp"

namespace mpc::lut2::detail {

enum class RoundShape : std::uint8_t { EncryptMiddle, EncryptLast, DecryptMiddle, DecryptLast };

// states: blocks x 16 bytes of this party's share, overwritten; entries, mine, theirs: 16 per
// block, in block order (the opened byte is mine ^ theirs, the two masked bytes exchanged);
// round_key: this party's 16-byte share of the round key.
void portable_finish_round(std::uint8_t* states, std::size_t blocks, const Entry* entries, const std::uint8_t* mine,
                           const std::uint8_t* theirs, const std::uint8_t* round_key, RoundShape shape);

// True when the CPU and OS support AVX-512 F/BW/VL and VPOPCNTDQ.
bool avx512_supported();
void avx512_finish_round(std::uint8_t* states, std::size_t blocks, const Entry* entries, const std::uint8_t* mine,
                         const std::uint8_t* theirs, const std::uint8_t* round_key, RoundShape shape);

}  // namespace mpc::lut2::detail
