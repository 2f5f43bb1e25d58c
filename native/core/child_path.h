// child_path.h — starts one child through the addon's own path, for what
// posix_spawn(3) cannot do: credentials, resource limits, umask, nice,
// no_new_privs, a parent-death signal, and glibc's internal signals 32 and 33
// back at SIG_DFL.
//
// Two ways to start it, one child routine. The parent blocks every signal
// (glibc's internal ones included) on the calling thread around clone(2),
// onto a stack of its own (mmap(2), one PROT_NONE guard page below it; one
// per thread, mapped once and reused by its later spawns).
// - A child that keeps the host's credentials: CLONE_VM | CLONE_VFORK. The
//   calling thread is suspended until the child has called execve(2) or
//   exited, so the child may write into the parent's memory: a failure
//   before the exec is stored there as an errno plus the name of the failing
//   system call, and the child exits 127 (the parent reaps it before
//   returning).
// - A child that changes them (uid, gid or groups): a copy-on-write clone
//   (no CLONE_VM, no CLONE_VFORK; what fork(2) does), so it never shares the
//   host's memory. With CLONE_VM the kernel marks the shared mm non-dumpable
//   at the uid change (commit_creds; see PR_SET_DUMPABLE in prctl(2)), and
//   that flag alone would keep the target uid, which may signal and stop the
//   child, from the host's memory (/proc/PID/mem); a host thread restoring it
//   raced with another thread's child. The host's dumpable flag is never
//   touched. The child reports a failed step through a close-on-exec
//   start-status pipe (nothing arrives when the exec succeeds), then exits
//   127. Nobody waits for its exec (the target user may stop the child
//   indefinitely): the caller reads the pipe once the child is reaped. CPython's _posixsubprocess
//   makes the same choice (no vfork when credentials are asked).
//
// The child runs only raw system calls (syscall(2)): it shares the parent's
// memory, locks and TLS (or a copy of them taken while another thread may
// have held a lock), so no allocator and no libc wrapper that takes a lock
// or talks to other threads. In particular glibc's setuid/setgid/setgroups
// apply the change to every thread of the process (SIGSETXID; see nptl(7)):
// they walk glibc's thread list under its lock, and from a CLONE_VM child
// that list and that lock are the parent's. (On glibc 2.36 the signals then
// miss, since tgkill names the child's pid, so the parent's threads kept
// their ids in a test; a parent thread holding the lock at clone time would
// still hang the child and the spawning thread with it.) The raw system calls
// change only the child and take no lock. glibc's spawni uses raw calls too
// (local-setxid.h).
//
// Order in the child, chosen for privileges: every signal disposition to
// SIG_DFL (rt_sigaction on 1..64 except SIGKILL/SIGSTOP, so no handler of the
// parent can run in it); setsid(2) or setpgid(2); a contained step's cgroup
// entered (cgroup.h: "0" written to its cgroup.procs, while still the host's
// credentials and before anything of the target runs); resource limits
// (prlimit(2)) and nice (setpriority(2)) while still privileged, since raising
// either needs a capability the uid change drops; setgroups(2), setresgid(2),
// setresuid(2) (groups first: afterwards the child may no longer change them),
// then a new anonymous session keyring (keyctl(2) KEYCTL_JOIN_SESSION_KEYRING,
// as the new user; ENOSYS and EPERM tolerated);
// PR_SET_PDEATHSIG (after the uid change, which clears it; see prctl(2)) —
// the signal fires when the THREAD that spawned the child exits, e.g. a
// worker thread, not only the process; PR_SET_NO_NEW_PRIVS; umask(2);
// chdir(2) as the new user; stdio dup'ed onto 0..n-1 and every other fd
// closed (close_range(2); the start-status pipe is kept until exec closes
// it); an empty signal mask; execve(2).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstddef>

#include "sandbox.h"
#include "spawn_process.h"

namespace exactspawn {

struct ResourceLimit {
  int resource = 0;  // RLIMIT_*
  rlim_t soft = 0;   // RLIM_INFINITY for unlimited
  rlim_t hard = 0;
};

struct ExecControls {
  bool set_uid = false;
  uid_t uid = 0;
  bool set_gid = false;
  gid_t gid = 0;
  bool set_groups = false;  // with group_count 0: drop every supplementary group
  const gid_t* groups = nullptr;
  size_t group_count = 0;
  int umask = -1;  // -1: inherit
  const ResourceLimit* limits = nullptr;
  size_t limit_count = 0;
  bool set_nice = false;
  int nice = 0;
  bool no_new_privs = false;
  int parent_death_signal = 0;  // 0: none
  // Applied before stdio is set up (its ruleset fd must still be open):
  // no_new_privs, Landlock, the seccomp filter. See sandbox.h.
  const SandboxPlan* sandbox = nullptr;
};

// Where a start failed: the system call's name and the library step it
// belongs to (NUL-terminated, see step_failure.h). `in_child` is false for
// failures of the parent (mmap, pipe2, clone).
struct ChildPathFailure {
  char syscall[28] = {};
  char step[20] = {};
  bool in_child = false;
};

// Whether the child is started copy-on-write (it changes its credentials, or
// enters a user namespace for its mount view: mount_view.h).
bool needs_private_memory(const ExecControls& controls);

// Starts the child; on success stores its pid and returns 0. Otherwise
// returns -errno and names the failing call in *failure; no child is left
// behind (a child that failed before exec has been reaped).
// A copy-on-write child is not waited for: it may still fail before its exec.
// *start_status_fd is then the read end of its start-status pipe (O_CLOEXEC,
// O_NONBLOCK; the caller owns it), to be read with read_start_status() once
// the child has been reaped; -1 for a child that shares memory (its start is
// known on return).
int spawn_child_path(const SpawnRequest& request, const ExecControls& controls, pid_t* pid,
                     int* start_status_fd, ChildPathFailure* failure);

// Reads a reaped copy-on-write child's start-status pipe, without waiting:
// 0 when nothing was reported (the exec succeeded), else -errno with the
// failing step named in *failure (the child exited 127).
int read_start_status(int fd, ChildPathFailure* failure);

}  // namespace exactspawn
