// run_sync.h — runs one already-spawned child to completion on the calling
// thread: writes its input, reads its captured output, enforces a timeout
// and an output limit, and reaps it. The engine of spawnSync.
//
// Plain C++ over syscalls; no Node-API, no event loop, no thread. One poll(2)
// loop over the child's pidfd (readable once the child is a zombie), the
// parent's end of its stdin pipe and the read ends of its captured pipes.
// Group signals are sent only while the leader is unreaped (a zombie leader
// pins its process-group id); the leader is reaped with wait4(2) for exactly
// its pid. After the leader has exited, pipes still held open by a
// descendant are read to their end, unless a deadline (the timeout, or the
// kill grace after a kill) has passed, at which point reading stops and what
// was read is delivered. Returns 0 or a negative errno (the child is then
// killed and reaped before returning).
// See poll(2), pidfd_open(2), pidfd_send_signal(2), kill(2), wait4(2), pipe(7).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "child_exit.h"

namespace exactspawn {

struct SyncRun {
  pid_t pid = 0;
  int stdin_fd = -1;            // parent's write end of the child's stdin, or -1
  const char* input = nullptr;  // written to stdin_fd, which is then closed
  size_t input_length = 0;
  int output_fds[2] = {-1, -1};  // parent's read ends of stdout and stderr, or -1
  size_t limit = SIZE_MAX;       // bytes kept per output; one more is an overflow
  int64_t timeout_ms = -1;       // -1: none
  int kill_signal = 15;          // sent on timeout or overflow
  int64_t kill_grace_ms = 2000;  // then SIGKILL
  bool own_group = false;        // the child leads its own process group
};

enum class SyncKillReason { kNone, kTimeout, kOverflow };

struct SyncOutcome {
  ChildExit exit;
  std::vector<char> output[2];
  SyncKillReason reason = SyncKillReason::kNone;
};

// Takes ownership of every fd in `run` (all closed on return, whatever happens).
int run_sync(const SyncRun& run, SyncOutcome* outcome);

}  // namespace exactspawn
