#include "common/thread_name.hpp"

#include <pthread.h>

#include <algorithm>
#include <array>

namespace mpc {

void name_this_thread(std::string_view name) noexcept {
  std::array<char, 16> cut{};  // the kernel's limit, with its terminating zero
  const auto length = std::min(name.size(), cut.size() - 1);
  std::copy_n(name.data(), length, cut.data());
  ::pthread_setname_np(::pthread_self(), cut.data());
}

}  // namespace mpc
