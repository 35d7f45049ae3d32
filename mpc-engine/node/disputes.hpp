// Which servers serve once checks of active security have failed: the disputes between them.
//
// With three servers and at most one deviating, a failed check between two parties means one
// of the two deviated, so the third is honest (Boyle, Gilboa, Ishai and Nof, CCS 2019). A
// server keeps the set of peers it is in a dispute with ("distrusts"), and says it in every
// hello (wire::Hello). It adds a peer there in three cases only, each of which proves that
// peer deviated if this server did not:
// - the pair's two-party engine, serving with that peer, refused a job on a failed check of
//   active security (its own check, or the abort that peer sent), other than the check of a
//   key share against what the third server dealt (which the dealer can fail as well);
// - a three-party AND check failed, and its signed messages show that peer deviated
//   (rss3/and_check_blame.hpp);
// - that peer's hello says it distrusts this server.
// A dispute is known only from a party in it, said directly over the authenticated link: no
// server can put one between the other two. So every dispute an honest server knows contains
// the deviating server, two honest servers are never in one, and the party in two disputes is
// the deviating one: it is excluded until an operator readmits it (exclusion.cpp).
//
// One dispute {a, b}: the third party c serves with one of them and the other stands aside.
// c pairs with a party that asks for it (says it distrusts the other); when both ask, with the
// lower-numbered. A false claim thus buys its maker at most a seat beside an honest server, in
// an actively secure pair, where its next deviation is its second dispute, or a failed pair
// (below): once c's pair with the chosen party has failed, c pairs with the other one, so a
// claimant that lied loses the seat it failed, and a dealer of false checks for that pair meets
// c, where its next deviation is its second dispute.
//
// A failed three-party check that names no peer here (an AND check whose conclusions fall to
// the other servers, the dual-garbling digests, a tag's zero test, or a client's check of what
// the three answered: a client reports it, wire::ExclusionRequest) shows only that one of the
// three deviated. The server that learns of it suspends three-party
// service and says so in its hellos; every server that hears it does the same, so all three
// follow one rule: the pair of servers 1 and 2 serves. If the deviating server is in that pair,
// its next deviation there is a dispute, or a failed pair.
//
// A failed pair: a check of the pair's service fails that names neither member (a client's
// check of the pair's padded answers, which the client reports; the check of a key share
// against what the third server dealt, which the dealer can fail as well). One of the three
// deviated, and the pair is set aside while three-party service is suspended: the next pair in
// the order (servers 1 and 2, 2 and 3, 1 and 3) serves. A server takes a pair's failure from
// what it saw itself, from a client's report, and from the hellos of that pair's two members
// only: a server cannot set aside a pair it is not in, so a deviating server can move the
// service away from its own pairs, never from the honest pair. That pair fails nothing, unless
// its key shares' checks were dealt falsely by the deviating server when the key was imported
// (once that server is in disputes with both others, the pair's members make their own checks:
// pair_check_keeper.hpp); with every pair failed, none is trusted more than another and servers
// 1 and 2 serve again.
//
// Bound: a server deviating in every job it takes part in is out of service after at most three
// failed checks (a three-party one, then at most two disputes or failed pairs), each failing
// the jobs in flight, which the client library sends again (job_attempts.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace mpc::node {

// What a peer said of disputes in its last fresh hello.
struct DisputeWord {
  std::uint8_t distrusts = 0;  // bit p: the peer is in a dispute with party p
  bool three_party_failed = false;
  std::uint8_t failed_pairs = 0;  // bit m: the pair serving without party m failed a check
};

// Party index of the pair (servers 1 and 2) that serves once three-party service is suspended.
inline constexpr int kSuspendedServiceMissing = 2;
// The pairs in the order they serve while three-party service is suspended and pairs fail, by
// the party each runs without.
inline constexpr int kSuspendedServiceOrder[3] = {2, 0, 1};

struct DisputeVerdict {
  int exclude = -1;  // the party in two disputes
  int missing = -1;  // the service the disputes call for runs without it; -1: they say nothing
};

// `own_distrusts`: this server's disputes; `suspended`: three-party service suspended here;
// `own_failed_pairs`: the pairs this server saw fail or a client reported; `peers[p]`: party
// p's word, nullopt for this server and for a peer without a fresh hello.
DisputeVerdict judge_disputes(int self, std::uint8_t own_distrusts, bool suspended, std::uint8_t own_failed_pairs,
                              const std::array<std::optional<DisputeWord>, 3>& peers);

// The failed pairs a server goes by: its own, and each peer's word on the pairs that peer is in.
std::uint8_t failed_pairs_known(std::uint8_t own_failed_pairs, const std::array<std::optional<DisputeWord>, 3>& peers);

}  // namespace mpc::node
