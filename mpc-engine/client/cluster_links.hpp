// The client's connections to the servers (ClusterClient::Links), shared by the files that
// implement ClusterClient; not part of its interface.
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

}  // namespace mpc::client
