// How mpcctl prints a point in time: ISO 8601 in UTC, to the second.
#pragma once

#include <cstdint>
#include <string>

namespace mpc::tools {

std::string format_utc(std::uint64_t unix_seconds);  // "2026-11-21T13:54:37Z"

}  // namespace mpc::tools
