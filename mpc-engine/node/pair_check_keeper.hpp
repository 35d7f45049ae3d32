// The checks that hold each member of a pair serving without the third server to its half of a
// key (protocol/client_checks/pair_checks.hpp): those this server deals, while all three serve,
// for the pair that would serve without it, and those it holds, as dealt by each of the other
// two, for the two pairs it would serve in.
//
// Deals go out when this server stores a key and, for every key it holds, whenever the cluster
// returns to three-party service (a peer may have been restored or missed a deal): dealt again,
// a share gives the same checks. A deal is stored only for a key this server holds, and only
// when it comes from the server it names as dealer in its role: from server i - 1 the leader's
// checks (this server leads the pair without i - 1), from server i + 1 the second member's part.
// One that comes before the key (the three servers store an imported key at about the same
// time) waits in memory, a bounded number of them, until the key is stored.
#pragma once

#include <array>
#include <cstddef>
#include <deque>
#include <optional>
#include <vector>

#include "common/log.hpp"
#include "common/secret.hpp"
#include "store/share_store.hpp"
#include "transport/curve_keys.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::node {

class PairCheckKeeper {
 public:
  PairCheckKeeper(int party, const transport::CurveKeyPair& own, store::ShareStore& store, const Logger& log);
  ~PairCheckKeeper();
  PairCheckKeeper(const PairCheckKeeper&) = delete;
  PairCheckKeeper& operator=(const PairCheckKeeper&) = delete;

  // This server's deals of `key`, whose replicated share is `share` (x || a), for the pair
  // serving without it: [0] to its leader (party + 1), [1] to its second member (party + 2).
  std::array<wire::PairCheckDeal, 2> deal(const wire::KeyId& key, const SecretBytes& share) const;

  // Deals that came from server `from`; a deal not meant for this server is logged and dropped.
  void take(int from, std::vector<wire::PairCheckDeal> deals);
  // The key was stored here: deals of it that came before are stored now.
  void key_stored(const wire::KeyId& key);

  // The checks (client_checks::serialize) of this server's half of `key` in the pair serving
  // without `missing`, completed with `share` for the second member; nullopt when none was dealt.
  std::optional<SecretBytes> checks_for(const wire::KeyId& key, int missing, const SecretBytes& share) const;

  // The keys whose deals are to go out again (all of them after a return to three-party
  // service), a bounded number at a time so that the poll loop is not held: each call gives the
  // next keys, and nothing once all were given.
  void deal_all_again();
  std::vector<wire::KeyId> next_to_deal(std::size_t at_most);
  // Drops the keys not given yet (a deal failed: deal_all_again later).
  void stop_dealing() { to_deal_.clear(); }

 private:
  struct Early {
    int from = 0;
    wire::PairCheckDeal deal;
  };
  bool expected_role(int from, const wire::PairCheckDeal& deal) const;

  int party_;
  SecretBytes dealer_secret_;
  store::ShareStore& store_;
  const Logger& log_;
  std::deque<Early> early_;
  static constexpr std::size_t kMaxEarly = 4096;
  std::vector<wire::KeyId> to_deal_;
};

}  // namespace mpc::node
