// The buffering every Channel transport shares: send() gathers bytes into chunks of at most
// chunk_bytes and hands each full chunk (and, on flush(), the partial one) to ship();
// receive() serves bytes from the chunks next_chunk() returns. A transport supplies only those
// two: how a chunk travels, and how the next one arrives (or PeerError).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/two_party/channel.hpp"

namespace mpc::two_party {

class ChunkedChannel : public Channel {
 public:
  explicit ChunkedChannel(std::size_t chunk_bytes) : chunk_bytes_(chunk_bytes) { pending_.reserve(chunk_bytes_); }
  void send(std::span<const std::uint8_t> bytes) final;
  void flush() final;
  void receive(std::span<std::uint8_t> out) final;
  std::uint64_t bytes_sent() const final { return sent_; }

 protected:
  virtual void ship(std::vector<std::uint8_t> chunk) = 0;
  // A received chunk: bytes[from ..]. A transport that received it behind a header of its own
  // hands over the whole buffer instead of copying the chunk out.
  struct Chunk {
    std::vector<std::uint8_t> bytes;
    std::size_t from = 0;
  };
  // Blocks for the peer's next chunk; throws PeerError on timeout or when the peer is gone.
  virtual Chunk next_chunk() = 0;
  // A received chunk, handed back as soon as it is read to its end (before the next is asked
  // for): a transport may keep its buffer for a later frame instead of freeing it (and the frame
  // after it allocating and zero-filling a new one).
  virtual void release(std::vector<std::uint8_t> /*bytes*/) {}

 private:
  std::size_t chunk_bytes_;
  std::vector<std::uint8_t> pending_;
  Chunk current_;
  std::size_t offset_ = 0;  // into current_.bytes
  std::uint64_t sent_ = 0;
};

}  // namespace mpc::two_party
