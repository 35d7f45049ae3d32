// The piece of a layer exchange shared by batches run on worker threads and on the main
// thread: picking this layer's message out of what has arrived for the batch.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "engines/three_party/early_messages.hpp"
#include "node/peer_links.hpp"
#include "transport/zmq_link.hpp"

namespace mpc::three_party_engine {

using node::connect_grace;
using node::PeerEnvelope;

// Looks through the messages received for one batch: copies `layer`'s message from
// `previous` into `incoming` and removes it (true); drops malformed messages and those
// of layers already past; keeps later layers. Throws PeerError on an abort of the batch
// or a message of the wrong size.
bool take_layer_message(std::deque<node::PeerEnvelope>& pending, int previous, std::uint32_t layer,
                        std::span<std::uint8_t> incoming);
// take_layer_message without the copy: the message's envelope is moved into `taken`, and
// `payload` (`bytes` long) points into it.
bool take_layer_envelope(std::deque<node::PeerEnvelope>& pending, int previous, std::uint32_t layer,
                         std::size_t bytes, node::PeerEnvelope& taken, std::span<const std::uint8_t>& payload);

// A garbled batch's byte stream (garbled_krb_batch.hpp) travels as layer frames numbered
// 0, 1, 2, ... whose payloads may have any length: takes chunk `index` from `previous` (true):
// its frame into `frame`, the payload being frame[from ..]. Drops earlier and malformed frames
// like take_layer_message. Throws PeerError on an abort of the batch.
bool take_stream_chunk(std::deque<node::PeerEnvelope>& pending, int previous, std::uint32_t index,
                       std::vector<std::uint8_t>& frame, std::size_t& from);

}  // namespace mpc::three_party_engine
