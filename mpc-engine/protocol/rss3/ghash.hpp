// mpc-engine/protocol/rss3/ghash.hpp: GHASH of public data under a secret-shared hash key.
//
// GHASH is the universal hash of GCM (McGrew, Viega: "The Galois/Counter Mode of Operation
// (GCM)", 2005; NIST SP 800-38D, section 6.4). For blocks X_1..X_m,
//   GHASH_H(X) = X_1 * H^m ^ X_2 * H^(m-1) ^ ... ^ X_m * H,
// so when X is public and the parties hold replicated shares (Araki, Furukawa, Lindell,
// Nof, Ohara, CCS 2016, eprint 2016/768) of H, H^2, ..., H^L, each party computes its share
// of GHASH locally: multiplying by a public block is GF(2)-linear, so it is applied to both
// share components and no AND gate (no communication) is needed. See docs/ticket-format.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/rss3/shares.hpp"

namespace mpc::rss3 {

inline constexpr std::size_t kGhashBlockBytes = 16;

using GhashBlock = std::array<std::uint8_t, kGhashBlockBytes>;

// a * b in GF(2^128) with GCM's bit order (SP 800-38D 6.3: bit 0 is the most significant bit
// of byte 0, reduction by R = 0xE1 || 0^120). Constant time in both operands: no branch and
// no table lookup depends on their values.
GhashBlock gf128_multiply(const GhashBlock& a, const GhashBlock& b);

// Dealer side: H^1, ..., H^count (element k - 1 is H^k). The result is secret: the caller
// wipes it.
std::vector<GhashBlock> hash_key_powers(const GhashBlock& h, std::size_t count);

// Number of GHASH input blocks for GCM with these lengths: the AAD zero-padded to whole
// blocks, the text zero-padded to whole blocks, and the length block. This is how many
// hash key powers ghash_share needs.
std::size_t ghash_blocks(std::size_t aad_bytes, std::size_t text_bytes);

// One party's replicated share of GHASH_H(aad, text) (the GCM input layout: padded AAD,
// padded text, 64-bit bit lengths of both), from its shares of H^1..H^L
// (power_shares[k - 1] shares H^k; both components 16 bytes). Powers beyond the ones needed
// are ignored. Throws Error(Component::Protocol) when there are fewer than
// ghash_blocks(aad.size(), text.size()) powers, when a needed power share is not 16 + 16
// bytes, or when a bit length does not fit GCM's 64-bit length fields.
ByteShare ghash_share(std::span<const ByteShare> power_shares, std::span<const std::uint8_t> aad,
                      std::span<const std::uint8_t> text);
// The same from the powers' components laid end to end, 16 bytes each (H^1 first), read in
// place: `powers_a` empty for a zero component (an XOR share), else as long as `powers_x`.
ByteShare ghash_share(std::span<const std::uint8_t> powers_x, std::span<const std::uint8_t> powers_a,
                      std::span<const std::uint8_t> aad, std::span<const std::uint8_t> text);

// One party's additive share of what a secret block S adds to GHASH_H(aad, empty text) when
// S's 16 bytes stand at aad[offset, offset + 16) (the party hashes the rest of aad, with zeros
// there, through ghash_share): the three parties' results XOR to it. S and the powers are
// replicated shares, so each block of aad that S touches is a product of two secrets, and
// party i takes x^S_i * x^P_i ^ a^S_i * a^P_i, the product of Araki et al. (CCS 2016) over
// GF(2^128) left as three additive shares. It is not masked, and no party can check another's:
// the caller adds a zero-sharing before it leaves and has the result checked before use.
// `powers_x`/`powers_a` as for ghash_share (neither empty). Throws Error(Component::Protocol)
// when S does not lie inside aad, or when there are too few powers.
GhashBlock secret_block_ghash_share(std::span<const std::uint8_t> powers_x, std::span<const std::uint8_t> powers_a,
                                    std::size_t aad_bytes, std::size_t offset, const ByteShare& secret);

}  // namespace mpc::rss3
