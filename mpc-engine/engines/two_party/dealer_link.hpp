// A lut2 server's link to the lookup-table dealer ([lut] preprocessing = "dealer";
// lut_dealer/dealer_service.hpp, messages in wire/dealer_messages.hpp): one CurveZMQ
// connection that pins the dealer's key, and the dealt batches this server holds until a
// preprocessing job stores them in its pool.
//
// Flow of one batch: the leader asks for `count` entries (request_batch); the dealer sends
// the follower its explicit entries and the leader the batch's seed, under a fresh batch id.
// The leader then announces a preprocessing job naming that batch id (wire::TwoServerAnnounce);
// each server notes which batch the job takes (expect) and the job, when it runs, takes this
// server's shares (take): the leader's expanded from the seed, the follower's as they came,
// waiting a bounded time for them. Batches nobody takes (never announced: the leader gave up
// on its request or started a new pool epoch) expire and are wiped.
//
// A dead or unreachable dealer: requests fail or time out and are retried after a pause,
// and the link logs the problem; the pool drains and jobs fail with Busy until the dealer is
// back, when the pool refills by itself. The dealer keeps no state, so its restarts are free.
//
// Threads: everything but take() runs on the server's main thread; take() on the thread that
// runs the dealt batches' jobs (PreprocessingThread below).
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
#include <string>
#include <thread>
#include <vector>

#include "common/log.hpp"
#include "protocol/lut2/masked_table.hpp"
#include "settings/server_settings.hpp"
#include "transport/zmq_link.hpp"

namespace mpc::two_party_engine {

class DealerLink {
 public:
  // A batch the dealer granted the leader's request: its seed is held for take().
  struct Grant {
    std::uint64_t batch = 0;
    std::uint64_t count = 0;
  };
  // This server's shares of one dealt batch.
  struct Shares {
    std::uint64_t batch = 0;
    std::vector<lut2::Entry> entries;  // wiped on destruction
    Shares() = default;
    Shares(Shares&& other) noexcept = default;
    Shares& operator=(Shares&&) = delete;
    ~Shares();
  };

  DealerLink(transport::Context& context, const settings::ServerSettings& settings, const transport::CurveKeyPair& own,
             const Logger& log);
  ~DealerLink();
  DealerLink(const DealerLink&) = delete;
  DealerLink& operator=(const DealerLink&) = delete;

  void* socket() const noexcept { return connection_->native(); }

  // Leader: asks the dealer for `count` entries, unless a request is pending or the link is
  // pausing after a failure. True when the request went out.
  bool request_batch(std::uint64_t count);
  bool request_pending() const noexcept { return pending_.has_value(); }
  // Leader, new pool epoch: the pending request's batch is dropped if it still comes.
  void cancel_request();
  // Reads every message that arrived. Leader: the batch granted to the pending request, if it
  // came. Follower: batches are kept for take(); never returns one.
  std::optional<Grant> receive();
  // Housekeeping, every loop: Hello to the dealer every second (the follower's batches follow
  // its latest connection), request timeouts, the link's state in the log, expiry of batches.
  void tick(std::chrono::steady_clock::time_point now);
  // Preprocessing job `job` stores batch `batch` (when the job is queued).
  void expect(std::uint64_t job, std::uint64_t batch);

  // Job thread: this server's shares for job `job`, which must hold `count` entries; waits up to
  // `wait` for the dealer's batch. Throws PeerError when the batch does not come in time or
  // does not match, Error(Server) for a job that expects no batch.
  Shares take(std::uint64_t job, std::uint64_t count, std::chrono::milliseconds wait);

  std::size_t held_batches() const;  // for tests and the status line

  struct Held;

 private:
  void keep(std::uint64_t batch, std::unique_ptr<Held> held);
  void note_link(bool up, std::chrono::steady_clock::time_point now);
  void expire(std::chrono::steady_clock::time_point now);

  int party_;
  std::chrono::milliseconds request_timeout_;
  Logger log_;
  std::unique_ptr<transport::Connection> connection_;

  // Main thread.
  struct Pending {
    std::uint64_t request = 0;
    std::uint64_t count = 0;
    std::chrono::steady_clock::time_point sent;
  };
  std::optional<Pending> pending_;
  std::uint64_t next_request_ = 0;
  std::chrono::steady_clock::time_point retry_at_{};
  std::chrono::steady_clock::time_point next_hello_{};
  std::optional<std::chrono::steady_clock::time_point> down_since_;
  std::chrono::steady_clock::time_point down_logged_{};
  bool down_reported_ = false;
  std::string last_refusal_;
  std::chrono::steady_clock::time_point last_refusal_logged_{};

  // Shared with the workers.
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<std::uint64_t, std::unique_ptr<Held>> batches_;  // by batch id
  std::map<std::uint64_t, std::pair<std::uint64_t, std::chrono::steady_clock::time_point>> expected_;  // job -> batch
};

// Runs the preprocessing jobs of dealt batches in the order they are posted (the leader's
// order, at both servers) on a thread of their own. On the workers such a job could queue
// behind a client job that waits for the very entries it brings; here client jobs never hold
// it up, and it never waits on a client job.
class PreprocessingThread {
 public:
  // Background: the thread runs at the lowest CPU priority (nice 19), for work that should take
  // only what the server's other threads leave. A thread so lowered is never raised again (an
  // unprivileged one may not), so urgent work goes to a thread of normal priority instead.
  enum class Priority : std::uint8_t { Normal, Background };
  explicit PreprocessingThread(Priority priority = Priority::Normal);
  // Runs nothing more after the job in progress, which it waits for.
  ~PreprocessingThread();
  PreprocessingThread(const PreprocessingThread&) = delete;
  PreprocessingThread& operator=(const PreprocessingThread&) = delete;
  void post(std::function<void()> job);

 private:
  void loop(Priority priority);
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

// How long a dealt batch or an expectation is kept for a job that may still come.
inline constexpr std::chrono::seconds kDealtBatchExpiry{30};
// The most dealt batches a server holds at once (the oldest beyond it are wiped).
inline constexpr std::size_t kMaxHeldBatches = 64;

}  // namespace mpc::two_party_engine
