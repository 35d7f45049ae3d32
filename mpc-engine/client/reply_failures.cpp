#include "client/reply_failures.hpp"

#include "common/error.hpp"

namespace mpc::client {

int first_failure(const Replies& replies, const std::vector<bool>& unreachable) {
  int failed = -1;
  for (std::size_t party = 0; party < replies.size(); ++party) {
    if (replies[party].status == wire::Status::Ok) continue;
    if (!unreachable[party]) return static_cast<int>(party);
    if (failed < 0) failed = static_cast<int>(party);
  }
  return failed;
}

[[noreturn]] void throw_failure(const Replies& replies, const std::vector<bool>& unreachable, int failed,
                                const std::string& suffix) {
  const auto& reply = replies[static_cast<std::size_t>(failed)];
  if (unreachable[static_cast<std::size_t>(failed)]) throw Error(Component::Client, reply.error + suffix);
  throw ServerError(failed, reply.status, reply.error + suffix);
}

}  // namespace mpc::client
