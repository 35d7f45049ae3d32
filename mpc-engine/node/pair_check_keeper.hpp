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
//
// A dealer that deals wrong checks makes the pair it is missing from abort every job. Once that
// server is proven to have deviated (this server holds it in disputes with both others, so with
// one server deviating at most both members are honest), the members make each other's checks
// instead (client_checks::mutual_tags), in memory: each sends its partner its tags when it
// serves in that pair and holds the proof itself, and uses the mutual checks of a key only once
// it has sent its own tags and holds its partner's. A member cannot have an honest partner use
// them while the third server is honest: an honest server holds the third in two disputes only
// if it deviated.
#pragma once

#include <array>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/log.hpp"
#include "common/secret.hpp"
#include "protocol/client_checks/check_rows.hpp"
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
  // With `missing_proven` (it is in disputes with both others, here) the mutual checks where both
  // members' tags have gone, else the dealt ones.
  std::optional<SecretBytes> checks_for(const wire::KeyId& key, int missing, const SecretBytes& share,
                                        bool missing_proven = false) const;

  // This server's tags for its partner in the pair serving without `missing`, to send it; the
  // key counts as sent here once mutual_sent is called. nullopt for a share of another size or
  // a pair this server is not in.
  std::optional<wire::PairCheckDeal> mutual_deal(const wire::KeyId& key, int missing, const SecretBytes& share) const;
  void mutual_sent(const wire::KeyId& key, int missing);

  // The keys whose deals are to go out again (all of them after a return to three-party
  // service), a bounded number at a time so that the poll loop is not held: each call gives the
  // next keys, and nothing once all were given.
  void deal_all_again();
  std::vector<wire::KeyId> next_to_deal(std::size_t at_most);
  // Drops the keys not given yet (a deal failed: deal_all_again later).
  void stop_dealing() { to_deal_.clear(); }
  // Whether keys of deal_all_again are still to be given.
  bool dealing() const { return !to_deal_.empty(); }

 private:
  struct Early {
    int from = 0;
    wire::PairCheckDeal deal;
  };
  bool expected_role(int from, const wire::PairCheckDeal& deal) const;

  using MutualSlot = std::tuple<std::string, std::uint32_t, int, int>;  // key name, version, algorithm, missing
  static MutualSlot slot(const wire::KeyId& key, int missing);
  // The seeds of the mutual checks: the one both members draw from c_(m+1), this server's own.
  std::optional<std::pair<client_checks::CheckSeed, client_checks::CheckSeed>> mutual_seeds(
      const wire::KeyId& key, int missing, const SecretBytes& share) const;

  int party_;
  SecretBytes dealer_secret_;
  mutable std::mutex mutual_mutex_;  // the engine's thread asks for checks; the shell's takes tags
  std::map<MutualSlot, SecretBytes> mutual_received_;
  std::set<MutualSlot> mutual_sent_;
  store::ShareStore& store_;
  const Logger& log_;
  std::deque<Early> early_;
  static constexpr std::size_t kMaxEarly = 4096;
  std::vector<wire::KeyId> to_deal_;
};

}  // namespace mpc::node
