#include "engines/two_party/job_streams.hpp"

#include <algorithm>
#include <utility>

#include "common/error.hpp"
#include "protocol/two_party/chunked_channel.hpp"
#include "wire/two_server_messages.hpp"

namespace mpc::two_party_engine {

struct JobStreams::Inbox {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::vector<std::uint8_t>> frames;
  std::size_t bytes = 0;
  std::optional<std::string> aborted;
  bool opened = false;
  std::chrono::steady_clock::time_point created = std::chrono::steady_clock::now();
};

class JobStream final : public two_party::ChunkedChannel {
 public:
  JobStream(JobStreams& streams, std::uint64_t job, std::shared_ptr<JobStreams::Inbox> inbox, StreamPriority priority)
      : ChunkedChannel(kStreamFrameBytes), streams_(streams), job_(job), inbox_(std::move(inbox)), priority_(priority) {}
  ~JobStream() override { streams_.close(job_); }

 private:
  void ship(std::vector<std::uint8_t> chunk) override {
    wire::TwoServerData data;
    data.job = job_;
    data.bytes = std::move(chunk);
    streams_.queue_frame(job_, wire::encode_two_server(data), true, priority_);
  }

  void allow_extra_wait(std::chrono::milliseconds extra) override { extra_wait_ = extra; }

  Chunk next_chunk() override {
    const std::chrono::milliseconds limit = streams_.receive_timeout_ + std::exchange(extra_wait_, {});
    std::unique_lock lock(inbox_->mutex);
    if (!inbox_->ready.wait_for(lock, limit, [&] { return !inbox_->frames.empty() || inbox_->aborted; }))
      throw PeerError(Component::Server, "the other server sent nothing for " + std::to_string(limit.count()) + " ms");
    if (inbox_->frames.empty()) {
      const std::string& reason = *inbox_->aborted;
      if (reason.starts_with(kVerificationAbort)) {
        const std::string_view rest = std::string_view(reason).substr(kVerificationAbort.size());
        const std::size_t end = rest.find(": ");
        std::string check = end == std::string_view::npos || end == 0 || end > 40 ? "abort_notice" : std::string(rest.substr(0, end));
        throw VerificationError(Component::Server, "the other server refused the job: " + reason, std::move(check));
      }
      throw PeerError(Component::Server, "the other server abandoned the job: " + reason);
    }
    Chunk frame{std::move(inbox_->frames.front())};
    inbox_->frames.pop_front();
    inbox_->bytes -= frame.bytes.size();
    return frame;
  }

  JobStreams& streams_;
  std::uint64_t job_;
  std::shared_ptr<JobStreams::Inbox> inbox_;
  std::chrono::milliseconds extra_wait_{0};
  StreamPriority priority_;
};

JobStreams::JobStreams(std::function<void()> outgoing_ready, std::chrono::milliseconds receive_timeout,
                       std::chrono::milliseconds early_ttl)
    : outgoing_ready_(std::move(outgoing_ready)), receive_timeout_(receive_timeout), early_ttl_(early_ttl) {}

JobStreams::~JobStreams() = default;

std::unique_ptr<two_party::Channel> JobStreams::open(std::uint64_t job, StreamPriority priority) {
  std::lock_guard lock(mutex_);
  auto& inbox = inboxes_[job];
  if (!inbox) inbox = std::make_shared<Inbox>();
  if (stopping_ && !inbox->aborted) inbox->aborted = "this server is stopping the two-party engine";
  if (inbox->opened) throw Error(Component::Server, "job " + std::to_string(job) + " opened twice");
  inbox->opened = true;
  return std::make_unique<JobStream>(*this, job, inbox, priority);
}

void JobStreams::close(std::uint64_t job) {
  std::lock_guard lock(mutex_);
  inboxes_.erase(job);
  if (closed_.insert(job).second) {
    closed_order_.push_back(job);
    if (closed_order_.size() > kRememberedClosedJobs) {
      closed_.erase(closed_order_.front());
      closed_order_.pop_front();
    }
  }
}

bool JobStreams::closed_locked(std::uint64_t job) const { return closed_.count(job) != 0; }

bool JobStreams::deliver(std::uint64_t job, std::vector<std::uint8_t> bytes) {
  std::shared_ptr<Inbox> inbox;
  bool first = false;
  {
    std::lock_guard lock(mutex_);
    if (closed_locked(job)) return false;  // late frames of a job this side has finished
    auto& slot = inboxes_[job];
    if (!slot) {
      slot = std::make_shared<Inbox>();
      first = true;
    }
    inbox = slot;
  }
  std::lock_guard lock(inbox->mutex);
  if (inbox->aborted) return false;
  if (inbox->bytes + bytes.size() > kMaxInboxBytes) {
    inbox->aborted = "more than " + std::to_string(kMaxInboxBytes >> 20) + " MiB of unread data";
    inbox->frames.clear();
    inbox->bytes = 0;
  } else {
    inbox->bytes += bytes.size();
    inbox->frames.push_back(std::move(bytes));
  }
  inbox->ready.notify_all();
  return first;
}

void JobStreams::peer_aborted(std::uint64_t job, const std::string& reason) {
  std::shared_ptr<Inbox> inbox;
  {
    std::lock_guard lock(mutex_);
    if (closed_locked(job)) return;
    auto& slot = inboxes_[job];
    if (!slot) slot = std::make_shared<Inbox>();
    inbox = slot;
  }
  std::lock_guard lock(inbox->mutex);
  inbox->aborted = reason;
  inbox->ready.notify_all();
}

void JobStreams::queue_frame(std::uint64_t job, std::vector<std::uint8_t> frame, bool wait_for_room,
                             StreamPriority priority) {
  {
    std::unique_lock lock(mutex_);
    // Waits for room, but never forever: the main thread drops what it cannot send after the
    // receive timeout, and a stream stuck here would hold its worker.
    if (wait_for_room)
      room_.wait_for(lock, receive_timeout_,
                     [&] { return stopping_ || outgoing_bytes_ + frame.size() <= kMaxQueuedBytes; });
    if (stopping_) {
      if (wait_for_room) throw PeerError(Component::Server, "the two-party engine is stopping");
      return;
    }
    outgoing_bytes_ += frame.size();
    (priority == StreamPriority::Background ? background_ : outgoing_)[job].push_back(std::move(frame));
  }
  outgoing_ready_();
}

const std::vector<std::uint8_t>* JobStreams::peek_outgoing() {
  std::lock_guard lock(mutex_);
  // Workers only append to the deques: the front frame stays where it is until popped.
  peeked_background_ = outgoing_.empty();
  if (peeked_background_) {
    if (background_.empty()) return nullptr;
    background_turn_ = background_.begin()->first;
    return &background_.begin()->second.front();
  }
  auto it = outgoing_.lower_bound(turn_);
  if (it == outgoing_.end()) it = outgoing_.begin();
  turn_ = it->first;
  return &it->second.front();
}

void JobStreams::pop_outgoing() {
  std::lock_guard lock(mutex_);
  if (peeked_background_) {
    auto it = background_.find(background_turn_);
    if (it == background_.end()) return;
    outgoing_bytes_ -= it->second.front().size();
    it->second.pop_front();
    if (it->second.empty()) background_.erase(it);
    room_.notify_all();
    return;
  }
  auto it = outgoing_.find(turn_);
  if (it == outgoing_.end()) return;
  outgoing_bytes_ -= it->second.front().size();
  it->second.pop_front();
  const auto next = std::next(it);
  turn_ = next == outgoing_.end() ? 0 : next->first;
  if (it->second.empty()) outgoing_.erase(it);
  room_.notify_all();
}

void JobStreams::drop_outgoing() {
  std::lock_guard lock(mutex_);
  outgoing_.clear();
  background_.clear();
  outgoing_bytes_ = 0;
  room_.notify_all();
}

bool JobStreams::has_outgoing() const {
  std::lock_guard lock(mutex_);
  return !outgoing_.empty() || !background_.empty();
}

void JobStreams::send_abort(std::uint64_t job, const std::string& reason) {
  wire::TwoServerAbort abort;
  abort.job = job;
  abort.reason = reason;
  queue_frame(job, wire::encode_two_server(abort), false);
}

void JobStreams::shut_down() {
  std::vector<std::shared_ptr<Inbox>> inboxes;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    outgoing_.clear();
    background_.clear();
    outgoing_bytes_ = 0;
    for (const auto& [job, inbox] : inboxes_) inboxes.push_back(inbox);
    room_.notify_all();
  }
  for (const auto& inbox : inboxes) {
    std::lock_guard lock(inbox->mutex);
    if (!inbox->aborted) inbox->aborted = "this server is stopping the two-party engine";
    inbox->ready.notify_all();
  }
}

void JobStreams::expire(std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mutex_);
  for (auto it = inboxes_.begin(); it != inboxes_.end();) {
    if (!it->second->opened && now - it->second->created > early_ttl_)
      it = inboxes_.erase(it);
    else
      ++it;
  }
}

}  // namespace mpc::two_party_engine
