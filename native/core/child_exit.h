// child_exit.h — the syscalls around one child's exit: a pidfd for it, a
// race-free signal through that pidfd, a group signal, and reaping exactly
// that pid with its CPU usage and peak RSS.
//
// Plain C++; every function returns 0 (or an fd) or a negative errno.
// Never waits for "any child" (waitpid(-1)): other code in the process (libuv
// for child_process) reaps its own pids. ru_maxrss counts only above the
// host's own peak (getrusage(RUSAGE_SELF) at the reap): for a vfork-style
// spawn the kernel starts the child's figure at the parent's high-water mark.
// See pidfd_open(2), pidfd_send_signal(2), kill(2), wait4(2), getrusage(2).
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace exactspawn {

struct ChildExit {
  bool exited = false;  // WIFEXITED
  int exit_code = 0;    // WEXITSTATUS when exited
  int signal = 0;       // WTERMSIG when killed by a signal, else 0
  int64_t user_cpu_micros = 0;
  int64_t system_cpu_micros = 0;
  // Peak RSS (KiB) of the child or any descendant it waited for, or -1 when
  // it did not exceed the host's own peak: a vfork-style child's exec records
  // the host's high-water mark as its own, so a smaller peak is unknowable.
  int64_t max_rss_kib = -1;
  // When the exit was seen (CLOCK_MONOTONIC ms): the reap, or earlier the
  // deadline keeper's look after an ending's signal (deadline_keeper.h);
  // 0 where nobody stamps it (spawnSync).
  double exited_at_ms = 0;
};

// pidfd_open(pid, 0): an fd that becomes readable when the child exits.
int open_pidfd(pid_t pid);

// pidfd_send_signal(pidfd, sig, NULL, 0).
int signal_pidfd(int pidfd, int sig);

// kill(-pgid, sig): every process in the group.
int signal_group(pid_t pgid, int sig);

// wait4(pid, WNOHANG): 1 when reaped (out filled), 0 when still running, or -errno.
int reap_child(pid_t pid, ChildExit* out);

// Sets the exit fields of *out (exited, exit_code, signal) from a wait(2)
// status: a PID namespace's init reports its leader's this way.
void set_exit_status(int status, ChildExit* out);

// Blocking wait4(pid): for a child that has just been killed and must not stay a zombie.
int reap_child_blocking(pid_t pid);

}  // namespace exactspawn
