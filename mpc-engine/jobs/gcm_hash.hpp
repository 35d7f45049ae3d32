// One server's share of GHASH_H(aad, text) from its share of an aes256-gcm key's material:
// GHASH of public data is linear in H's powers, so each server applies it to the shares of
// the powers it holds and no server talks to another (docs/ticket-format.md).
#pragma once

#include <cstdint>
#include <span>

#include "common/secret.hpp"
#include "protocol/rss3/ghash.hpp"
#include "protocol/rss3/shares.hpp"

namespace mpc::jobs {

// `x` and `a` are the two components of this server's share of the key's material (for an
// XOR share, `a` is empty and the result's a component is zero). Throws Error(Server) when
// the input needs more GHASH blocks than the stored powers (wire::kGcmHashPowers). The
// copies of the powers it makes are wiped.
rss3::ByteShare gcm_hash_share(std::span<const std::uint8_t> x, std::span<const std::uint8_t> a,
                               std::span<const std::uint8_t> aad, std::span<const std::uint8_t> text);
// The same from a replicated share as stored: x || a, two halves of equal length.
rss3::ByteShare gcm_hash_share(const SecretBytes& share, std::span<const std::uint8_t> aad,
                               std::span<const std::uint8_t> text);

// This server's additive share of what a secret block adds to GHASH_H(aad, empty text) at
// aad[offset, offset + 16) (rss3::secret_block_ghash_share), from its stored replicated share.
rss3::GhashBlock gcm_secret_block_share(const SecretBytes& share, std::size_t aad_bytes, std::size_t offset,
                                        const rss3::ByteShare& secret);

}  // namespace mpc::jobs
