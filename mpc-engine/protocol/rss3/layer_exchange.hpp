// What the evaluator needs from the network: one message per AND layer to the next
// party, one from the previous party. The protocol never sees sockets; the server
// adapts its ZeroMQ links to this, tests use an in-memory ring.
#pragma once

#include <cstdint>
#include <span>

namespace mpc::rss3 {

class LayerExchange {
 public:
  virtual ~LayerExchange() = default;
  // Sends `outgoing` to party i+1 and fills `incoming` (same size) with the message of
  // party i-1 for the same layer. Throws PeerError on timeout, a wrong-sized message
  // or an abort; never blocks longer than the implementation's configured timeout.
  virtual void exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing,
                        std::span<std::uint8_t> incoming) = 0;
};

}  // namespace mpc::rss3
