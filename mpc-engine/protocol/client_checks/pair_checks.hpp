// Checks of each server's key share for the pair that serves while the third server is down
// (node/pair_service.hpp), dealt by that third server while all three serve.
//
// With K = c_0 ^ c_1 ^ c_2 and server i holding x_i = c_i ^ c_(i-1), a_i = c_i, the pair without
// server m is its leader L = m + 1, feeding x_L = c_(m+1) ^ c_m, and its second member
// S = m + 2, feeding a_S = c_(m+2). The pair's two-party engine holds each member to its half
// with the checks of share_checks.hpp: a key a_j of GF(2^64) for checking the peer, a blinding
// b_j per segment, and the peer's tag H_(a_j)(peer's half) ^ b_(1-j). No client is there to deal
// them (a generated key has none, and an imported key's client dealt replicated shares), so the
// server the pair will serve without deals them. It knows c_m = a_m and c_(m+2) = x_m ^ a_m,
// but not c_(m+1):
//   - to L: a_L, b_L and S's tag H_(a_L)(c_(m+2)) ^ b_S, all of which it can compute;
//   - to S: a_S, b_S and the part H_(a_S)(c_m) ^ b_L of L's tag. H is linear in the hashed bytes
//     (Horner from zero), so S completes it with H_(a_S)(c_(m+1)), c_(m+1) = x_S ^ a_S being
//     the one component only S and L hold.
// What each learns: L holds a_L, b_L and a tag blinded by b_S; S holds a_S, b_S and a part blinded
// by b_L. Neither learns the key it is checked under, so the soundness of share_checks.hpp holds
// for each, and neither learns anything of its peer's half. The dealer is not in the pair: dealt
// wrongly, its checks make the pair's jobs abort (it can stop the service it is missing from,
// never learn from it or change a result).
//
// The dealer draws everything from a seed it derives from a secret of its own, the key's id and
// its own share: dealt again (a peer restored, a lost message), the same share gives the same
// checks, so two members never hold checks of two different deals; a key imported again under
// the same id gives another share and so other checks, never a second tag under the same key and
// blinding.
#pragma once

#include <span>

#include "protocol/client_checks/check_rows.hpp"
#include "protocol/client_checks/share_checks.hpp"

namespace mpc::client_checks {

struct PairDeal {
  ShareCheck leader;          // complete
  ShareCheck second_partial;  // its peer tags still lack H_(own key)(c_(m+1)): complete_pair_check
};

// The dealer m's checks for the pair serving without it. missing_component: c_m (its a);
// second_half: c_(m+2) (its x ^ a). Throws Error(Protocol) for halves of different sizes or a
// segment outside them.
PairDeal deal_pair_checks(const CheckSeed& seed, std::span<const std::uint8_t> missing_component,
                          std::span<const std::uint8_t> second_half, std::span<const Segment> segments);

// The second member's checks from the dealt part and c_(m+1) (its x ^ a).
ShareCheck complete_pair_check(const ShareCheck& partial, std::span<const std::uint8_t> shared_component,
                               std::span<const Segment> segments);

// Checks the two members make for each other, in place of a deal by a server m proven to have
// deviated (in disputes with both others, node/disputes.hpp). With at most one server deviating
// both members are then honest, and the checks serve only to run the pair's circuits, which
// hold each member to its half; they are used only then (node/pair_check_keeper.hpp):
//   - each member's checking key a comes from `shared`, a seed both hold and m does not (drawn
//     from c_(m+1)): each knows the other's key;
//   - each member's blindings b come from `own`, a seed of its own: the tag it sends its partner,
//     H_(a_partner)(own half) ^ b, tells the partner nothing of that half.
// `role`: 0 the leader, 1 the second member.
inline constexpr int kLeaderRole = 0, kSecondRole = 1;

// What a member sends its partner: per segment the partner's peer tag; the partner's own key and
// blindings are left zero (complete_mutual_check fills them in).
ShareCheck mutual_tags(const CheckSeed& shared, int role, const CheckSeed& own, std::span<const std::uint8_t> own_half,
                       std::span<const Segment> segments);

// A member's checks: its key from `shared`, its blindings from `own`, its partner's tags as the
// partner sent them (mutual_tags). Throws Error(Protocol) for tags of another shape.
ShareCheck complete_mutual_check(const CheckSeed& shared, int role, const CheckSeed& own,
                                 const ShareCheck& from_partner, std::span<const Segment> segments);

}  // namespace mpc::client_checks
