#include "protocol/client_checks/pair_checks.hpp"

#include <sodium.h>

#include <algorithm>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::client_checks {
namespace {

CheckWord operator^(const CheckWord& left, const CheckWord& right) {
  CheckWord out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(left[i] ^ right[i]);
  return out;
}

void check_segments(std::span<const Segment> segments, std::size_t bytes) {
  if (segments.empty()) throw Error(Component::Protocol, "no segments to check");
  for (const auto& segment : segments)
    if (segment.bytes == 0 || segment.offset + segment.bytes > bytes)
      throw Error(Component::Protocol, "a checked segment outside the key's material");
}

std::span<const std::uint8_t> part(std::span<const std::uint8_t> half, const Segment& segment) {
  return half.subspan(segment.offset, segment.bytes);
}

// The member's checking key, from the seed both members hold.
CheckWord mutual_key(const CheckSeed& shared, int role) {
  if (role != kLeaderRole && role != kSecondRole) throw Error(Component::Protocol, "a pair member of no role");
  SecretBytes drawn(2 * kShareCheckWordBytes);
  randombytes_buf_deterministic(drawn.data(), drawn.size(), shared.data());
  CheckWord out{};
  std::copy_n(drawn.data() + static_cast<std::size_t>(role) * kShareCheckWordBytes, kShareCheckWordBytes, out.begin());
  return out;
}

// A member's blinding of each segment, from its own seed.
std::vector<CheckWord> own_blindings(const CheckSeed& own, std::size_t segments) {
  SecretBytes drawn(segments * kShareCheckWordBytes);
  randombytes_buf_deterministic(drawn.data(), drawn.size(), own.data());
  std::vector<CheckWord> out(segments);
  for (std::size_t i = 0; i < segments; ++i)
    std::copy_n(drawn.data() + i * kShareCheckWordBytes, kShareCheckWordBytes, out[i].begin());
  return out;
}

}  // namespace

PairDeal deal_pair_checks(const CheckSeed& seed, std::span<const std::uint8_t> missing_component,
                          std::span<const std::uint8_t> second_half, std::span<const Segment> segments) {
  if (missing_component.size() != second_half.size() || second_half.empty())
    throw Error(Component::Protocol, "key components of different sizes to check");
  check_segments(segments, second_half.size());
  // a_L, a_S, then b_L and b_S of each segment.
  const std::size_t words = 2 + 2 * segments.size();
  SecretBytes drawn(words * kShareCheckWordBytes);
  static_assert(randombytes_SEEDBYTES == kSeedBytes);
  randombytes_buf_deterministic(drawn.data(), drawn.size(), seed.data());
  const auto word = [&](std::size_t index) {
    CheckWord out{};
    std::copy_n(drawn.data() + index * kShareCheckWordBytes, kShareCheckWordBytes, out.begin());
    return out;
  };
  PairDeal deal;
  deal.leader.own_key = word(0);
  deal.second_partial.own_key = word(1);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const CheckWord leader_blinding = word(2 + 2 * i), second_blinding = word(3 + 2 * i);
    deal.leader.segments.push_back(
        {leader_blinding, share_tag(deal.leader.own_key, part(second_half, segments[i]), second_blinding)});
    deal.second_partial.segments.push_back(
        {second_blinding,
         share_tag(deal.second_partial.own_key, part(missing_component, segments[i]), leader_blinding)});
  }
  return deal;
}

ShareCheck mutual_tags(const CheckSeed& shared, int role, const CheckSeed& own, std::span<const std::uint8_t> own_half,
                       std::span<const Segment> segments) {
  check_segments(segments, own_half.size());
  const CheckWord partner_key = mutual_key(shared, 1 - role);
  std::vector<CheckWord> blindings = own_blindings(own, segments.size());
  ShareCheck out;
  for (std::size_t i = 0; i < segments.size(); ++i)
    out.segments.push_back({CheckWord{}, share_tag(partner_key, part(own_half, segments[i]), blindings[i])});
  wipe(blindings.data(), blindings.size() * sizeof(CheckWord));
  return out;
}

ShareCheck complete_mutual_check(const CheckSeed& shared, int role, const CheckSeed& own,
                                 const ShareCheck& from_partner, std::span<const Segment> segments) {
  if (from_partner.segments.size() != segments.size())
    throw Error(Component::Protocol, "a partner's tags of " + std::to_string(from_partner.segments.size()) +
                                         " segments for a key of " + std::to_string(segments.size()));
  ShareCheck out;
  out.own_key = mutual_key(shared, role);
  std::vector<CheckWord> blindings = own_blindings(own, segments.size());
  for (std::size_t i = 0; i < segments.size(); ++i) out.segments.push_back({blindings[i], from_partner.segments[i].peer_tag});
  wipe(blindings.data(), blindings.size() * sizeof(CheckWord));
  return out;
}

ShareCheck complete_pair_check(const ShareCheck& partial, std::span<const std::uint8_t> shared_component,
                               std::span<const Segment> segments) {
  check_segments(segments, shared_component.size());
  if (partial.segments.size() != segments.size())
    throw Error(Component::Protocol, "a pair check of " + std::to_string(partial.segments.size()) +
                                         " segments for a key of " + std::to_string(segments.size()));
  ShareCheck out = partial;
  const CheckWord zero{};
  for (std::size_t i = 0; i < segments.size(); ++i)
    out.segments[i].peer_tag =
        partial.segments[i].peer_tag ^ share_tag(partial.own_key, part(shared_component, segments[i]), zero);
  return out;
}

}  // namespace mpc::client_checks
