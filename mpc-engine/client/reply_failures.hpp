// Which server a call's failure is reported against, and the error it is reported as: shared by
// the client's requests (cluster_client.cpp, key_requests.cpp).
#pragma once

#include <string>
#include <vector>

#include "client/cluster_client.hpp"

namespace mpc::client {

// The server whose failure to report, or -1 if all answered Ok: a server's own refusal says
// more than another's silence, so it comes first.
int first_failure(const Replies& replies, const std::vector<bool>& unreachable);

// Throws the failure of server `failed`: its refusal, or that it was not reached (`suffix`
// appended either way).
[[noreturn]] void throw_failure(const Replies& replies, const std::vector<bool>& unreachable, int failed,
                                const std::string& suffix = "");

}  // namespace mpc::client
