#include "node/wakeup.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/error.hpp"

namespace mpc::node {

Wakeup::Wakeup() : descriptor_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (descriptor_ < 0) throw Error(Component::Server, std::string("eventfd: ") + std::strerror(errno));
}

Wakeup::~Wakeup() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

void Wakeup::notify() noexcept {
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(descriptor_, &one, sizeof one);
}

void Wakeup::clear() noexcept {
  std::uint64_t count = 0;
  [[maybe_unused]] const auto read = ::read(descriptor_, &count, sizeof count);
}

}  // namespace mpc::node
