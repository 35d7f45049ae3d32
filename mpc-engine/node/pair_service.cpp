#include "node/pair_service.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::node {

settings::ServerSettings pair_settings(const settings::ServerSettings& own, Pair pair) {
  settings::ServerSettings settings = own;
  settings.protocol = settings::Protocol::Gc2;
  // security as the server's own: under "active" each member is held to its half by the checks
  // the third server dealt (pair_check_keeper.hpp) and the client's pads on every output.
  // Garbling is slower than the three-party protocol: a job the client would give up on
  // long before it ends must not hold the pair meanwhile.
  settings.limits.max_job_blocks = std::min(own.limits.max_job_blocks, settings::degraded_max_job_blocks(own));
  settings.party = pair.index_of(own.party);
  const int partner = pair.party_at(1 - settings.party);
  settings.peers.clear();
  for (const auto& peer : own.peers) {
    if (peer.party != partner) continue;
    settings::PeerSettings renamed = peer;
    renamed.party = 1 - settings.party;
    settings.peers.push_back(renamed);
  }
  if (settings.peers.size() != 1) throw Error(Component::Server, "the pair's other server is not a configured peer");
  return settings;
}

PairHost::PairHost(EngineHost& shell, PeerLinks& links, int self, Pair pair, const PairCheckKeeper& checks,
                   std::function<bool(int)> missing_proven)
    : shell_(shell), links_(links), self_(self), pair_(pair), checks_(checks), missing_proven_(std::move(missing_proven)) {
  if (self != pair.leader() && self != pair.second()) throw Error(Component::Server, "a server outside the pair");
}

PairHost::~PairHost() {
  half_.clear();
  check_.clear();
}

const SecretBytes* PairHost::key_share_check(const wire::KeyId& key) {
  const SecretBytes* share = shell_.key_material(key);
  if (share == nullptr) return nullptr;
  auto checks = checks_.checks_for(key, pair_.missing, *share, missing_proven_ && missing_proven_(pair_.missing));
  if (!checks) return nullptr;
  check_ = std::move(*checks);
  return &check_;
}

const SecretBytes* PairHost::key_material(const wire::KeyId& key) {
  const SecretBytes* share = shell_.key_material(key);
  if (share == nullptr) return nullptr;
  const std::size_t bytes = wire::material_bytes(key.algorithm);
  if (share->size() != 2 * bytes) return nullptr;
  if (half_.size() != bytes) half_ = SecretBytes(bytes);
  const auto half = share->span().subspan(self_ == pair_.leader() ? 0 : bytes, bytes);
  std::copy(half.begin(), half.end(), half_.data());
  return &half_;
}

bool PairHost::try_send(int party, std::span<const std::uint8_t> frame) {
  if (party != 0 && party != 1) throw Error(Component::Server, "send to a party outside the pair");
  const int to = pair_.party_at(party);
  if (to == self_) throw Error(Component::Server, "send to itself");
  return links_.try_send_to(to, wire::wrap_degraded(frame));
}

}  // namespace mpc::node
