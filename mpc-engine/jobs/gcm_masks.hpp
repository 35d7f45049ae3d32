// Local masks: the GCM masks and ticket keys of nonces marked wire::kLocalMaskCounterBit,
// computed by each server from its own share, with no AES between the servers
// (docs/ticket-format.md, "Local masks").
//
// The key K of an aes256-gcm key is shared additively, K = c_0 ^ c_1 ^ c_2: in a replicated
// share (rss3/shares.hpp) c_i is a_i, and party i holds c_i and c_{i-1} = x_i ^ a_i. Each
// component gives a mask key m_j = BLAKE2b(component j, key id), and
//
//     M(N || b) = AES_{m_0}(N || b) ^ AES_{m_1}(N || b) ^ AES_{m_2}(N || b)
//
// is a pseudo-random function of (N, b) to anyone who lacks one component: one server, or a
// client. It is a pseudo-random secret sharing (Cramer, Damgard, Ishai, TCC 2005) of the
// masks: party i computes the terms u_i and u_{i-1} of the two components it holds, and
// (x = u_i ^ u_{i-1}, a = u_i) is its replicated share of M, with no message. Every term is
// held by two parties, so a share one of them alters is caught where the shares are opened or
// zero-tested, as for any replicated share.
//
// Two servers serving (a two-server cluster, or two of three while the third is down) hold
// the components between them and answer XOR shares: a two-server cluster's own XOR shares
// of K are its two components, so M there is the XOR of two terms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "common/secret.hpp"
#include "protocol/rss3/shares.hpp"
#include "wire/client_messages.hpp"

namespace mpc::jobs {

inline constexpr std::size_t kMaskComponentBytes = 32;

// The components this server holds of a key's replicated share x || a (as stored): c_i then
// c_{i-1}, 32 bytes each.
SecretBytes replicated_mask_components(const SecretBytes& share);
// The one component of an XOR share (a two-server cluster's store): its first 32 bytes.
SecretBytes xor_mask_component(std::span<const std::uint8_t> share);

// One server's mask keys for one key: one AES-256 key per component it holds.
class MaskKeys {
 public:
  // components: whole kMaskComponentBytes components, at least one.
  MaskKeys(const wire::KeyId& key, std::span<const std::uint8_t> components);
  ~MaskKeys();
  MaskKeys(const MaskKeys&) = delete;
  MaskKeys& operator=(const MaskKeys&) = delete;

  std::size_t count() const noexcept;
  // out (a multiple of 16 bytes) = AES_{m_j}(N || first), AES_{m_j}(N || first + 1), ...
  void term(std::size_t component, const wire::GcmNonce& nonce, std::uint32_t first, std::span<std::uint8_t> out) const;
  // The XOR of every component's term: an XOR share of M over blocks first, first + 1, ...
  void xor_terms(const wire::GcmNonce& nonce, std::uint32_t first, std::span<std::uint8_t> out) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Party i's replicated share of M(N || first ..) (x = u_i ^ u_{i-1}, a = u_i) for `blocks`
// blocks, from mask keys made of replicated_mask_components (c_i, then c_{i-1}).
rss3::ByteShare replicated_masks(const MaskKeys& keys, const wire::GcmNonce& nonce, std::uint32_t first,
                                 std::size_t blocks);

}  // namespace mpc::jobs
