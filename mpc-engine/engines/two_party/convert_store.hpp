// Turns a three-server (rss3) store into a two-server (gc2, lut2) one without a dealer: any two
// replicated shares hold an XOR sharing of the key. With a bit v shared as party i holding
// (x_i, a_i = x_{i-1} ^ v), server 1's x_1 and server 2's a_2 = x_1 ^ v XOR to v.
//
// Server 3 could compute a_2 from its own share (a_3 ^ x_3 = x_1 ^ x_3 ^ x_2 ^ ... = a_2), so
// both halves are refreshed with a mask m that server 3 cannot know: servers 1 and 2 keep
// x_1 ^ m and a_2 ^ m. m is a ChaCha20 stream under a key hashed from their X25519 shared secret
// (their long-term CurveZMQ keys) and the key id, so the two compute the same mask without a
// message, and server 3's old store is useless to it afterwards (retire it anyway).
//
// Run on servers 1 and 2 while stopped, with the new two-server configuration: it reads the old
// store (opened with the same storage key) and writes every key into the configured, empty
// storage_path. The old store is left untouched.
#pragma once

#include <cstddef>
#include <filesystem>

#include "common/log.hpp"
#include "settings/server_settings.hpp"

namespace mpc::two_party_engine {

// Returns the number of keys converted. Throws Error(Server) if the settings are not a
// two-server configuration, the new store is not empty, or an old share is not a replicated one.
std::size_t convert_from_rss3(const settings::ServerSettings& settings, const std::filesystem::path& old_storage,
                              const Logger& log);

}  // namespace mpc::two_party_engine
