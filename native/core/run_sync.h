// run_sync.h — runs one already-spawned child to completion on the calling
// thread: writes its input, reads its captured output, executes its deadline
// plan, and reaps it. The engine of spawnSync.
//
// Plain C++ over syscalls; no Node-API, no event loop, no thread. One poll(2)
// loop over the child's pidfd (readable once the child is a zombie), the
// parent's end of its stdin pipe and the read ends of its captured pipes.
// The plan (when an ending begins, which signal goes to whom, when reading
// stops) is made in TypeScript (src/spawn/deadline-plan.ts, which spawn runs
// with timers); this loop only executes its numbers and reports the endings
// as they happened, for TypeScript to name. Group signals are sent only while
// the leader is unreaped (a zombie leader pins its process-group id); the
// leader is reaped with wait4(2) for exactly its pid. Returns 0 or a negative
// errno (the child is then killed and reaped before returning), -ENOMEM with
// step "capture" when an output cannot grow: no exception leaves it.
// See poll(2), pidfd_open(2), pidfd_send_signal(2), kill(2), wait4(2), pipe(7).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "child_exit.h"
#include "deadline_plan.h"
#include "step_failure.h"

namespace exactspawn {

struct SyncRun {
  pid_t pid = 0;
  int pidfd = -1;               // the child's pidfd from its start (owned), or -1: one is opened
  int stdin_fd = -1;            // parent's write end of the child's stdin, or -1
  const char* input = nullptr;  // written to stdin_fd, which is then closed
  size_t input_length = 0;
  int output_fds[2] = {-1, -1};  // parent's read ends of stdout and stderr, or -1
  size_t limit = SIZE_MAX;       // bytes kept per output; one more begins an ending
  DeadlinePlan deadline;         // deadline_plan.h: the same plan spawn's keeper executes
  // A contained step's cgroup (core/cgroup.h), killed whole when the leader
  // has been reaped, so every pipe its processes held ends; nullptr: none.
  const char* cgroup_path = nullptr;
  // A PID-namespace step's leader pidfd (owned; pid_namespace.h
  // receive_leader_pidfd), or -1: when it reports, the leader's status is
  // taken and the init SIGKILLed, as the async watch does (leader_watch.cc).
  int leader_pidfd = -1;
};

enum class SyncEndingCause { kTimeout, kOverflow };

// An ending as it happened: its cause and whether the leader was unreaped then.
struct SyncEnding {
  SyncEndingCause cause;
  bool leader_running;
};

struct SyncOutcome {
  ChildExit exit;
  std::vector<char> output[2];
  SyncEnding endings[2] = {};  // in order; a timeout and an overflow happen at most once each
  int ending_count = 0;
  double killed_at_ms = 0;  // when the first ending's signal went (CLOCK_MONOTONIC ms); 0: none
  // A PID-namespace leader's status read from its zombie (SyncRun::leader_pidfd);
  // the init's own report, when it made one, is the same and wins.
  bool leader_exit_known = false;
  int leader_wait_status = 0;
};

// Takes ownership of every fd in `run` (all closed on return, whatever happens).
// On failure returns -errno and names the call and step in *failure.
int run_sync(const SyncRun& run, SyncOutcome* outcome, StepFailure* failure);

}  // namespace exactspawn
