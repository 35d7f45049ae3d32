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
// its copy before computing; a GCM tag, which needs no batch, is answered by each server
// only once the notes of both others match its own. Differing copies are refused at every
// server (Status::RequestMismatch, naming the server whose copy differs), a refusal at one
// server is answered the same way at all, and a request some server never confirms is
// given up after job_wait.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "node/job_key.hpp"
#include "wire/client_messages.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::node {

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
  wire::Status status = wire::Status::PeerFailure;
  std::string detail;
  bool answered_here = false;  // this server answered its own copy already
  std::chrono::steady_clock::time_point until;
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
  std::map<JobKey, Early> early_;
  std::map<JobKey, Tombstone> tombstones_;
  // Insertion order with the insertion time, to evict and expire the oldest first; an entry
  // whose key was taken or replaced since is skipped.
  std::deque<std::pair<JobKey, std::chrono::steady_clock::time_point>> early_order_;
  std::deque<std::pair<JobKey, std::chrono::steady_clock::time_point>> tombstone_order_;
};

// Notes waiting to leave, one list per destination party; a server sends them once per turn
// of its loop, as few messages as the list needs.
class OutgoingNotes {
 public:
  void add(int party, wire::RequestNote note);
  // Takes the frames for `party` (each at most kMaxNotesPerMessage notes) and clears its list.
  std::vector<std::vector<std::uint8_t>> take_frames(int party);
  bool empty() const;

 private:
  std::array<std::vector<wire::RequestNote>, 3> pending_;
};

wire::RequestNote make_note(const JobKey& key, const PartyWord& word);
std::string describe_request(const JobKey& key);  // the request id in hex, for logs

}  // namespace mpc::node
