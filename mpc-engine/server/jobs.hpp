// A compute request as one server holds it while it waits for, and runs in, batches.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "common/secret.hpp"
#include "wire/client_messages.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::server {

// Requests are named by the authenticated client key and the client's request id,
// so one client can never refer to another client's job.
struct JobKey {
  wire::PublicKey client{};
  wire::RequestId request{};
  auto operator<=>(const JobKey&) const = default;
};

struct Job {
  std::string routing_id;
  wire::ComputeRequest request;
  SecretBytes key_share;  // x || a of the expanded round keys
  bool answered = false;  // an error reply went out already; kept so a batch naming it does not wait for it
  std::vector<std::uint8_t> masked_x;
  std::vector<std::uint8_t> masked_a;
  std::uint32_t blocks_done = 0;
  std::uint32_t blocks_scheduled = 0;  // leader: blocks already placed in batches
  std::chrono::steady_clock::time_point arrived;
};

}  // namespace mpc::server
