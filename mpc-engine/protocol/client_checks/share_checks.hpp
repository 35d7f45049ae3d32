// Checks of each server's key share, dealt by the client that imports the key into a two-server
// cluster. In a two-party computation a party's input is whatever it feeds: a server could feed
// its share of the round keys XOR a value it picks, and so shift a result by it (a change of the
// last round key is a change of the ciphertext), or take another key for one job than for the
// next. The client that imports the key knows both shares s_0 and s_1, so it gives server i,
// with its share:
//   - b_i, 64 random bits it feeds with its share (they blind the check);
//   - a_i, a random key of its own in GF(2^64), with which it checks its peer;
//   - its peer's tag t_{1-i} = H_{a_i}(s_{1-i}) ^ b_{1-i}, H the polynomial hash of
//     circuits/share_hash.hpp.
// Every job's circuit computes, for each server, H_a(s) ^ b of the share and blinding it fed
// under its peer's key, and compares it with the tag its peer fed; the two verdicts are the
// only outputs of the check (engines/two_party/checked_part.hpp). A share fed as s ^ d (or a
// blinding as b ^ e), fixed before the peer's key, passes only if a nonzero polynomial of degree
// at most m (the share's 64-bit blocks) vanishes at the key: m / 2^64 for each try, and a failed
// try aborts the job. A checker can feed another key or tag, but learns only whether
// H_{a'}(s) ^ b equals a value of its choice, with b uniform and unknown to it: nothing, but
// with probability 2^-64. The tag a server holds is blinded, so it tells it nothing of s.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mpc::client_checks {

inline constexpr std::size_t kShareCheckWordBytes = 8;
using CheckWord = std::array<std::uint8_t, kShareCheckWordBytes>;  // 64 bits, bit i: byte i / 8, bit i % 8

// What server i stores with its share: own a_i, then per segment own b_i | t_{1-i}.
struct SegmentCheck {
  CheckWord own_blinding{};
  CheckWord peer_tag{};
};
struct ShareCheck {
  CheckWord own_key{};
  std::vector<SegmentCheck> segments;
};

std::vector<std::uint8_t> serialize(const ShareCheck& check);
// Throws FormatError(Protocol) unless `bytes` is one key and whole segments.
ShareCheck parse_share_check(std::span<const std::uint8_t> bytes);

// H_key(share) ^ blinding, for a share's bytes (bit j of the share is bit j % 8 of byte j / 8).
CheckWord share_tag(const CheckWord& key, std::span<const std::uint8_t> share, const CheckWord& blinding);

// A part of the material, in bytes: a segment.
struct Segment {
  std::size_t offset = 0;
  std::size_t bytes = 0;
};

// The client at import: the checks of two XOR shares of one key's material over `segments`,
// server 1's first.
std::array<ShareCheck, 2> deal_share_checks(std::span<const std::uint8_t> first, std::span<const std::uint8_t> second,
                                            std::span<const Segment> segments);

}  // namespace mpc::client_checks
