// Preprocessing by a dealer (an offline third server that never sees a key or any online
// message): it draws the masks and hands each of the two servers its shares. Server 1's
// shares are a pseudorandom expansion of a 32-byte seed; server 2 gets explicit corrections
// (33 bytes per entry), so a batch costs the dealer's link 33 bytes per S-box plus one seed.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "common/secret.hpp"
#include "protocol/lut2/masked_table.hpp"

namespace mpc::lut2 {

using Seed = std::array<std::uint8_t, 32>;

struct DealtBatch {
  Seed first_seed{};           // server 1: expand_seed(first_seed, count)
  std::vector<Entry> second;   // server 2: its shares, explicitly
  ~DealtBatch();
};

// `count` fresh entries from the system CSPRNG.
DealtBatch deal(std::size_t count);

// Server 1's shares of a batch from its seed: entry k is bytes [33k, 33k + 33) of the ChaCha20
// stream under the seed (one_hot words little-endian, then the mask).
std::vector<Entry> expand_seed(const Seed& seed, std::size_t count);

// Entries [first, first + count) of that expansion, computed from the stream position alone:
// server 1 may keep only the seed and expand the range a job takes when it takes it. Throws
// Error(Protocol) past the stream's end (2^38 bytes, about 8.3e9 entries per seed).
std::vector<Entry> expand_seed(const Seed& seed, std::uint64_t first, std::size_t count);

// Wipes entries in place.
void wipe_entries(std::vector<Entry>& entries);

}  // namespace mpc::lut2
