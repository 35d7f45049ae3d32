#include "client/dump_guard.hpp"

#include <sys/prctl.h>

#include <mutex>

namespace mpc::client {
namespace {

// The process's dumpability is process-wide state of the kernel; its bookkeeping here is too.
std::mutex guard_mutex;
int active_guards = 0;
int saved_setting = 1;

}  // namespace

DumpGuard::DumpGuard() {
  std::lock_guard lock(guard_mutex);
  if (active_guards++ == 0) {
    const int current = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    saved_setting = current < 0 ? 0 : current;
  }
  // Set by every guard: a thread that made the process dumpable in between does not reopen it.
  (void)::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

DumpGuard::~DumpGuard() {
  std::lock_guard lock(guard_mutex);
  if (--active_guards == 0 && saved_setting != 0) (void)::prctl(PR_SET_DUMPABLE, saved_setting, 0, 0, 0);
}

}  // namespace mpc::client
