// Keeps the process out of core files and /proc/PID/mem while it holds key material.
//
// While a DumpGuard lives the process is not dumpable (prctl PR_SET_DUMPABLE 0): no core file
// is written, and only a holder of CAP_SYS_PTRACE may ptrace it or read its memory, not every
// process of the same user. When the last guard ends the earlier setting comes back, so a
// long-lived process that deals keys now and then (kadmind, whose password changes the KDB
// module enrols) keeps its own setting outside those moments; a process that already was not
// dumpable stays so.
//
// Dumpability belongs to the process, not to a thread: the guards of all threads share one
// count, and the setting is saved by the first and restored by the last.
#pragma once

namespace mpc::client {

class DumpGuard {
 public:
  DumpGuard();
  ~DumpGuard();
  DumpGuard(const DumpGuard&) = delete;
  DumpGuard& operator=(const DumpGuard&) = delete;
};

}  // namespace mpc::client
