// spawn_process.h — starts one child with posix_spawn(3) and exactly the
// argv, envp, cwd and stdio it is given.
//
// Plain C++ over glibc; no Node-API. Returns 0 or a negative errno (glibc
// >= 2.24 reports exec failures of the child synchronously). The child gets:
// each stdio slot dup2'ed onto its number (dup2 onto itself clears
// FD_CLOEXEC), or /dev/null; every other fd closed
// (posix_spawn_file_actions_addclosefrom_np; where the C library lacks it or
// posix_spawn_file_actions_addchdir_np, the child starts through the child
// path of child_path.h instead, with the same result); an empty signal mask
// (POSIX_SPAWN_SETSIGMASK); every catchable signal at SIG_DFL
// (POSIX_SPAWN_SETSIGDEF), glibc's internal 32 and 33 included (their bits
// set by hand: sigaddset refuses them); optionally a new session (POSIX_SPAWN_SETSID) or
// process group (POSIX_SPAWN_SETPGROUP).
// See posix_spawn(3), posix_spawn_file_actions_adddup2(3), sigprocmask(2),
// setsid(2), setpgid(2), close_range(2).
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace exactspawn {

struct SpawnRequest {
  const char* file = nullptr;      // absolute path; never searched in PATH
  char* const* argv = nullptr;     // NULL-terminated; argv[0] is independent of file
  char* const* envp = nullptr;     // NULL-terminated; passed as is, in order
  const char* cwd = nullptr;       // nullptr: inherit the parent's cwd
  const int* stdio = nullptr;      // stdio[i]: parent fd for child fd i, or -1 for /dev/null
  size_t stdio_count = 0;          // child fds >= stdio_count are closed
  bool new_session = false;        // POSIX_SPAWN_SETSID
  bool new_process_group = false;  // POSIX_SPAWN_SETPGROUP with pgid 0
  // A contained step's cgroup directory (core/cgroup.h), or -1. The child
  // is created in it (CLONE_INTO_CGROUP) or enters it first thing: such a
  // child always takes the child path.
  int cgroup_fd = -1;
  // Out, optional: where the child path stores the child's pidfd, taken from
  // clone(CLONE_PIDFD) (close-on-exec; the caller owns it), or -1 where it
  // has none (posix_spawn, or a kernel that did not fill it in): the caller
  // then opens one with pidfd_open.
  int* pidfd = nullptr;
};

// Starts the child; on success stores its pid. Returns 0 or -errno.
int spawn_process(const SpawnRequest& request, pid_t* pid);

}  // namespace exactspawn
