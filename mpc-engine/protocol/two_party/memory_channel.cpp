#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

#include "common/error.hpp"
#include "protocol/two_party/channel.hpp"
#include "protocol/two_party/chunked_channel.hpp"

namespace mpc::two_party {
namespace {

// One direction of the pipe: chunks queued by the writer, consumed by the reader.
struct Pipe {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::vector<std::uint8_t>> chunks;
  bool writer_gone = false;
};

class MemoryChannel final : public ChunkedChannel {
 public:
  MemoryChannel(std::shared_ptr<Pipe> outgoing, std::shared_ptr<Pipe> incoming, std::chrono::milliseconds timeout,
                std::size_t chunk_bytes)
      : ChunkedChannel(chunk_bytes), outgoing_(std::move(outgoing)), incoming_(std::move(incoming)), timeout_(timeout) {}

  ~MemoryChannel() override {
    flush();
    std::lock_guard lock(outgoing_->mutex);
    outgoing_->writer_gone = true;
    outgoing_->ready.notify_all();
  }

 private:
  void ship(std::vector<std::uint8_t> chunk) override {
    std::lock_guard lock(outgoing_->mutex);
    outgoing_->chunks.push_back(std::move(chunk));
    outgoing_->ready.notify_all();
  }

  Chunk next_chunk() override {
    std::unique_lock lock(incoming_->mutex);
    if (!incoming_->ready.wait_for(lock, timeout_,
                                   [&] { return !incoming_->chunks.empty() || incoming_->writer_gone; }))
      throw PeerError(Component::Protocol, "two-party channel: the peer sent nothing within the timeout");
    if (incoming_->chunks.empty()) throw PeerError(Component::Protocol, "two-party channel: the peer went away");
    Chunk chunk{std::move(incoming_->chunks.front())};
    incoming_->chunks.pop_front();
    return chunk;
  }

  std::shared_ptr<Pipe> outgoing_;
  std::shared_ptr<Pipe> incoming_;
  std::chrono::milliseconds timeout_;
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
