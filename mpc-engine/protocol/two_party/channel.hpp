// The byte stream between the two servers of a two-server job (garbled circuits, OT
// extension, lookup tables). The protocol code sees only this interface: in the server it is
// one job's stream over the authenticated, encrypted CurveZMQ peer link; in tests and
// benchmarks it is an in-memory pipe between two threads.
//
// Semantics: reliable and ordered. send() may buffer; flush() hands everything buffered to
// the transport (call it before waiting for the peer's answer, or the two sides deadlock).
// receive() blocks until exactly out.size() bytes arrived and throws PeerError when the
// peer does not deliver them within the channel's timeout or went away.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

namespace mpc::two_party {

class Channel {
 public:
  virtual ~Channel() = default;
  virtual void send(std::span<const std::uint8_t> bytes) = 0;
  virtual void flush() = 0;
  virtual void receive(std::span<std::uint8_t> out) = 0;
  // The next `size` bytes where the channel holds them already, consumed as by receive() and
  // valid until the channel's bytes go; empty where the channel has them only to copy (then
  // nothing is consumed: call receive()). Lets an evaluator read a kept stream in place.
  virtual std::span<const std::uint8_t> view(std::size_t size) {
    (void)size;
    return {};
  }
  // Bytes handed to send() so far: benchmarks report bytes per gate from it.
  virtual std::uint64_t bytes_sent() const = 0;
  // Lets the next receive() wait `extra` beyond the channel's timeout, once: the peer may be
  // busy before it answers (compiling a circuit it has not seen yet). No effect by default.
  virtual void allow_extra_wait(std::chrono::milliseconds extra) { (void)extra; }
};

// Two connected in-memory channels for two threads of one process. Sends are buffered in
// chunks of up to `chunk_bytes` and queued for the peer; a receive waits at most `timeout`
// for the next chunk.
std::pair<std::unique_ptr<Channel>, std::unique_ptr<Channel>> make_memory_channel_pair(
    std::chrono::milliseconds timeout = std::chrono::milliseconds(10000), std::size_t chunk_bytes = 1 << 16);

}  // namespace mpc::two_party
