// Which servers of a three-server cluster serve: all three, or the two that still hear each
// other while the third is down.
//
// Every server tells the others every heartbeat whom it heard lately (wire::Hello); any frame
// from a peer counts as hearing it, except those of another peer protocol, which PeerLinks
// drops (peer_links.hpp). A server that has not been heard for peer_down is down.
// Two servers that hear each other and both no longer hear the third switch to two-party
// service: each derives an XOR share of every key from its replicated share (the pair
// (i, i+1) holds x_i and a_{i+1} = x_i ^ v) and they run the two-party engine between them
// (node.hpp). Both decide from the same facts, so they switch within a heartbeat of each
// other; a server that hears only one side of a split stays in three-party service, where a
// job fails rather than run with a server that may still be serving the third.
//
// Each returns to three-party service once it has heard the third server for rejoin without a
// gap and the third says it hears it: a server restarting or a link coming back does not flap
// the cluster between modes. Each decides on what it observes itself, and no member of the pair
// can hold the pair's service alone: one that does not talk to the returning server stays behind
// in the pair while the other two serve three-party (its jobs then fail; it cannot force the
// weaker service on the others). The price: while a link between the third server and one pair
// member is down, the cluster serves nothing rather than serve as a pair. Nothing needs
// catching up on return: key changes are refused while a server is down, and each mode keeps
// its own GCM nonce pool.
//
// An excluded server (wire::ExclusionRequest, kept on disk by each server: store/
// exclusion_file.hpp) is served without as if it were down, however well it is heard, until an
// operator readmits it; it serves nothing itself. Each server takes an exclusion or a
// readmission from the operator, and otherwise follows only what both of its peers say in their
// hellos (a server that missed the operator's word while it was down): one server alone, saying
// what it likes, can neither exclude another nor bring an excluded one back.
//
// Checks of active security that fail call for a pair as well (node/disputes.hpp): a server in
// a dispute serves without the peer it distrusts, and a server that learns of three-party
// checks failing serves in the suspended service's pair (the first in order that has not
// failed), however well everybody is heard, until an operator clears the disputes (readmitting
// a server clears them).
//
// Each server counts the readmissions it has taken and says the count in every hello. What a
// peer says of disputes counts only if it has taken as many: a peer that has not yet heard the
// operator, or that missed the word while it was down, does not bring back the disputes just
// cleared. A server whose two peers both count more missed a readmission, and takes it from
// them (one server alone, counting what it likes, clears nothing).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "node/disputes.hpp"
#include "wire/client_messages.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::node {

struct MembershipTiming {
  std::chrono::milliseconds heartbeat{100};
  std::chrono::milliseconds peer_down{500};
  std::chrono::milliseconds rejoin{1000};
};

struct ModeChange {
  wire::ClusterMode mode = wire::ClusterMode::Full;
  int missing = -1;  // the party the two-party service runs without; -1 in Full
};

// Wall-clock milliseconds since the Unix epoch, for Status (mode_since_unix_ms).
std::uint64_t unix_ms_now();

class Membership {
 public:
  using Clock = std::chrono::steady_clock;

  // `two_party_allowed`: degraded_service = "two-party". `started`: when the server started
  // (nobody has been heard yet: no switch before a peer_down has passed).
  Membership(int self, MembershipTiming timing, bool two_party_allowed, Clock::time_point started);

  // Any frame from `party`.
  void heard(int party, Clock::time_point now);
  // Its session was lost (it went away or restarted): not heard until its next frame.
  void lost(int party);
  void hello(int party, const wire::Hello& hello, Clock::time_point now);
  // Whether `party` has been heard since this server started or its session was last lost.
  bool ever_heard(int party) const { return last_heard_[static_cast<std::size_t>(party)].has_value(); }
  // When `party` was last heard; nullopt as for ever_heard.
  std::optional<Clock::time_point> last_heard(int party) const { return last_heard_[static_cast<std::size_t>(party)]; }

  // The mode the facts call for now: the new one if it changed, else nullopt.
  std::optional<ModeChange> update(Clock::time_point now);

  // Whether a heartbeat is due; the hello to send then (sent() marks it).
  bool heartbeat_due(Clock::time_point now) const;
  wire::Hello own_hello(Clock::time_point now) const;
  // Whether the hello to send now differs from the last one sent: the others must hear of a
  // change at once, not a heartbeat later.
  bool hello_changed(Clock::time_point now) const { return own_hello(now) != last_sent_; }
  void sent(const wire::Hello& hello, Clock::time_point now) {
    last_sent_ = hello;
    last_heartbeat_ = now;
  }

  bool two_party_allowed() const { return two_party_allowed_; }
  // The party served without until readmitted; -1: none.
  int excluded_party() const { return excluded_; }
  // `now`: when this server took it. Peers' hellos received within peer_down of then are not
  // followed: they may have left before the operator's word reached their senders.
  void set_excluded(int party, Clock::time_point now) {
    excluded_ = party >= 0 && party <= 2 ? party : -1;
    excluded_set_at_ = now;
  }
  // What both peers' fresh hellos say is excluded (-1: nobody), when they agree with each other
  // and differ from this server, and were received a peer_down or more after this server last
  // changed its own; nullopt otherwise.
  std::optional<int> peers_exclusion(Clock::time_point now) const;

  // `party`'s messages failed a check here that only its deviation fails (disputes.hpp).
  void caught(int party);
  // A three-party check failed here: one of the other two deviated.
  void three_party_check_failed() { three_party_failed_ = true; }
  // A check of the pair serving without `missing` failed that names neither member (disputes.hpp).
  void pair_failed(int missing) {
    if (missing >= 0 && missing <= 2) failed_pairs_ |= static_cast<std::uint8_t>(1u << missing);
  }
  // What this server held before it restarted (store/exclusion_file.hpp).
  void restore_disputes(std::uint8_t distrusts, bool three_party_failed, std::uint8_t failed_pairs,
                        std::uint32_t readmissions) {
    distrusts_ = static_cast<std::uint8_t>(distrusts & 0b111 & ~(1u << self_));
    three_party_failed_ = three_party_failed;
    failed_pairs_ = static_cast<std::uint8_t>(failed_pairs & 0b111);
    readmissions_ = readmissions;
  }
  // The operator's readmission: every dispute and the suspension are dropped here, and one more
  // readmission is counted (peers that have not taken it are not listened to on disputes).
  void clear_disputes() {
    drop_disputes();
    ++readmissions_;
  }
  // A readmission taken from both peers (peers_readmissions): dropped as by the operator.
  void adopt_readmissions(std::uint32_t readmissions) {
    drop_disputes();
    readmissions_ = readmissions;
  }
  // Every dispute and the suspension dropped, as when both peers readmit an excluded server.
  void drop_disputes() {
    distrusts_ = 0;
    three_party_failed_ = false;
    failed_pairs_ = 0;
  }
  std::uint32_t readmissions() const { return readmissions_; }
  // How many readmissions both peers' fresh hellos count, when both count more than this server
  // (the fewer of the two); nullopt otherwise.
  std::optional<std::uint32_t> peers_readmissions(Clock::time_point now) const;
  std::uint8_t distrusts() const { return distrusts_; }
  bool three_party_failed() const { return three_party_failed_; }
  // The pairs failed that this server saw or a client reported (bit m: the pair without m).
  std::uint8_t failed_pairs() const { return failed_pairs_; }
  // Those and the ones the pairs' members say (disputes.hpp).
  std::uint8_t failed_pairs_known(Clock::time_point now) const;
  // What the disputes known here call for now.
  DisputeVerdict disputes(Clock::time_point now) const;
  // Whether the disputes leave this server out of the pair that serves.
  bool set_aside(Clock::time_point now) const { return excluded_ < 0 && disputes(now).missing == self_; }
  wire::ClusterMode mode() const { return mode_; }
  int missing() const { return missing_; }
  // The parties that serve, 0-based and sorted: all three, or the pair.
  std::vector<int> serving() const;
  // In two-party service: the pair's first party (it holds x_i of the pair (i, i+1) and leads
  // the two-party engine); -1 in Full.
  int pair_leader() const { return missing_ < 0 ? -1 : (missing_ + 1) % 3; }
  bool hears(int party, Clock::time_point now) const;
  // Whether both peers say, lately, that they serve as a pair without this server: it is
  // back but not yet taken in again (it answers jobs at once, rather than hold them).
  bool awaiting_return(Clock::time_point now) const;
  // Whether every server hears every other, each peer within the last heartbeat and a half,
  // and all say the same mode lately: no switch is under way or due. A job that fails while
  // the cluster is not settled is worth sending again.
  bool settled(Clock::time_point now) const;

 private:
  void switch_to(wire::ClusterMode mode, int missing);
  // The pair without `party` serves when this server hears its partner; nothing does else.
  std::optional<ModeChange> serve_without(int party, Clock::time_point now);
  // What the peers' fresh hellos say of disputes, as of this server's last readmission or later.
  std::array<std::optional<DisputeWord>, 3> peers_words(Clock::time_point now) const;
  // Whether what a hello says of disputes is as of this server's last readmission or later.
  bool current(const wire::Hello& hello) const { return hello.readmissions >= readmissions_; }

  int self_;
  MembershipTiming timing_;
  bool two_party_allowed_;
  Clock::time_point started_;
  Clock::time_point last_heartbeat_{};
  wire::Hello last_sent_;
  std::array<std::optional<Clock::time_point>, 3> last_heard_;
  std::array<Clock::time_point, 3> heard_since_{};  // start of the current run without a gap
  std::array<std::optional<wire::Hello>, 3> last_hello_;
  std::array<Clock::time_point, 3> hello_at_{};
  wire::ClusterMode mode_ = wire::ClusterMode::Full;
  int missing_ = -1;
  int excluded_ = -1;
  std::optional<Clock::time_point> excluded_set_at_;
  std::uint8_t distrusts_ = 0;
  bool three_party_failed_ = false;
  std::uint8_t failed_pairs_ = 0;
  std::uint32_t readmissions_ = 0;
};

// When a link to each peer last broke under a send, noted from any thread. A server killed
// mid-batch resets the data links at once, while its missed heartbeats take up to peer_down
// to show: a job that failed on such a link in the meantime is worth sending again.
class LinkBreaks {
 public:
  using Clock = std::chrono::steady_clock;
  void note(int party, Clock::time_point when);
  // Whether a link broke within `window` before `now`.
  bool recent(Clock::time_point now, Clock::duration window) const;

 private:
  // Clock ticks since its epoch; 0: never broke.
  std::array<std::atomic<Clock::rep>, 3> broke_at_{};
};

}  // namespace mpc::node
