// The handshake that keys a data link (data_link.hpp) between two servers that know each
// other's long-term X25519 key (the pinned CurveZMQ keys).
//
//   initiator -> responder  hello: "mpc-dlh1" || e_I || s_I || channel (u32be)
//   responder -> initiator  reply: "mpc-dlr1" || e_R
//   both: ee = DH(e_I, e_R), se = DH(s_I, e_R), es = DH(e_I, s_R);
//         keys = BLAKE2b-512(label || hello || reply || s_R || ee || se || es)
//         (first half initiator -> responder, second half responder -> initiator)
//   initiator -> responder  its first frame; responder -> initiator  its first frame
//
// The responder admits s_I only if it is pinned. Only a holder of s_I can compute se and
// only a holder of s_R can compute es, so each end's first frame, empty but authenticated,
// proves the other end's identity before any data moves (explicit key confirmation, as in
// Noise's KK pattern); the fresh ephemerals make every link's keys new and unrelated to the
// long-term keys alone (forward secrecy), and a recorded handshake cannot be replayed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include "common/secret.hpp"
#include "transport/curve_keys.hpp"

namespace mpc::transport {

inline constexpr std::size_t kHelloBytes = 8 + 32 + 32 + 4;
inline constexpr std::size_t kReplyBytes = 8 + 32;

struct LinkHello {
  PublicKey ephemeral{};
  PublicKey sender{};
  std::uint32_t channel = 0;
};

std::array<std::uint8_t, kHelloBytes> encode_hello(const LinkHello& hello);
std::optional<LinkHello> decode_hello(std::span<const std::uint8_t> bytes);  // empty: not a hello
std::array<std::uint8_t, kReplyBytes> encode_reply(const PublicKey& ephemeral);
std::optional<PublicKey> decode_reply(std::span<const std::uint8_t> bytes);

struct LinkKeys {
  SecretBytes initiator_to_responder{32};
  SecretBytes responder_to_initiator{32};
};

// The link's keys as the initiator or the responder computes them. Throws
// Error(Transport) on a public key of small order (a DH result of zero).
LinkKeys derive_link_keys(bool initiator, const CurveKeyPair& own_static, const CurveKeyPair& own_ephemeral,
                          const PublicKey& peer_static, const PublicKey& peer_ephemeral,
                          std::span<const std::uint8_t> hello, std::span<const std::uint8_t> reply);

}  // namespace mpc::transport
