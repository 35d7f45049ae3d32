// No server computes with a request unless all three hold the same copy of it.
//
// The client sends each server its own copy, and every server builds its inputs from its
// copy. Replicated sharing is only a sharing while all parties use the same public inputs:
// with copies that differ (or a copy one server lacks and evaluates as zeros), the values
// two servers reconstruct are no longer the function the client asked for but a mix in
// which one server's shares of the key appear on their own. For the linear GCM tag a
// client that sent server 3 a different text read server 3's shares of the GHASH key
// powers straight off the three reconstructions; the AES circuits mix such errors through
// their AND gates instead.
//
// So each server tells the others what it holds of each request: a note with the digest of
// its copy (wire::request_digest, the hash of the frame as it arrived), or the reason it
// refused it. A batch job is scheduled by the leader only once both followers' notes carry
// its own digest, and the batch header repeats the digest so a follower checks it against
// its copy before computing. Differing copies are refused at every server
// (Status::RequestMismatch, naming the server whose copy differs), a refusal at one server is
// answered the same way at all, and a request some server never confirms is given up after
// job_wait.
//
// A follower reminds the leader. It hands its copy to its engine once its note is out, and the
// engine holds the job until a batch header names it or the leader gives it up. A leader that
// restarted meanwhile lost the note (a note to an unreachable peer is dropped), and the client's
// copy to it may never have gone out: it would do neither, and the job would wait for the
// client's timeout. So while no batch here names the job, the follower tells the leader again
// every kLeaderReminder: a leader that holds the job ignores the repeat, one that gave it up
// says so again, and one that never had it gives it up after job_wait with Regrouping, which
// the client sends again. (In three-party service; a pair's follower gives up a job its leader
// never announces by itself.)
//
// A GCM tag needs no batch and no wait: each server answers its own copy at once and sends
// its digest for the record, compared when it comes (a difference is counted and logged).
// What a client can get from differing copies is bounded by the tag job itself:
// - three servers: a server masks its reply with PRF keys bound to its copy's digest, one
//   key shared with each neighbour (rss3/output.hpp), and takes the nonce from its pool, so
//   it answers at most one copy per nonce. An opening pairs two neighbours' components under
//   the key they share: it gives the tag of a copy both of them answered, or, where their
//   copies differ, a value masked by PRF outputs no other reply contains. Three servers hold
//   at most one copy in common by two, so the client gets at most one tag per nonce, which
//   is what it may ask for, and nothing about the shares;
// - two servers: the replies are XOR shares of AES_K(N || 1) ^ GHASH; differing copies
//   combine into the tag of one copy plus a term in one server's shares of the hash key
//   powers, hidden by the pad AES_K(N || 1), which nothing else reveals and the spent nonce
//   never masks again.
// Only what a server already knows stops its answer: a peer's note of another copy or of a
// refusal that came first.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "node/job_key.hpp"
#include "wire/client_messages.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::node {

// Longer than a job waits in the leader's queue on a healthy cluster, so that reminders stay
// rare; short beside a client's timeout.
inline constexpr std::chrono::milliseconds kLeaderReminder{1000};

enum class Consensus {
  Waiting,  // a needed party has not spoken yet
  Agreed,   // every needed party holds the same copy
  Differ,   // two parties hold different copies
  Refused,  // a party refused the request
};

struct Verdict {
  Consensus consensus = Consensus::Waiting;
  wire::Status status = wire::Status::Ok;  // what to answer for Differ and Refused
  std::string detail;
};

// The verdict on a request from the words of `parties` (0-based party indices): Refused as
// soon as one of them refused (naming its reason), else Waiting until all have spoken, then
// Agreed or Differ. Parties are named 1-based in details.
[[nodiscard]] Verdict judge(const CopyWords& words, const std::vector<int>& parties);

// A request that was answered or given up, remembered so that a copy or a note arriving
// afterwards is answered at once instead of waiting for a batch that will never name it.
struct Tombstone {
  Tombstone() = default;
  Tombstone(wire::Status status, std::string detail, bool answered_here)
      : status(status), detail(std::move(detail)), answered_here(answered_here) {}

  wire::Status status = wire::Status::PeerFailure;
  std::string detail;
  bool answered_here = false;  // this server answered its own copy already
  std::chrono::steady_clock::time_point until;
  // A GCM tag answered before the copies were compared: the digest of the copy this server
  // answered, which the others' notes are checked against when they come.
  std::optional<wire::RequestDigest> answered_copy;
  bool mismatch_counted = false;
};

// Notes about requests this server has no copy of yet, and tombstones; both bounded and
// expiring, since a client can name as many request ids as it likes.
class RequestLedger {
 public:
  RequestLedger(std::size_t capacity, std::chrono::milliseconds lifetime);

  // Words heard before this server's own copy came.
  void keep_early(const JobKey& key, int party, PartyWord word, std::chrono::steady_clock::time_point now);
  // The early words of `key`, removed from the ledger (empty if none).
  CopyWords take_early(const JobKey& key);
  bool has_early(const JobKey& key) const;
  // When the first early word of `key` came, if it has any.
  std::optional<std::chrono::steady_clock::time_point> early_since(const JobKey& key) const;

  void bury(const JobKey& key, Tombstone tombstone, std::chrono::steady_clock::time_point now);
  Tombstone* tombstone(const JobKey& key);
  // The refusals buried at or after `since` and not yet expired, as the words that tell
  // another server of them (GCM tags answered at once are not refusals).
  std::vector<std::pair<JobKey, PartyWord>> refusals_since(std::chrono::steady_clock::time_point since) const;

  // Drops what has outlived `lifetime`.
  void expire(std::chrono::steady_clock::time_point now);
  std::size_t size() const { return early_.size() + tombstones_.size(); }

 private:
  struct Early {
    CopyWords words;
    std::chrono::steady_clock::time_point since;
  };
  std::size_t capacity_;
  std::chrono::milliseconds lifetime_;
  std::unordered_map<JobKey, Early, JobKeyHash> early_;
  std::unordered_map<JobKey, Tombstone, JobKeyHash> tombstones_;
  // Insertion order with the insertion time, to evict and expire the oldest first; an entry
  // whose key was taken or replaced since is skipped.
  std::deque<std::pair<JobKey, std::chrono::steady_clock::time_point>> early_order_;
  std::deque<std::pair<JobKey, std::chrono::steady_clock::time_point>> tombstone_order_;
};

// Notes waiting to leave, one list per destination party; a server sends them once per turn
// of its loop, as few messages as the list needs.
class OutgoingNotes {
 public:
  // A note that nothing waits for (a GCM tag's, compared after the answer) waits up to this
  // long for company, so a burst of tags wakes each peer once rather than once per tag.
  static constexpr auto kRecordDelay = std::chrono::milliseconds(20);

  // A note another server waits on: it leaves at the next flush.
  void add(int party, wire::RequestNote note);
  // A note for the record: it leaves with the next note to `party`, or kRecordDelay after
  // the oldest such note waiting.
  void add_record(int party, wire::RequestNote note, std::chrono::steady_clock::time_point now);
  // Whether `party`'s notes should leave at `now`.
  bool due(int party, std::chrono::steady_clock::time_point now) const;
  // When the next notes become due (now if some already are), or nullopt if none wait.
  std::optional<std::chrono::steady_clock::time_point> next_due() const;
  // Takes the frames for `party` (each at most kMaxNotesPerMessage notes) and clears its list.
  std::vector<std::vector<std::uint8_t>> take_frames(int party);
  bool empty() const;

 private:
  std::array<std::vector<wire::RequestNote>, 3> pending_;
  std::array<bool, 3> urgent_{};
  std::array<std::optional<std::chrono::steady_clock::time_point>, 3> record_since_;
};

wire::RequestNote make_note(const JobKey& key, const PartyWord& word);
std::string describe_request(const JobKey& key);  // the request id in hex, for logs

}  // namespace mpc::node
