#include "node/membership.hpp"

#include "common/error.hpp"

namespace mpc::node {

std::uint64_t unix_ms_now() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

Membership::Membership(int self, MembershipTiming timing, bool two_party_allowed, Clock::time_point started)
    : self_(self), timing_(timing), two_party_allowed_(two_party_allowed), started_(started) {
  if (self < 0 || self > 2) throw Error(Component::Server, "party index out of range");
}

void Membership::heard(int party, Clock::time_point now) {
  if (party < 0 || party > 2 || party == self_) return;
  auto& last = last_heard_[static_cast<std::size_t>(party)];
  if (!last || now - *last > timing_.peer_down) heard_since_[static_cast<std::size_t>(party)] = now;
  last = now;
}

void Membership::lost(int party) {
  if (party < 0 || party > 2 || party == self_) return;
  last_heard_[static_cast<std::size_t>(party)].reset();
  last_hello_[static_cast<std::size_t>(party)].reset();
}

bool Membership::awaiting_return(Clock::time_point now) const {
  for (int party = 0; party < 3; ++party) {
    if (party == self_) continue;
    const auto& hello = last_hello_[static_cast<std::size_t>(party)];
    if (!hello || now - hello_at_[static_cast<std::size_t>(party)] > timing_.peer_down) return false;
    if (hello->mode != wire::ClusterMode::TwoParty || hello->missing != self_) return false;
  }
  return true;
}

bool Membership::settled(Clock::time_point now) const {
  for (int party = 0; party < 3; ++party) {
    if (party == self_) continue;
    if (!hears(party, now)) return false;
    // A peer killed a moment ago is still "heard" for peer_down; a heartbeat and a half of
    // silence already says a switch may be coming, and a job given up now is worth resending.
    if (now - *last_heard_[static_cast<std::size_t>(party)] > timing_.heartbeat + timing_.heartbeat / 2) return false;
    const auto& hello = last_hello_[static_cast<std::size_t>(party)];
    if (!hello || now - hello_at_[static_cast<std::size_t>(party)] > timing_.peer_down) return false;
    const std::uint8_t others = static_cast<std::uint8_t>(0b111 & ~(1u << party));
    if (hello->mode != mode_ || (hello->heard & others) != others) return false;
  }
  return true;
}

void Membership::hello(int party, const wire::Hello& hello, Clock::time_point now) {
  if (party < 0 || party > 2 || party == self_) return;
  heard(party, now);
  last_hello_[static_cast<std::size_t>(party)] = hello;
  hello_at_[static_cast<std::size_t>(party)] = now;
  if (!current(hello)) return;
  // A peer that says it caught this server deviating did not, if this server did not: either
  // way that peer deviated. A suspension is taken up from anyone, so that all three follow it
  // (it names nobody, and any server can call for it by itself).
  if ((hello.distrusts & (1u << self_)) != 0) distrusts_ |= static_cast<std::uint8_t>(1u << party);
  if (hello.three_party_failed) three_party_failed_ = true;
}

void Membership::caught(int party) {
  if (party < 0 || party > 2 || party == self_) return;
  distrusts_ |= static_cast<std::uint8_t>(1u << party);
}

std::optional<std::uint32_t> Membership::peers_readmissions(Clock::time_point now) const {
  std::optional<std::uint32_t> fewest;
  for (int party = 0; party < 3; ++party) {
    if (party == self_) continue;
    const auto& hello = last_hello_[static_cast<std::size_t>(party)];
    if (!hello || now - hello_at_[static_cast<std::size_t>(party)] > timing_.peer_down ||
        hello->readmissions <= readmissions_)
      return std::nullopt;
    fewest = fewest ? std::min(*fewest, hello->readmissions) : hello->readmissions;
  }
  return fewest;
}

std::array<std::optional<DisputeWord>, 3> Membership::peers_words(Clock::time_point now) const {
  std::array<std::optional<DisputeWord>, 3> words;
  for (int party = 0; party < 3; ++party) {
    if (party == self_) continue;
    const auto& hello = last_hello_[static_cast<std::size_t>(party)];
    const auto at = hello_at_[static_cast<std::size_t>(party)];
    if (!hello || now - at > timing_.peer_down || !current(*hello)) continue;
    words[static_cast<std::size_t>(party)] = DisputeWord{hello->distrusts, hello->three_party_failed, hello->failed_pairs};
  }
  return words;
}

DisputeVerdict Membership::disputes(Clock::time_point now) const {
  return judge_disputes(self_, distrusts_, three_party_failed_, failed_pairs_, peers_words(now));
}

std::uint8_t Membership::failed_pairs_known(Clock::time_point now) const {
  return node::failed_pairs_known(failed_pairs_, peers_words(now));
}

bool Membership::hears(int party, Clock::time_point now) const {
  if (party == self_) return true;
  const auto& last = last_heard_[static_cast<std::size_t>(party)];
  return last && now - *last <= timing_.peer_down;
}

bool Membership::heartbeat_due(Clock::time_point now) const { return now - last_heartbeat_ >= timing_.heartbeat; }

wire::Hello Membership::own_hello(Clock::time_point now) const {
  wire::Hello hello;
  for (int party = 0; party < 3; ++party)
    if (party != self_ && hears(party, now)) hello.heard |= static_cast<std::uint8_t>(1u << party);
  hello.mode = mode_;
  hello.missing = missing_ < 0 ? wire::kNoParty : static_cast<std::uint8_t>(missing_);
  hello.excluded = excluded_ < 0 ? wire::kNoParty : static_cast<std::uint8_t>(excluded_);
  hello.distrusts = distrusts_;
  hello.three_party_failed = three_party_failed_;
  hello.failed_pairs = failed_pairs_;
  hello.readmissions = readmissions_;
  return hello;
}

std::optional<int> Membership::peers_exclusion(Clock::time_point now) const {
  std::optional<int> said;
  for (int party = 0; party < 3; ++party) {
    if (party == self_) continue;
    const auto& hello = last_hello_[static_cast<std::size_t>(party)];
    const auto heard_at = hello_at_[static_cast<std::size_t>(party)];
    if (!hello || now - heard_at > timing_.peer_down) return std::nullopt;
    if (excluded_set_at_ && heard_at < *excluded_set_at_ + timing_.peer_down) return std::nullopt;
    const int excluded = hello->excluded == wire::kNoParty ? -1 : hello->excluded;
    if (said && *said != excluded) return std::nullopt;
    said = excluded;
  }
  if (!said || *said == excluded_) return std::nullopt;
  return said;
}

std::vector<int> Membership::serving() const {
  std::vector<int> parties;
  for (int party = 0; party < 3; ++party)
    if (party != missing_) parties.push_back(party);
  return parties;
}

std::optional<ModeChange> Membership::serve_without(int party, Clock::time_point now) {
  const bool pair = hears(3 - self_ - party, now);
  if (pair && mode_ == wire::ClusterMode::TwoParty && missing_ == party) return std::nullopt;
  if (!pair && mode_ == wire::ClusterMode::Full) return std::nullopt;
  if (pair) switch_to(wire::ClusterMode::TwoParty, party);
  else switch_to(wire::ClusterMode::Full, -1);
  return ModeChange{mode_, missing_};
}

void Membership::switch_to(wire::ClusterMode mode, int missing) {
  mode_ = mode;
  missing_ = missing;
}

std::optional<ModeChange> Membership::update(Clock::time_point now) {
  if (!two_party_allowed_) return std::nullopt;
  // An excluded server, or one the disputes leave out, is served without however well it is
  // heard; the two others serve while they hear each other.
  const int left_out = excluded_ >= 0 ? excluded_ : disputes(now).missing;
  if (left_out >= 0 && left_out != self_) return serve_without(left_out, now);
  if (left_out == self_) {
    // It serves nothing, and no pair serves with it.
    if (mode_ == wire::ClusterMode::Full) return std::nullopt;
    switch_to(wire::ClusterMode::Full, -1);
    return ModeChange{mode_, missing_};
  }
  // A peer's hello older than peer_down says nothing about now.
  const auto fresh_hello = [&](int party) -> const wire::Hello* {
    const auto& hello = last_hello_[static_cast<std::size_t>(party)];
    if (!hello || now - hello_at_[static_cast<std::size_t>(party)] > timing_.peer_down) return nullptr;
    return &*hello;
  };
  const auto other_peers = [&](int excluded) {
    std::vector<int> out;
    for (int party = 0; party < 3; ++party)
      if (party != self_ && party != excluded) out.push_back(party);
    return out;
  };
  if (mode_ == wire::ClusterMode::Full) {
    if (now - started_ < timing_.peer_down + timing_.heartbeat) return std::nullopt;
    for (int missing = 0; missing < 3; ++missing) {
      if (missing == self_ || hears(missing, now)) continue;
      const int partner = other_peers(missing).front();
      const wire::Hello* hello = fresh_hello(partner);
      if (!hears(partner, now) || hello == nullptr) return std::nullopt;
      // The partner no longer hears the third either (or already serves without it).
      const bool partner_lost_it = (hello->heard & (1u << missing)) == 0 ||
                                   (hello->mode == wire::ClusterMode::TwoParty && hello->missing == missing);
      if (!partner_lost_it) return std::nullopt;
      switch_to(wire::ClusterMode::TwoParty, missing);
      return ModeChange{mode_, missing_};
    }
    return std::nullopt;
  }
  const int partner = other_peers(missing_).front();
  if (!hears(partner, now)) {
    // Alone: no pair can serve. Three-party service fails every job at once until the others
    // are back.
    switch_to(wire::ClusterMode::Full, -1);
    return ModeChange{mode_, missing_};
  }
  // Back on this server's own observation: the third heard here for rejoin, and it hears this
  // server. Whether it hears the partner is the partner's affair: a partner that does not talk
  // to it (it cannot be told from one that is cut off from it) must not hold the pair's
  // weaker service for both; the rest of the cluster returns, and the partner follows or fails
  // the jobs it will not compute.
  const wire::Hello* returning = fresh_hello(missing_);
  const bool back = hears(missing_, now) && now - heard_since_[static_cast<std::size_t>(missing_)] >= timing_.rejoin &&
                    returning != nullptr && (returning->heard & (1u << self_)) != 0;
  if (!back) return std::nullopt;
  switch_to(wire::ClusterMode::Full, -1);
  return ModeChange{mode_, missing_};
}

void LinkBreaks::note(int party, Clock::time_point when) {
  if (party < 0 || party > 2) return;
  broke_at_[static_cast<std::size_t>(party)].store(std::max<Clock::rep>(when.time_since_epoch().count(), 1),
                                                   std::memory_order_relaxed);
}

bool LinkBreaks::recent(Clock::time_point now, Clock::duration window) const {
  for (const auto& broke_at : broke_at_) {
    const Clock::rep at = broke_at.load(std::memory_order_relaxed);
    if (at != 0 && now - Clock::time_point(Clock::duration(at)) <= window) return true;
  }
  return false;
}

}  // namespace mpc::node
