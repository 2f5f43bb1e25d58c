// child_path.h — starts one child through the addon's own path, for what
// posix_spawn(3) cannot do: credentials, resource limits, umask, nice,
// no_new_privs, a parent-death signal, and glibc's internal signals 32 and 33
// back at SIG_DFL.
//
// One child routine, on a stack of its own (mmap(2), one PROT_NONE guard page
// below it; one per thread, mapped once and reused by its later spawns): the
// parent blocks every signal (glibc's internal ones included) on the calling
// thread around clone(CLONE_VM | CLONE_VFORK). The calling thread is suspended
// until the child has called execve(2) or exited, so the child may write into
// the parent's memory: a failure before the exec is stored there as an errno
// plus the name of the failing system call, and the child exits 127 (the
// parent reaps it before returning). The host never forks.
//
// The child runs the steps of child_steps.h. Its entry steps (signal
// dispositions, setsid/setpgid, stdio) always run in it, so the session or
// group exists when the spawn returns. Then:
// - a child that keeps the host's credentials and is not sandboxed runs the
//   target steps itself and execs the target;
// - a child that changes them (uid, gid or groups), or is sandboxed, execs
//   the exec helper instead
//   (native/helper/main.cc, a small static program shipped beside the addon;
//   execveat(2) on a descriptor opened once, AT_EMPTY_PATH), handing it a
//   plan (helper_plan.h) in a sealed memfd and the write end of a
//   close-on-exec start-status pipe. The helper runs the target steps in its
//   own memory and execs the target; a failed step comes back through the
//   pipe (nothing arrives when the exec succeeds) and the helper exits 127.
//   Nobody waits for the target's exec (the target user may stop the helper
//   indefinitely): the caller reads the pipe once the child is reaped.
//   With CLONE_VM the kernel would mark the shared mm non-dumpable at the uid
//   change, and that flag alone would keep the target uid from the host's
//   memory; the helper never shares it (CPython's _posixsubprocess makes the
//   same choice, with a fork: here the cost is one exec, not a copy of the
//   host's page tables).
//
// The child runs only raw system calls (syscall(2)): it shares the parent's
// memory, locks and TLS, so no allocator and no libc wrapper that takes a lock
// or talks to other threads. In particular glibc's setuid/setgid/setgroups
// apply the change to every thread of the process (SIGSETXID; see nptl(7));
// the raw system calls change only the calling task and take no lock (glibc's
// spawni uses raw calls too, local-setxid.h); the helper uses the same steps.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "child_exit.h"
#include "sandbox.h"
#include "spawn_process.h"
#include "step_failure.h"

namespace exactspawn {

struct ResourceLimit {
  int resource = 0;  // RLIMIT_*
  rlim_t soft = 0;   // RLIM_INFINITY for unlimited
  rlim_t hard = 0;
};

enum class PidNamespace : uint32_t {
  kNone = 0,
  kPid = 1,         // CLONE_NEWPID (the host holds CAP_SYS_ADMIN)
  kPidAndUser = 2,  // CLONE_NEWPID | CLONE_NEWUSER, the ids mapped to themselves
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
  // A contained step's PID namespace (contain mechanism "pid-namespace"):
  // the child is cloned as PID 1 of a new PID namespace (CLONE_NEWPID; with
  // CLONE_NEWUSER too for a host without CAP_SYS_ADMIN, which maps its own
  // uid and gid to themselves) and execs the helper, which runs as its init
  // (native/helper/init.cc).
  PidNamespace pid_namespace = PidNamespace::kNone;
  // The mount view, bounding set, no_new_privs, Landlock, the seccomp filter
  // and the capability drop (sandbox.h; their order: child_steps.h), all in
  // the exec helper.
  const SandboxPlan* sandbox = nullptr;
};

// Where a start failed: the system call's name and the library step it
// belongs to (NUL-terminated, see step_failure.h), and the file it failed on
// when the step named one (empty: the step's usual path). `in_child` is false
// for failures of the parent (mmap, pipe2, clone).
struct ChildPathFailure {
  char syscall[28] = {};
  char step[20] = {};
  bool in_child = false;
  std::string path;
};

// The flags of the child's clone(2): the one place they are chosen (a
// namespace a request asks for is added here). CLONE_VM | CLONE_VFORK |
// SIGCHLD, plus CLONE_PIDFD when the request asks for the child's pidfd.
int child_clone_flags(const SpawnRequest& request, const ExecControls& controls);

// Whether the child runs its target steps in the exec helper (it changes its
// credentials, is sandboxed, or is PID 1 of a contained step's PID namespace:
// the vfork child keeps only signals, session/group, stdio and one execve).
bool needs_helper(const ExecControls& controls);

// For tests: the first `count` (0-3) of each helper exec's attempts
// (execveat, /proc/self/fd/N, the helper's path) fail with `error` without
// being made, as a kernel refusing them; 0 makes every call again.
void set_helper_exec_refusal(int error, int count);

// Runs the helper in a probe mode (helper_plan.h PlanMode; stdio on
// /dev/null), started in the PID namespace given (none by default), and
// waits for it: its exit status (0: what was probed works), or -errno with
// *failure naming the call and the step: "helper" when the helper could not
// be started (its exec), "contain" when the clone failed.
int run_helper_probe(int mode, StepFailure* failure,
                     PidNamespace pid_namespace = PidNamespace::kNone);

// Starts the child; on success stores its pid and returns 0. Otherwise
// returns -errno and names the failing call in *failure; no child is left
// behind (a child that failed before exec has been reaped).
// A child that execs the helper is not waited for beyond the helper's exec:
// it may still fail before the target's exec. *start_status_fd is then the
// read end of its start-status pipe (O_CLOEXEC, O_NONBLOCK; the caller owns
// it), to be read with read_start_status() once the child has been reaped; -1
// for a child that runs every step itself (its start is known on return).
int spawn_child_path(const SpawnRequest& request, const ExecControls& controls, pid_t* pid,
                     int* start_status_fd, ChildPathFailure* failure);

// Reads a reaped helper child's start-status pipe, without waiting:
// 0 when nothing was reported (the exec succeeded), else -errno with the
// failing step named in *failure (the child exited 127). A PID namespace's
// init reports its leader's end instead: then 0, and the leader's status
// replaces the init's in *exit (the step's exit is its leader's; left as is
// when no such report came: the init itself was killed, or the step ran
// without one; *leader_reported says which). A leader's pidfd record left
// in the channel (child_steps.h kLeaderRecord) is skipped. exit and
// leader_reported may be nullptr.
int read_start_status(int fd, ChildPathFailure* failure, ChildExit* exit = nullptr,
                      bool* leader_reported = nullptr);

}  // namespace exactspawn
