// What the files implementing ClusterClient share: its connections to the servers
// (ClusterClient::Links) and fresh request ids; not part of its interface.
#pragma once

#include <sys/types.h>

#include <memory>
#include <vector>

#include "client/cluster_client.hpp"
#include "transport/zmq_link.hpp"

namespace mpc::client {

struct ClusterClient::Links {
  pid_t owner = 0;
  std::unique_ptr<transport::Context> context;
  std::vector<std::unique_ptr<transport::Connection>> connections;  // by party
};

// A uniformly random request id: each request, and each attempt of one, has its own.
wire::RequestId fresh_request_id();

}  // namespace mpc::client
