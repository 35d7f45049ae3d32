#include "protocol/auth2/share_check_protocol.hpp"

#include <cstring>
#include <vector>

#include "common/error.hpp"
#include "protocol/two_party/fixed_key_hash.hpp"

namespace mpc::auth2 {
namespace {

using client_checks::kCheckBits;

constexpr std::uint64_t kTweakHigh = (1ull << 63) | 0x534852434b00ull;  // "SHRCK"

// Column i of R' = [R | I] as 64 bits (check bit k at bit k).
std::uint64_t column(const client_checks::CheckRows& rows, std::size_t i) {
  if (i >= rows.columns()) return std::uint64_t{1} << (i - rows.columns());
  std::uint64_t out = 0;
  for (std::size_t k = 0; k < kCheckBits; ++k)
    if (rows.bit(k, i)) out |= std::uint64_t{1} << k;
  return out;
}

std::uint64_t packed_check(const client_checks::CheckBits& bits) {
  std::uint64_t out = 0;
  for (std::size_t b = 0; b < bits.size(); ++b) out |= std::uint64_t{bits[b]} << (8 * b);
  return out;
}

}  // namespace

void check_committed_shares(Session& session, const CircuitMasks& masks, std::span<const std::uint8_t> masked_inputs,
                            std::span<const std::uint32_t> own_wires, std::span<const std::uint32_t> peer_wires,
                            const client_checks::CheckSeed& own_rows, const client_checks::CheckBits& peer_sketch) {
  if (own_wires.size() <= kCheckBits || peer_wires.size() <= kCheckBits)
    throw Error(Component::Protocol, "share check: groups without their blinding");
  // Tweaks: the first party's wires, then the second's, on both sides alike.
  const bool first = session.role() == Role::First;
  const std::uint64_t first_tweak = session.take_tweaks((first ? own_wires : peer_wires).size());
  const std::uint64_t second_tweak = session.take_tweaks((first ? peer_wires : own_wires).size());
  const std::uint64_t own_tweak = first ? first_tweak : second_tweak, peer_tweak = first ? second_tweak : first_tweak;

  // As checker: the hidden columns of the peer's wires, and what the peer's halves leave.
  const client_checks::CheckRows rows(own_rows, peer_wires.size() - kCheckBits);
  const Block delta = session.delta();
  std::vector<Block> key_hash(peer_wires.size()), flipped_hash(peer_wires.size());
  for (std::size_t i = 0; i < peer_wires.size(); ++i) {
    key_hash[i] = masks.lambda[peer_wires[i]].key;
    flipped_hash[i] = key_hash[i] ^ delta;
  }
  two_party::tccr_hash(key_hash.data(), key_hash.data(), key_hash.size(), kTweakHigh, peer_tweak, 1);
  two_party::tccr_hash(flipped_hash.data(), flipped_hash.data(), flipped_hash.size(), kTweakHigh, peer_tweak, 1);
  std::vector<std::uint8_t> columns(8 * peer_wires.size());
  std::uint64_t known = 0;  // R' x ^ R' lambda^Q ^ the XOR of H(K_i): all but S
  for (std::size_t i = 0; i < peer_wires.size(); ++i) {
    const std::uint64_t c = column(rows, i);
    const std::uint64_t hidden = key_hash[i].lo ^ flipped_hash[i].lo ^ c;
    std::memcpy(columns.data() + 8 * i, &hidden, 8);
    const std::uint32_t wire = peer_wires[i];
    if (((masked_inputs[wire] ^ masks.lambda[wire].bit) & 1) != 0) known ^= c;
    known ^= key_hash[i].lo;
  }
  session.send(Step::ShareCheckColumns, columns);
  session.channel().flush();

  // As prover: the sum over this party's halves, from the peer's hidden columns.
  std::vector<std::uint8_t> peer_columns(8 * own_wires.size());
  session.channel().receive(peer_columns);
  std::vector<Block> mac_hash(own_wires.size());
  for (std::size_t i = 0; i < own_wires.size(); ++i) mac_hash[i] = masks.lambda[own_wires[i]].mac;
  two_party::tccr_hash(mac_hash.data(), mac_hash.data(), mac_hash.size(), kTweakHigh, own_tweak, 1);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < own_wires.size(); ++i) {
    std::uint64_t hidden = 0;
    std::memcpy(&hidden, peer_columns.data() + 8 * i, 8);
    const std::uint64_t select = 0 - static_cast<std::uint64_t>(masks.lambda[own_wires[i]].bit & 1);
    sum ^= mac_hash[i].lo ^ (hidden & select);
  }
  std::uint8_t message[8];
  std::memcpy(message, &sum, 8);
  session.send(Step::ShareCheckSum, message);
  session.channel().flush();

  std::uint8_t peer_sum[8];
  session.channel().receive(peer_sum);
  std::uint64_t peer_total = 0;
  std::memcpy(&peer_total, peer_sum, 8);
  if ((known ^ peer_total) != packed_check(peer_sketch))
    throw VerificationError(Component::Protocol,
                            "authenticated garbling: the peer fed another key share than the one the client dealt it "
                            "(it deviated, or the key was imported with other checks)",
                            "share_check", first ? 1 : 0);
}

}  // namespace mpc::auth2
