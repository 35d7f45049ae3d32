// What the files implementing ClusterClient share: its connections to the servers
// (ClusterClient::Links) and fresh request ids; not part of its interface.
#pragma once

#include <sys/types.h>

#include <memory>
#include <vector>

#include "client/cluster_client.hpp"
#include "client/server_channel.hpp"
#include "transport/curve_keys.hpp"
#include "transport/zmq_link.hpp"

namespace mpc::client {

struct ClusterClient::Links {
  pid_t owner = 0;
  transport::CurveKeyPair own;
  std::unique_ptr<transport::Context> context;
  std::vector<std::unique_ptr<ServerChannel>> connections;  // by party
};

// The data links' sockets to wait on next to the CurveZMQ sockets (transport::wait_readable
// numbers them after the sockets), and whose each is.
struct ChannelDescriptors {
  explicit ChannelDescriptors(const ClusterClient::Links& links) {
    for (std::size_t party = 0; party < links.connections.size(); ++party) {
      const int descriptor = links.connections[party]->descriptor();
      if (descriptor < 0) continue;
      descriptors.push_back(descriptor);
      parties.push_back(party);
    }
  }
  // The party behind an index wait_readable returned for `sockets` sockets and these, and
  // which of its carriers that index is.
  std::size_t party(std::size_t index, std::size_t sockets) const {
    return index < sockets ? index : parties[index - sockets];
  }
  static ServerChannel::Carrier carrier(std::size_t index, std::size_t sockets) {
    return index < sockets ? ServerChannel::Carrier::CurveZmq : ServerChannel::Carrier::DataLink;
  }
  std::vector<int> descriptors;
  std::vector<std::size_t> parties;
};

// A uniformly random request id: each request, and each attempt of one, has its own.
wire::RequestId fresh_request_id();

}  // namespace mpc::client
