// The shell's part in keeping a three-server cluster serving with one server down: heartbeats,
// lost sessions, and the switches between three-party and two-party service (node.hpp,
// membership.hpp, pair_service.hpp).
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "common/fault_injection.hpp"
#include "node/key_admin.hpp"
#include "node/node.hpp"
#include "protocol/client_checks/share_checks.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::node {
namespace {

std::string describe_mode(const ModeChange& change) {
  if (change.mode == wire::ClusterMode::Full) return "three-party service";
  return "two-party service without server " + std::to_string(change.missing + 1);
}

}  // namespace

void Node::tend_membership(std::chrono::steady_clock::time_point now) {
  if (!membership_) return;
  (void)keep_alive();
  update_pair_duties(now);
  if (!pending_change_) return;
#if defined(MPC_FAULT_INJECTION)
  // A server slow to change modes, so that its peers serve in the next mode while it still
  // serves in the last one. The newest decision counts: a change undone meanwhile is not made.
  if (const auto late = fault::armed("late-mode-switch")) {
    if (auto newer = membership_->update(now)) pending_change_ = newer;
    const ModeChange serving = serving_mode();
    if (pending_change_->mode == serving.mode && pending_change_->missing == serving.missing) {
      pending_change_.reset();
      late_switch_since_.reset();
      return;
    }
    if (!late_switch_since_) late_switch_since_ = now;
    if (now - *late_switch_since_ < std::chrono::milliseconds(*late)) return;
  }
#endif
  late_switch_since_.reset();
  const ModeChange change = *pending_change_;
  pending_change_.reset();
  switch_mode(change);
  if (membership_->hello_changed(now)) send_hello(now);
}

ModeChange Node::serving_mode() const {
  if (serving_.parties.size() == 3) return {};
  for (int party = 0; party < 3; ++party)
    if (std::find(serving_.parties.begin(), serving_.parties.end(), party) == serving_.parties.end())
      return {wire::ClusterMode::TwoParty, party};
  throw Error(Component::Server, "serving with fewer than two servers");
}

void Node::send_hello(std::chrono::steady_clock::time_point now) {
  const wire::Hello hello = membership_->own_hello(now);
  const auto frame = wire::encode_hello(hello);
  for (int party = 0; party < 3; ++party)
    if (party != settings_.party && !shuns(party)) (void)peers_->try_send_to(party, frame);
  membership_->sent(hello, now);
}

bool Node::shuns(int party) const {
#if defined(MPC_FAULT_INJECTION)
  // A pair member that neither hears nor speaks to the server its pair serves without, as one
  // would that wants to keep the pair's service: the others must return all the same.
  if (membership_ && fault::armed("shun-missing-server") && membership_->mode() == wire::ClusterMode::TwoParty)
    return membership_->missing() == party;
#endif
  (void)party;
  return false;
}

bool Node::keep_alive() {
  if (!membership_) return true;
  const auto now = std::chrono::steady_clock::now();
#if defined(MPC_FAULT_INJECTION)
  // A server that claims disputes it never had, with the servers whose numbers (1-based) are
  // the digits of N, as one would that wants an honest server out of service.
  if (const auto blamed = fault::armed("false-blame"))
    for (auto digits = *blamed; digits != 0; digits /= 10)
      if (digits % 10 >= 1 && digits % 10 <= 3) membership_->caught(static_cast<int>(digits % 10) - 1);
#endif
  // Reading a connection's monitor costs system calls even when it has nothing, and this runs
  // on every turn of the shell's loop: a lost session is looked for at most every
  // kSessionCheckPeriod, far below the heartbeats that decide who is down.
  if (now - last_session_check_ >= kSessionCheckPeriod) {
    last_session_check_ = now;
    for (int party = 0; party < 3; ++party)
      if (party != settings_.party) note_lost_sessions(party);
  }
  follow_disputes(now);
  follow_stall(now);
  if (!pending_change_) pending_change_ = membership_->update(now);
#if defined(MPC_FAULT_INJECTION)
  // A host starved under load while it computes a key: once a batch computing a key generation
  // has started here, the shell stalls N ms (no hello, no frame), as the batch's worker does
  // (engines/three_party/batch_worker.cpp): its peers switch to the pair without it while the
  // three still compute the key.
  if (const auto stall_ms = fault::armed("stall-generation")) {
    static bool stalled = false;
    if (!stalled && std::any_of(live_.begin(), live_.end(), [&](const auto& job) {
          return job.second.kind == JobKind::KeyGeneration && engine_->computing(job.first);
        })) {
      stalled = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(*stall_ms));
    }
  }
#endif
  if (membership_->heartbeat_due(now) || membership_->hello_changed(now)) send_hello(now);
  return !pending_change_;
}

// Worth waiting for: a peer heard since its session was last lost (alive, its connection still
// coming up after it started or restarted), or one this server has not heard from at all and
// never lost (the cluster starting up). Not one whose session was lost and that has not spoken
// since, nor one gone quiet for peer_down: it went away, and a send to it fails at once.
bool Node::peer_alive(int party) {
  const std::uint64_t lost = note_lost_sessions(party);
  return membership_->hears(party, std::chrono::steady_clock::now()) ||
         (lost == 0 && !membership_->ever_heard(party));
}

std::uint64_t Node::note_lost_sessions(int party) {
  auto& known = sessions_lost_[static_cast<std::size_t>(party)];
  const std::uint64_t lost = peers_->sessions_lost(party);
  if (lost != known) {
    known = lost;
    membership_->lost(party);
  }
  return lost;
}

void Node::switch_mode(const ModeChange& change) {
  ++mode_switches_;
  stall_.reset();  // a new service: what the old one failed is not held against it
  mode_since_unix_ms_ = unix_ms_now();
  const auto left_since = mode_entered_;
  mode_entered_ = std::chrono::steady_clock::now();
  const std::string mode = describe_mode(change);
  log_.warn("cluster mode changed", {{"mode", mode}, {"switches", mode_switches_}});
  // What was asked of the old service is answered now; the client library sends it again.
  std::vector<JobKey> live;
  live.reserve(live_.size());
  for (const auto& [key, request] : live_) live.push_back(key);
  for (const auto& key : live) {
    const Live& job = live_.at(key);
    // A key generation (three-party service only) that a batch computes already is left to the
    // batch, which all three run to its end: a server that gave it up here would store no share
    // while the others store theirs, and the client's rollback would spend the key's id.
    if (!job.held && job.kind == JobKind::KeyGeneration && engine_->computing(key)) continue;
    if (!job.held) (void)active().abandon(key);
    give_up(key, wire::Status::Regrouping, "the cluster switched to " + mode + ": send the request again", false);
  }
  deadlines_.clear();
  reminders_.clear();
  for (int party = 0; party < 3; ++party)
    if (party != settings_.party) (void)outgoing_notes_.take_frames(party);
  if (change.mode == wire::ClusterMode::Full) {
    // A server back from an outage may have been restored from a copy that lacks some deals.
    pair_checks_due_ = true;
    serving_.parties = {0, 1, 2};
    serving_.leader = 0;
    pair_ = nullptr;
  } else {
    const Pair pair{change.missing};
    serving_.parties.clear();
    for (int party = 0; party < 3; ++party)
      if (party != change.missing) serving_.parties.push_back(party);
    serving_.leader = pair.leader();
    pair_ = pairs_[static_cast<std::size_t>(change.missing)].get();
    if (pair_ == nullptr) throw Error(Component::Server, "two-party service without a pair engine");
  }
  // A pair formed again (a member restarted meanwhile holds no tags of its partner's): the
  // members' own checks go out again.
  mutual_missing_ = -1;
  update_pair_duties(std::chrono::steady_clock::now());
  pass_on_refusals(left_since);
}

void Node::build_pairs() {
  if (!membership_ || !membership_->two_party_allowed()) return;
  for (int missing = 0; missing < 3; ++missing) {
    if (missing == settings_.party) continue;
    const Pair pair{missing};
    auto service = std::make_unique<PairService>();
    service->pair = pair;
    service->settings = pair_settings(settings_, pair);
    service->host = std::make_unique<PairHost>(*this, *peers_, settings_.party, pair, *pair_checks_,
                                               [this](int missing) { return missing_proven(missing); });
    service->engine = make_pair_engine_(
        EngineResources{service->settings, log_, own_keys_, context_, store_, epochs_, *service->host});
    pairs_[static_cast<std::size_t>(missing)] = std::move(service);
  }
  update_pair_duties(std::chrono::steady_clock::now());
}

void Node::update_pair_duties(std::chrono::steady_clock::time_point now) {
  // Idle: no request held for a while. Material made ahead must not slow the jobs of the
  // service that runs now, above all not its latency.
  constexpr std::chrono::milliseconds kIdleAfter{200};
  if (!live_.empty()) last_busy_ = now;
  const bool idle = now - last_busy_ >= kIdleAfter;
  for (auto& service : pairs_) {
    if (!service) continue;
    const int partner = service->pair.party_at(1 - service->pair.index_of(settings_.party));
    Engine::PairDuty duty = Engine::PairDuty::Serving;
    // No material is made with an excluded server, nor by it, nor with a peer in a dispute.
    const int excluded = membership_->excluded_party();
    const bool distrusted = (membership_->distrusts() & (1u << partner)) != 0;
    if (service.get() != pair_ && ((excluded >= 0 && service->pair.missing != excluded) || distrusted)) {
      duty = Engine::PairDuty::Waiting;
    } else if (service.get() != pair_) {
      if (!membership_->hears(partner, now)) duty = Engine::PairDuty::Waiting;
      else duty = idle ? Engine::PairDuty::Standby : Engine::PairDuty::Paced;
    }
    service->engine->set_pair_duty(duty);
  }
}

std::vector<Engine*> Node::standing_pairs() const {
  std::vector<Engine*> out;
  for (const auto& service : pairs_)
    if (service && service.get() != pair_) out.push_back(service->engine.get());
  return out;
}

// The servers do not switch at the same instant. A request that reached this server in the
// service it just left, and the others in the one it joins, is held by them for an answer or
// a batch that will not come from here: this server refused it, gave it up at the switch, or
// its engine failed it with a peer already gone (a note about it that came meanwhile was for
// the other service and went unheard). So every refusal of the service just left goes to the
// new one: as the leader to the followers, which answer the request the same way at once, or
// as a follower to the leader, which gives it up everywhere. A server that never held the
// request keeps the word as a tombstone and answers its copy at once if it comes.
void Node::pass_on_refusals(std::chrono::steady_clock::time_point since) {
  for (const auto& [key, word] : ledger_.refusals_since(since)) {
    if (!leader()) {
      tell(serving_.leader, key, word);
      continue;
    }
    for (int party : serving_.parties)
      if (party != settings_.party) tell(party, key, word);
  }
}

void Node::take_pair_frame(int from, std::span<const std::uint8_t> inner) {
  if (from < 0 || from > 2 || from == settings_.party) return;
  // Two servers belong to one pair: the one without the third.
  PairService* service = pairs_[static_cast<std::size_t>(3 - settings_.party - from)].get();
  if (service == nullptr) return;
  PeerEnvelope envelope;
  envelope.from_party = service->pair.index_of(from);
  envelope.data.assign(inner.begin(), inner.end());
  service->engine->take_peer_frame(std::move(envelope));
}

// In three-party service a change reaches all three or, through the client's rollback,
// none; in two-party service the third cannot take it, so it is refused outright.
std::optional<std::string> Node::key_change_refusal() {
  if (exclusion_)
    return "keys are changed only while all three servers serve: server " + std::to_string(exclusion_->party + 1) +
           " is excluded until an operator readmits it; nothing was changed";
  if (!membership_ || membership_->mode() == wire::ClusterMode::Full) return std::nullopt;
  return "keys are changed only while all three servers serve: server " +
         std::to_string(membership_->missing() + 1) + " is not serving; nothing was changed";
}

}  // namespace mpc::node

namespace mpc::node {

bool Node::regrouping() {
  if (!membership_ || !membership_->two_party_allowed()) return false;
  const auto now = std::chrono::steady_clock::now();
  // Just after a switch, a request that reached another server in the service it left may
  // fail a batch of this one (that server holds no copy of it): worth sending again too.
  const auto window = settings_.limits.peer_down + settings_.limits.heartbeat;
  return pending_change_ || membership_->mode() == wire::ClusterMode::TwoParty || !membership_->settled(now) ||
         link_breaks_.recent(now, window) || (mode_switches_ > 0 && now - mode_entered_ < window);
}

wire::Status Node::failure_status(wire::Status status) {
  return status == wire::Status::PeerFailure && regrouping() ? wire::Status::Regrouping : status;
}

void Node::tend_pair_checks(std::chrono::steady_clock::time_point now) {
  if (!pair_checks_ || !membership_) return;
  if (pair_checks_due_ && now >= pair_checks_retry_ && membership_->mode() == wire::ClusterMode::Full &&
      membership_->settled(now)) {
    pair_checks_->deal_all_again();
    pair_checks_due_ = false;
    pair_checks_sweep_ = true;
  }
  // A few keys per turn of the poll loop: a store of many keys is not dealt in one go.
  constexpr std::size_t kKeysPerTurn = 64;
  tend_mutual_checks(now);
  const auto keys = pair_checks_->next_to_deal(kKeysPerTurn);
  if (keys.empty()) return;
  if (deal_pair_checks(keys)) {
    if (pair_checks_sweep_ && !pair_checks_->dealing()) {
      log_.info("pair checks of every key dealt to both peers");
      pair_checks_sweep_ = false;
    }
    return;
  }
  pair_checks_due_ = true;  // a peer could not be sent its deals: all again, a little later
  pair_checks_retry_ = now + std::chrono::seconds(1);
  pair_checks_->stop_dealing();
}

bool Node::missing_proven(int missing) const {
  return membership_ && missing >= 0 && membership_->disputes(std::chrono::steady_clock::now()).exclude == missing;
}

void Node::tend_mutual_checks(std::chrono::steady_clock::time_point now) {
  const int missing = pair_ != nullptr ? pair_->pair.missing : -1;
  if (missing < 0 || !missing_proven(missing)) {
    mutual_missing_ = -1;
    mutual_to_send_.clear();
    return;
  }
  if (mutual_missing_ != missing) {
    mutual_missing_ = missing;
    mutual_to_send_.clear();
    for (const auto& stored : store_.list()) mutual_to_send_.push_back(stored.key);
    log_.warn("the pair makes its checks itself: the server that dealt them is in disputes with both others",
              {{"server", missing + 1}, {"keys", static_cast<std::uint64_t>(mutual_to_send_.size())}});
  }
  if (mutual_to_send_.empty() || now < mutual_retry_) return;
  const int partner = 3 - settings_.party - missing;
  // A few keys per turn of the poll loop, as the deals go.
  constexpr std::size_t kKeysPerTurn = 64;
  std::vector<wire::PairCheckDeal> deals;
  std::vector<wire::KeyId> keys;
  while (!mutual_to_send_.empty() && deals.size() < kKeysPerTurn) {
    wire::KeyId key = std::move(mutual_to_send_.back());
    mutual_to_send_.pop_back();
    try {
      const std::optional<SecretBytes> share = store_.get(key);
      if (!share) continue;  // deleted meanwhile
      if (auto deal = pair_checks_->mutual_deal(key, missing, *share)) {
        deals.push_back(std::move(*deal));
        keys.push_back(std::move(key));
      }
    } catch (const Error& error) {
      log_.warn("no pair checks made for the partner", {{"key", wire::describe(key)}, {"error", error.what()}});
    }
  }
  if (deals.empty()) return;
  auto frame = wire::encode_pair_checks(deals);
  const bool sent = peers_->send_to(partner, frame);
  wipe(frame.data(), frame.size());
  if (!sent) {
    mutual_to_send_.insert(mutual_to_send_.end(), keys.begin(), keys.end());
    mutual_retry_ = now + std::chrono::seconds(1);
    return;
  }
  for (const auto& key : keys) pair_checks_->mutual_sent(key, missing);
}

bool Node::deal_pair_checks(std::span<const wire::KeyId> keys) {
  std::array<std::vector<wire::PairCheckDeal>, 2> deals;  // to the leader, to the second member
  for (const auto& key : keys) {
    std::optional<SecretBytes> share;
    try {
      share = store_.get(key);
    } catch (const Error& error) {
      log_.warn("no pair checks dealt", {{"key", wire::describe(key)}, {"error", error.what()}});
      continue;
    }
    if (!share) continue;  // deleted meanwhile
    if (share->size() != 2 * wire::material_bytes(key.algorithm)) continue;
    auto dealt = pair_checks_->deal(key, *share);
#if defined(MPC_FAULT_INJECTION)
    // "false-deal": checks whose first peer tag has bit 0 flipped, as a dealer would deal that
    // wants the pair it is missing from to fail every job of the key.
    if (fault::armed("false-deal"))
      for (auto& deal : dealt) deal.checks[client_checks::kShareCheckWordBytes * 2] ^= 1;
#endif
    for (std::size_t role = 0; role < 2; ++role) deals[role].push_back(std::move(dealt[role]));
  }
  bool sent = true;
  for (std::size_t role = 0; role < 2; ++role) {
    const int to = (settings_.party + 1 + static_cast<int>(role)) % 3;
    for (std::size_t first = 0; first < deals[role].size(); first += wire::kMaxPairChecksPerMessage) {
      const std::size_t count = std::min(wire::kMaxPairChecksPerMessage, deals[role].size() - first);
      auto frame = wire::encode_pair_checks(std::span(deals[role]).subspan(first, count));
      // A peer still handshaking (the cluster just started) is waited for: a key imported then
      // would otherwise wait for its deal until the next sweep, and its dealer may go down first.
      if (!peers_->send_to(to, frame)) {
        sent = false;
        log_.info("pair checks not sent; dealt again once the cluster is settled",
                  {{"to", to + 1}, {"keys", static_cast<std::uint64_t>(count)}});
      }
      wipe(frame.data(), frame.size());
    }
  }
  return sent;
}

void Node::key_stored(const wire::KeyId& key) {
  if (!pair_checks_) return;
  pair_checks_->key_stored(key);
  const wire::KeyId keys[] = {key};
  if (!deal_pair_checks(keys)) {
    pair_checks_due_ = true;
    pair_checks_retry_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  }
}

}  // namespace mpc::node
