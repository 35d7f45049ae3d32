// Two servers of a three-server cluster serving without the third (node/membership.hpp).
//
// Replicated sharing already gives any two servers the key: party i holds x_i and
// a_i = x_{i-1} ^ v, so the pair (i, i+1) holds x_i and a_{i+1} = x_i ^ v, two XOR shares of v.
// The pair runs the two-party engine between them on those halves, i as its party 1 (the
// garbler and leader) and i+1 as its party 2. No share is converted or written: each server
// cuts its half out of the share it already holds, in memory, when a job needs it, and the
// checks that hold each member to its half are those the third server dealt while all three
// served (node/pair_check_keeper.hpp).
//
// The engine sees a host of its own (PairHost): the halves as key material, its two parties
// numbered 0 and 1, and its frames wrapped (wire::wrap_degraded) so the shell tells them from
// the three-party engine's.
#pragma once

#include <functional>
#include <memory>

#include "node/engine.hpp"
#include "node/pair_check_keeper.hpp"
#include "settings/server_settings.hpp"

namespace mpc::node {

// The pair serving without `missing`: its leader holds x_i, its second member a_{i+1}.
struct Pair {
  int missing = 0;
  int leader() const { return (missing + 1) % 3; }
  int second() const { return (missing + 2) % 3; }
  // 0 for the leader, 1 for the second member.
  int index_of(int party) const { return party == leader() ? 0 : 1; }
  int party_at(int index) const { return index == 0 ? leader() : second(); }
};

// The settings the two-party engine runs with for a server of `pair`: protocol gc2, party its
// index in the pair, the other member its one peer; everything else as the server's own.
settings::ServerSettings pair_settings(const settings::ServerSettings& own, Pair pair);

class PairHost final : public EngineHost {
 public:
  // `missing_proven(m)`: whether this server holds server m in disputes with both others (the
  // pair then uses the checks its members make for each other, pair_check_keeper.hpp).
  PairHost(EngineHost& shell, PeerLinks& links, int self, Pair pair, const PairCheckKeeper& checks,
           std::function<bool(int)> missing_proven);
  ~PairHost() override;
  PairHost(const PairHost&) = delete;
  PairHost& operator=(const PairHost&) = delete;

  // The XOR half of the replicated share (x for the leader, a for the second member), cut
  // into one wiped buffer that the next call overwrites.
  const SecretBytes* key_material(const wire::KeyId& key) override;
  // The checks of this server's half the third server dealt, or those the members made for each
  // other once it is proven to have deviated (pair_check_keeper.hpp), into one wiped buffer
  // that the next call overwrites.
  const SecretBytes* key_share_check(const wire::KeyId& key) override;
  std::optional<PairedShare> paired_share(const wire::KeyId& key) override {
    return PairedShare{shell_.key_material(key), self_ == pair_.leader()};
  }
  void answer(const JobKey& key, wire::Reply reply) override { shell_.answer(key, std::move(reply)); }
  void forget(const JobKey& key) override { shell_.forget(key); }
  bool take_shell_frame(PeerEnvelope& envelope) override { return shell_.take_shell_frame(envelope); }
  PeerLinks& peers() override { return links_; }
  bool try_send(int party, std::span<const std::uint8_t> frame) override;
  bool keep_alive() override { return shell_.keep_alive(); }
  std::optional<Refusal> store_generated(const wire::KeyId&, const SecretBytes&) override {
    return Refusal{wire::Status::BadRequest, "a pair of servers generates no keys"};
  }
  void link_broke(int party) override { shell_.link_broke(pair_.party_at(party)); }
  void deviation_caught(int party, const std::string& check, const std::string& where) override {
    shell_.deviation_caught(party < 0 ? -1 : pair_.party_at(party), check, where);
  }
  void unattributed_check_failed(const std::string& check, const std::string& where) override {
    shell_.pair_failed(pair_.missing, check, where);
  }

 private:
  EngineHost& shell_;
  PeerLinks& links_;
  int self_;
  Pair pair_;
  const PairCheckKeeper& checks_;
  std::function<bool(int)> missing_proven_;
  SecretBytes half_;
  SecretBytes check_;
};

// A two-party engine serving for a pair, with what it is built from (all of which must
// outlive it: the engine goes first).
struct PairService {
  Pair pair;
  settings::ServerSettings settings;
  std::unique_ptr<PairHost> host;
  std::unique_ptr<Engine> engine;
  ~PairService() { engine.reset(); }
};

}  // namespace mpc::node
