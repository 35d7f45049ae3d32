// The byte streams of the jobs in progress, multiplexed over the one peer link between the
// two servers. Worker threads run a job's protocol through its JobStream (a
// two_party::Channel); the main thread owns the sockets: it sends the frames the streams
// queued and delivers the frames that arrived.
//
// Fairness: frames wait per job and leave in turn, one frame of each job with frames at a
// time, so a small job's frames pass a large job's (a GCM prefetch streams hundreds of
// megabytes) instead of queueing behind them, and frames are kStreamFrameBytes at most.
// Background streams (garblings prepared ahead of time, prepared_circuits.hpp) go after
// client jobs: their frames leave only when no client job's frame waits. (Their senders keep
// little in flight, prepared_circuits.hpp, so a client frame never waits behind much.)
//
// Bounds: a stream's send() blocks while the frames waiting for the socket exceed
// kMaxQueuedBytes (the peer reads slower than we compute); a stream whose unread incoming
// bytes exceed kMaxInboxBytes is aborted. Frames for a job not opened yet (the peer started
// first) are kept for early_ttl, then dropped; frames for a job this side has closed (the
// last kRememberedClosedJobs) are dropped at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/two_party/channel.hpp"

namespace mpc::two_party_engine {

// How an abort for failed verification starts: the peer's receive then throws a
// VerificationError ("abort_notice") instead of a PeerError, so both servers report the job as
// refused for verification whichever of them caught the deviation.
// A job refused on a failed check of active security: "verification failed: <check>: <detail>".
// The receiver fails the job with a VerificationError of that check.
inline constexpr std::string_view kVerificationAbort = "verification failed: ";
// The check of a key share against the checks the third server of a cluster dealt
// (checked_part.hpp): a dealer's bad deal fails it as well as a deviating partner does.
inline constexpr std::string_view kShareCheck = "share_check";

inline constexpr std::size_t kStreamFrameBytes = 256u << 10;
inline constexpr std::size_t kMaxQueuedBytes = 32u << 20;
inline constexpr std::size_t kMaxInboxBytes = 512u << 20;
inline constexpr std::size_t kRememberedClosedJobs = 4096;

enum class StreamPriority { Client, Background };

class JobStreams {
 public:
  // `outgoing_ready` is called (from a worker thread) when frames wait to be sent.
  JobStreams(std::function<void()> outgoing_ready, std::chrono::milliseconds receive_timeout,
             std::chrono::milliseconds early_ttl);
  ~JobStreams();

  // The stream of `job` for one worker thread; frames that arrived before are delivered first.
  // Closing it (destruction) forgets the job.
  std::unique_ptr<two_party::Channel> open(std::uint64_t job, StreamPriority priority = StreamPriority::Client);

  // Main thread. True when the frame is the first of a job this side has neither opened,
  // closed nor heard of (the peer started it).
  bool deliver(std::uint64_t job, std::vector<std::uint8_t> bytes);
  // The peer abandoned the job: its stream's receive() throws PeerError with the reason.
  void peer_aborted(std::uint64_t job, const std::string& reason);
  // The next encoded frame (wire/two_server_messages.hpp) to send to the peer, taking the
  // jobs in turn; null when none waits. It stays valid until pop_outgoing(), which the main
  // thread calls once the socket took it (a refused frame stays next).
  const std::vector<std::uint8_t>* peek_outgoing();
  void pop_outgoing();
  // Drops every frame waiting (the peer has taken nothing for a peer timeout).
  void drop_outgoing();
  bool has_outgoing() const;
  // Queues an Abort frame for the peer (a job that failed on this side before or while running).
  void send_abort(std::uint64_t job, const std::string& reason);
  void expire(std::chrono::steady_clock::time_point now);
  // The engine is going away: drops every frame waiting, fails every stream's next send and
  // receive at once (PeerError), and every stream opened later. Frames no one sends would
  // otherwise hold a worker for a receive timeout per frame.
  void shut_down();

  struct Inbox;

 private:
  friend class JobStream;
  void queue_frame(std::uint64_t job, std::vector<std::uint8_t> frame, bool wait_for_room,
                   StreamPriority priority = StreamPriority::Client);
  void close(std::uint64_t job);
  bool closed_locked(std::uint64_t job) const;

  std::function<void()> outgoing_ready_;
  std::chrono::milliseconds receive_timeout_;
  std::chrono::milliseconds early_ttl_;
  mutable std::mutex mutex_;
  std::condition_variable room_;
  std::map<std::uint64_t, std::deque<std::vector<std::uint8_t>>> outgoing_;  // client jobs' frames, by job
  std::map<std::uint64_t, std::deque<std::vector<std::uint8_t>>> background_;  // background streams' frames
  std::uint64_t turn_ = 0;  // the next frame is the first of the first job at or after it
  bool peeked_background_ = false;  // peek_outgoing() returned a background frame: this job's
  std::uint64_t background_turn_ = 0;
  std::size_t outgoing_bytes_ = 0;
  bool stopping_ = false;
  std::map<std::uint64_t, std::shared_ptr<Inbox>> inboxes_;
  std::deque<std::uint64_t> closed_order_;  // the last kRememberedClosedJobs closed, oldest first
  std::set<std::uint64_t> closed_;
};

}  // namespace mpc::two_party_engine
