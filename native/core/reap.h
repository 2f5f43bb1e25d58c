// reap.h — the one rule for reaping a child whose pidfd has turned readable,
// used by the exit watch (child_watch.cc), the orphan reaper and spawnSync
// (run_sync.cc): wait4(2) exactly that pid (never "any child"); when it is
// not waitable yet, ask again after a back-off, never at once.
//
// A pidfd turns readable when the child exits, but while a tracer
// (ptrace(2)) holds the child, wait4(WNOHANG) returns 0 until the tracer has
// waited for it: re-arming at once would spin the caller's loop for as long
// as the tracer holds on. The back-off is 1 ms, doubling to 100 ms.
//
// reap_retries() counts, process-wide, every attempt that found the child
// not waitable: the tests read it (through the addon's debugCounters()) to
// prove that a held child costs a few attempts, not a spin.
//
// Plain C++; returns 1, 0 or a negative errno.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "child_exit.h"

namespace exactspawn {

class ReapBackoff {
 public:
  static constexpr int kFirstMs = 1;
  static constexpr int kLongestMs = 100;
  // The delay before the next attempt: 1, 2, 4, … then 100 ms.
  int next_delay_ms();

 private:
  int delay_ms_ = 0;
};

// One attempt at reaping `pid` (its pidfd reported readable, or a retry is
// due): 1 when reaped (out filled), 0 when not waitable yet (*retry_ms is
// then the wait before the next attempt), or -errno.
int reap_ready_child(pid_t pid, ChildExit* out, ReapBackoff* backoff, int* retry_ms);

// For a caller that found the child not waitable by other means (waitid
// WNOWAIT): counts the attempt and returns the wait before the next one.
int not_waitable_yet(ReapBackoff* backoff);

// Attempts so far, in this process, that found a child not waitable yet.
uint64_t reap_retries();

}  // namespace exactspawn
