#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

#include "common/error.hpp"
#include "protocol/two_party/channel.hpp"

namespace mpc::two_party {
namespace {

// One direction of the pipe: chunks queued by the writer, consumed by the reader.
struct Pipe {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::vector<std::uint8_t>> chunks;
  bool writer_gone = false;
};

class MemoryChannel final : public Channel {
 public:
  MemoryChannel(std::shared_ptr<Pipe> outgoing, std::shared_ptr<Pipe> incoming, std::chrono::milliseconds timeout,
                std::size_t chunk_bytes)
      : outgoing_(std::move(outgoing)), incoming_(std::move(incoming)), timeout_(timeout), chunk_bytes_(chunk_bytes) {
    pending_.reserve(chunk_bytes_);
  }

  ~MemoryChannel() override {
    flush();
    std::lock_guard lock(outgoing_->mutex);
    outgoing_->writer_gone = true;
    outgoing_->ready.notify_all();
  }

  void send(std::span<const std::uint8_t> bytes) override {
    sent_ += bytes.size();
    while (!bytes.empty()) {
      const std::size_t take = std::min(bytes.size(), chunk_bytes_ - pending_.size());
      pending_.insert(pending_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
      bytes = bytes.subspan(take);
      if (pending_.size() == chunk_bytes_) flush();
    }
  }

  void flush() override {
    if (pending_.empty()) return;
    std::vector<std::uint8_t> chunk;
    chunk.reserve(chunk_bytes_);
    chunk.swap(pending_);
    std::lock_guard lock(outgoing_->mutex);
    outgoing_->chunks.push_back(std::move(chunk));
    outgoing_->ready.notify_all();
  }

  void receive(std::span<std::uint8_t> out) override {
    while (!out.empty()) {
      if (offset_ == current_.size()) next_chunk();
      const std::size_t take = std::min(out.size(), current_.size() - offset_);
      std::copy_n(current_.begin() + static_cast<std::ptrdiff_t>(offset_), take, out.begin());
      offset_ += take;
      out = out.subspan(take);
    }
  }

  std::uint64_t bytes_sent() const override { return sent_; }

 private:
  void next_chunk() {
    std::unique_lock lock(incoming_->mutex);
    if (!incoming_->ready.wait_for(lock, timeout_,
                                   [&] { return !incoming_->chunks.empty() || incoming_->writer_gone; }))
      throw PeerError(Component::Protocol, "two-party channel: the peer sent nothing within the timeout");
    if (incoming_->chunks.empty()) throw PeerError(Component::Protocol, "two-party channel: the peer went away");
    current_ = std::move(incoming_->chunks.front());
    incoming_->chunks.pop_front();
    offset_ = 0;
  }

  std::shared_ptr<Pipe> outgoing_;
  std::shared_ptr<Pipe> incoming_;
  std::chrono::milliseconds timeout_;
  std::size_t chunk_bytes_;
  std::vector<std::uint8_t> pending_;
  std::vector<std::uint8_t> current_;
  std::size_t offset_ = 0;
  std::uint64_t sent_ = 0;
};

}  // namespace

std::pair<std::unique_ptr<Channel>, std::unique_ptr<Channel>> make_memory_channel_pair(
    std::chrono::milliseconds timeout, std::size_t chunk_bytes) {
  auto a_to_b = std::make_shared<Pipe>();
  auto b_to_a = std::make_shared<Pipe>();
  return {std::make_unique<MemoryChannel>(a_to_b, b_to_a, timeout, chunk_bytes),
          std::make_unique<MemoryChannel>(b_to_a, a_to_b, timeout, chunk_bytes)};
}

}  // namespace mpc::two_party
