#include "node/disputes.hpp"

#include <algorithm>
#include <bit>

namespace mpc::node {

std::uint8_t failed_pairs_known(std::uint8_t own_failed_pairs, const std::array<std::optional<DisputeWord>, 3>& peers) {
  unsigned known = own_failed_pairs & 0b111u;
  for (unsigned party = 0; party < 3; ++party)
    if (const auto& word = peers[party]) known |= word->failed_pairs & 0b111u & ~(1u << party);
  return static_cast<std::uint8_t>(known);
}

DisputeVerdict judge_disputes(int self, std::uint8_t own_distrusts, bool suspended, std::uint8_t own_failed_pairs,
                              const std::array<std::optional<DisputeWord>, 3>& peers) {
  // Whether `party` says it distrusts `other`.
  const auto says = [&](int party, int other) {
    const std::uint8_t bit = static_cast<std::uint8_t>(1u << other);
    if (party == self) return (own_distrusts & bit) != 0;
    const auto& word = peers[static_cast<std::size_t>(party)];
    return word && (word->distrusts & bit) != 0;
  };
  // Bit c: the two parties other than c are in a dispute.
  unsigned disputes = 0;
  for (int party = 0; party < 3; ++party)
    for (int other = 0; other < 3; ++other)
      if (party != other && says(party, other)) disputes |= 1u << (3 - party - other);
  switch (std::popcount(disputes)) {
    case 0: break;
    case 1: {
      const int outsider = std::countr_zero(disputes);
      const int a = (outsider + 1) % 3, b = (outsider + 2) % 3;
      const bool a_asks = says(a, b), b_asks = says(b, a);
      const int chosen = a_asks && b_asks ? std::min(a, b) : (a_asks ? a : b);
      const int other = a + b - chosen;
      // The outsider's pair with the chosen party failed a check that names neither (its key
      // shares' checks, dealt by `other`, or the chosen party's half): it pairs with `other`
      // instead, unless that pair failed too. A claimant that lied cannot keep its seat by
      // failing the pair it sits in, and a dealer that dealt that pair false checks meets
      // the outsider, where its next deviation is its second dispute.
      const std::uint8_t failed_pairs = failed_pairs_known(own_failed_pairs, peers);
      if ((failed_pairs & (1u << other)) != 0 && (failed_pairs & (1u << chosen)) == 0) return {-1, chosen};
      return {-1, other};
    }
    case 2: {
      const int common = 3 - std::countr_zero(disputes) - (31 - std::countl_zero(disputes));
      return {common, common};
    }
    default:
      // Every pair in a dispute: more than one server deviated, and no pair can be trusted.
      return {};
  }
  bool failed = suspended;
  for (const auto& word : peers) failed = failed || (word && word->three_party_failed);
  if (!failed) return {};
  const std::uint8_t failed_pairs = failed_pairs_known(own_failed_pairs, peers);
  for (const int missing : kSuspendedServiceOrder)
    if ((failed_pairs & (1u << missing)) == 0) return {-1, missing};
  return {-1, kSuspendedServiceMissing};
}

}  // namespace mpc::node
