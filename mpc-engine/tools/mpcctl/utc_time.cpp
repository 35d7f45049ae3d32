#include "tools/mpcctl/utc_time.hpp"

#include <ctime>
#include <iomanip>
#include <sstream>

namespace mpc::tools {

std::string format_utc(std::uint64_t unix_seconds) {
  const std::time_t seconds = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  std::ostringstream out;
  out << std::put_time(&utc, "%Y-%m-%dT%H:%M:%SZ");
  return out.str();
}

}  // namespace mpc::tools
