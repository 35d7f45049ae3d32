// Names the calling thread (at most 15 characters; longer names are cut), so that top -H, perf
// and /proc/PID/task/TID/comm tell a server's batch workers, lane readers and shell apart.
#pragma once

#include <string_view>

namespace mpc {

void name_this_thread(std::string_view name) noexcept;

}  // namespace mpc
