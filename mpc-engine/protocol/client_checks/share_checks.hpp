// Checks of each server's key share, dealt by the client that imports the key into a two-server
// cluster. In a two-party computation a party's input is whatever it feeds: a server could feed
// its share of the round keys XOR a value it picks, and so shift a result by it (a change of the
// last round key is a change of the ciphertext), or take another key for one job than for the
// next. The client that imports the key knows both shares s_0 and s_1, so it gives server i,
// with its share:
//   - b_i, 64 random bits it feeds with its share (they blind the check);
//   - a seed of its own matrix R_i (check_rows.hpp) over the bits of its peer's share, and the
//     peer's sketch T_{1-i} = R_i s_{1-i} ^ b_{1-i}.
// In every job (protocol/auth2/share_check_protocol.hpp) each server proves that the share it
// fed, with its b, gives the sketch its peer holds, under a matrix it never learns: a share fed
// as s ^ d with b ^ e passes only if R d = e, probability 2^-64 for each try, and a failed try
// aborts the job. The sketch its peer holds is blinded by b, so it tells the peer nothing of s.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/client_checks/check_rows.hpp"

namespace mpc::client_checks {

// What server i stores with its share: own b_i | the seed of R_i | T_{1-i}.
inline constexpr std::size_t kShareCheckBytes = 8 + kSeedBytes + 8;
struct ShareCheck {
  CheckBits own_blinding{};
  CheckSeed peer_rows{};
  CheckBits peer_sketch{};
};

std::array<std::uint8_t, kShareCheckBytes> serialize(const ShareCheck& check);
// Throws FormatError(Protocol) unless `bytes` is kShareCheckBytes long.
ShareCheck parse_share_check(std::span<const std::uint8_t> bytes);

// R s ^ b for a share's bytes (bit j of the share is bit j % 8 of byte j / 8) and blinding b.
CheckBits share_sketch(const CheckSeed& rows, std::span<const std::uint8_t> share, const CheckBits& blinding);

// The client at import: the checks of two XOR shares of one key's material, server 1's first.
std::array<ShareCheck, 2> deal_share_checks(std::span<const std::uint8_t> first, std::span<const std::uint8_t> second);

}  // namespace mpc::client_checks
