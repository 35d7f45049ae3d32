// A key the two servers of a two-party engine share and nobody else knows, computed without a
// message: BLAKE2b, keyed by `label`, over their X25519 shared secret (from their long-term
// CurveZMQ keys), both public keys in party order and `context`.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/secret.hpp"
#include "settings/server_settings.hpp"
#include "transport/curve_keys.hpp"

namespace mpc::two_party_engine {

// crypto_stream_chacha20_ietf_KEYBYTES (32) bytes. settings: the two-server configuration (its
// one peer the other server). Throws Error(Server) for a low-order peer key.
SecretBytes derive_pair_key(const settings::ServerSettings& settings, const transport::CurveKeyPair& own,
                            std::string_view label, std::span<const std::uint8_t> context);

}  // namespace mpc::two_party_engine
