// What the evaluator needs from the network: one message per AND layer to the next
// party, one from the previous party. The protocol never sees sockets; the server
// adapts its ZeroMQ links to this, tests use an in-memory ring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/secret.hpp"

namespace mpc::rss3 {

class LayerExchange {
 public:
  virtual ~LayerExchange() = default;
  // Sends `outgoing` to party i+1 and fills `incoming` (same size) with the message of
  // party i-1 for the same layer. Throws PeerError on timeout, a wrong-sized message
  // or an abort; never blocks longer than the implementation's configured timeout.
  virtual void exchange(std::uint32_t layer, std::span<const std::uint8_t> outgoing,
                        std::span<std::uint8_t> incoming) = 0;

  // exchange(), with party i-1's message (`incoming_bytes` of it) lent instead of copied out:
  // valid until the next call on this exchange, of either kind. A transport that holds what
  // it received in buffers of its own lets the evaluator read it there; by default it is
  // copied into a buffer of the exchange's.
  virtual std::span<const std::uint8_t> exchange_lent(std::uint32_t layer, std::span<const std::uint8_t> outgoing,
                                                      std::size_t incoming_bytes) {
    if (lent_.size() < incoming_bytes) lent_.resize(incoming_bytes);
    const std::span<std::uint8_t> incoming = lent_.span().first(incoming_bytes);
    exchange(layer, outgoing, incoming);
    return incoming;
  }

 private:
  SecretBytes lent_;  // a share component of every AND the layer computes: wiped when it goes
};

}  // namespace mpc::rss3
