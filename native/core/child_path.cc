// child_path.cc — see child_path.h.
#include "child_path.h"

#include <fcntl.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <vector>

#include "cgroup.h"
#include "stdio_plan.h"

#ifndef SYS_close_range
#define SYS_close_range 436  // the same number on every architecture since Linux 5.9
#endif

// Code that runs in the child, on the child's stack: never instrumented by
// AddressSanitizer, whose shadow writes for a borrowed stack would land in the
// parent's shadow memory (CLONE_VM), left poisoned by a child that never returns.
#define EXACTSPAWN_CHILD_CODE __attribute__((no_sanitize_address, noinline))

namespace exactspawn {

namespace {

// The child's stack. Its frames are a few hundred bytes; a stack overflow
// hits the guard page below and kills the child (reported as its exit).
constexpr size_t kStackSize = 64 * 1024;

// The kernel's struct sigaction for rt_sigaction(2) (x86_64 and arm64 share
// this layout): glibc's sigaction() refuses its own signals 32 and 33.
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  uint64_t mask;
};

struct KernelRlimit {
  uint64_t soft;
  uint64_t hard;
};

// What a child on the copy-on-write path writes into its start-status pipe
// when a step fails: one write(2) of less than PIPE_BUF bytes, so the parent
// reads all of it or nothing.
struct StartStatus {
  int32_t error;
  char syscall[sizeof(ChildPathFailure::syscall)];
  char step[sizeof(ChildPathFailure::step)];
};

// The parent's data the child reads. On the shared-memory path (CLONE_VM)
// the child also writes error and syscall, only when it is about to exit;
// the parent reads them after clone() returns, which CLONE_VFORK delays until
// the child has exec'ed or exited. On the copy-on-write path the child has
// its own copy of all of it and reports through status_fd instead.
struct ChildArgs {
  const SpawnRequest* request;
  const ExecControls* controls;
  const StdioStep* stdio_steps;  // the stdio plan (stdio_plan.h), made by the parent
  size_t stdio_step_count;
  int stdio_ceiling;  // every fd number the plan touches is below it
  pid_t parent;
  int status_fd;  // the start-status pipe's write end (copy-on-write path), else -1
  volatile int error;
  const char* volatile syscall;
  const char* volatile step;
};

EXACTSPAWN_CHILD_CODE void copy_name(char* to, size_t size, const char* name) {
  for (size_t i = 0; i + 1 < size && name[i] != '\0'; ++i) to[i] = name[i];
}

// Reports the failure (the call and the step it belongs to, step_failure.h)
// to the parent and ends the child (exit status 127).
[[noreturn]] EXACTSPAWN_CHILD_CODE void fail(ChildArgs* args, const char* name, const char* step) {
  const int error = errno != 0 ? errno : EIO;
  if (args->status_fd >= 0) {
    StartStatus status = {};
    status.error = error;
    copy_name(status.syscall, sizeof status.syscall, name);
    copy_name(status.step, sizeof status.step, step);
    syscall(SYS_write, args->status_fd, &status, sizeof status);
  } else {
    args->error = error;
    args->syscall = name;
    args->step = step;
  }
  syscall(SYS_exit, 127);
  __builtin_unreachable();
}

// Closes every fd >= from except the start-status pipe's write end.
EXACTSPAWN_CHILD_CODE void close_from(ChildArgs* args, int from) {
  const int keep = args->status_fd;
  if (keep < from) {
    if (syscall(SYS_close_range, from, ~0U, 0) != 0) fail(args, "close_range", "stdio");
    return;
  }
  if (keep > from && syscall(SYS_close_range, from, keep - 1, 0) != 0) {
    fail(args, "close_range", "stdio");
  }
  if (syscall(SYS_close_range, keep + 1, ~0U, 0) != 0) fail(args, "close_range", "stdio");
}

// Runs the stdio plan (stdio_plan.h) with raw system calls.
EXACTSPAWN_CHILD_CODE void setup_stdio(ChildArgs* args) {
  // The start-status pipe outlives the stdio set-up (it closes at exec): it
  // moves above every fd the plan touches first, so no dup lands on it.
  if (args->status_fd >= 0 && args->status_fd < args->stdio_ceiling) {
    long moved = syscall(SYS_fcntl, args->status_fd, F_DUPFD_CLOEXEC, args->stdio_ceiling);
    if (moved < 0) fail(args, "fcntl", "stdio");
    args->status_fd = static_cast<int>(moved);
  }
  for (size_t k = 0; k < args->stdio_step_count; ++k) {
    const StdioStep& step = args->stdio_steps[k];
    switch (step.op) {
      case StdioOp::kDup:
        if (syscall(SYS_dup3, step.from, step.to, 0) < 0) fail(args, "dup2", "stdio");
        break;
      case StdioOp::kKeep:
        if (syscall(SYS_fcntl, step.to, F_SETFD, 0) != 0) fail(args, "fcntl", "stdio");
        break;
      case StdioOp::kOpenNull: {
        // Opened without O_CLOEXEC: it stays where it lands when that is the slot.
        long fd = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR);
        if (fd < 0) fail(args, "open", "stdio");
        if (fd != step.to) {
          if (syscall(SYS_dup3, fd, step.to, 0) < 0) fail(args, "dup2", "stdio");
          syscall(SYS_close, fd);
        }
        break;
      }
      case StdioOp::kCloseFrom:
        close_from(args, step.to);
        break;
    }
  }
}

EXACTSPAWN_CHILD_CODE void apply_credentials(ChildArgs* args) {
  const ExecControls& c = *args->controls;
  if (c.set_groups && syscall(SYS_setgroups, c.group_count, c.groups) != 0) {
    fail(args, "setgroups", "groups");
  }
  if (c.set_gid && syscall(SYS_setresgid, c.gid, c.gid, c.gid) != 0) fail(args, "setgid", "gid");
  if (c.set_uid && syscall(SYS_setresuid, c.uid, c.uid, c.uid) != 0) fail(args, "setuid", "uid");
  // A new anonymous session keyring, created as the new user (so it is
  // theirs, as pam_keyinit does): the host's session keyring, and every key
  // in it, stays out of the child's reach (keyrings(7), session-keyring(7)).
  // A kernel without keys (ENOSYS) or a seccomp policy refusing keyctl (EPERM)
  // gives no keyring access to hand over either way.
  if (c.set_uid || c.set_gid || c.set_groups) {
    if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, nullptr) < 0 && errno != ENOSYS &&
        errno != EPERM) {
      fail(args, "keyctl", "credentials");
    }
  }
}

EXACTSPAWN_CHILD_CODE int child_main(void* raw) {
  ChildArgs* args = static_cast<ChildArgs*>(raw);
  const SpawnRequest& r = *args->request;
  const ExecControls& c = *args->controls;

  // Every handler the parent installed would run here on the parent's data.
  KernelSigaction default_action = {SIG_DFL, 0, nullptr, 0};
  for (int sig = 1; sig < _NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    if (syscall(SYS_rt_sigaction, sig, &default_action, nullptr, sizeof(uint64_t)) != 0) {
      fail(args, "rt_sigaction", "signals");
    }
  }
  if (r.new_session) {
    if (syscall(SYS_setsid) < 0) fail(args, "setsid", "setsid");
  } else if (r.new_process_group) {
    if (syscall(SYS_setpgid, 0, 0) != 0) fail(args, "setpgid", "processGroup");
  }
  if (r.cgroup_procs_fd >= 0 && enter_cgroup(r.cgroup_procs_fd) != 0)
    fail(args, "write", "contain");
  if (c.sandbox != nullptr && c.sandbox->mount_view != nullptr) {
    const char* name = "unshare";
    if (int err = apply_mount_view(*c.sandbox->mount_view, &name); err != 0) {
      errno = -err;
      fail(args, name, "sandbox");
    }
  }
  if (c.sandbox != nullptr) {
    SandboxStep step = SandboxStep::kNone;
    if (apply_sandbox(*c.sandbox, &step) != 0) {
      fail(args,
           step == SandboxStep::kLandlock  ? "landlock_restrict_self"
           : step == SandboxStep::kSeccomp ? "seccomp"
                                           : "prctl",
           "sandbox");
    }
  }
  setup_stdio(args);
  for (size_t i = 0; i < c.limit_count; ++i) {
    KernelRlimit limit = {c.limits[i].soft, c.limits[i].hard};
    if (syscall(SYS_prlimit64, 0, c.limits[i].resource, &limit, nullptr) != 0) {
      fail(args, "setrlimit", "rlimits");
    }
  }
  if (c.set_nice && syscall(SYS_setpriority, PRIO_PROCESS, 0, c.nice) != 0) {
    fail(args, "setpriority", "nice");
  }
  apply_credentials(args);
  if (c.sandbox != nullptr && c.sandbox->drop_capabilities) {
    const char* name = nullptr;
    if (drop_capabilities(&name) != 0) fail(args, name, "sandbox");
  }
  if (c.parent_death_signal != 0) {
    if (syscall(SYS_prctl, PR_SET_PDEATHSIG, c.parent_death_signal, 0, 0, 0) != 0) {
      fail(args, "prctl", "parentDeathSignal");
    }
    // The parent may have died before the signal was armed.
    if (syscall(SYS_getppid) != args->parent) {
      syscall(SYS_kill, syscall(SYS_getpid), c.parent_death_signal);
    }
  }
  if (c.no_new_privs && syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    fail(args, "prctl", "noNewPrivileges");
  }
  if (c.umask >= 0) syscall(SYS_umask, c.umask);
  if (r.cwd != nullptr && syscall(SYS_chdir, r.cwd) != 0) fail(args, "chdir", "cwd");
  uint64_t empty = 0;
  if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty, nullptr, sizeof empty) != 0) {
    fail(args, "rt_sigprocmask", "signals");
  }
  syscall(SYS_execve, r.file, r.argv, r.envp);
  fail(args, "execve", "exec");
}

// The child's stack with a PROT_NONE guard page below it, mapped on a
// thread's first spawn and kept for its later ones (unmapped when the thread
// ends). Reuse is safe: CLONE_VFORK keeps the thread suspended until the
// child has exec'ed (a new address space) or exited, so at most one child
// runs on it, and only while its owner waits; a copy-on-write child runs on
// its own copy. Mapping a stack per spawn
// cost an mmap, an mprotect and an munmap, and the munmap a TLB flush on
// every CPU that ran one of the process's threads.
class ChildStack {
 public:
  ChildStack() = default;
  ~ChildStack() {
    if (base_ != nullptr) munmap(base_, size_);
  }
  ChildStack(const ChildStack&) = delete;
  ChildStack& operator=(const ChildStack&) = delete;

  // Maps the stack unless it already is. 0, or an errno with failed_syscall()
  // naming the call (a later spawn tries again).
  int ensure() {
    if (base_ != nullptr) return 0;
    long page = sysconf(_SC_PAGESIZE);
    size_t guard = page > 0 ? static_cast<size_t>(page) : 4096;
    size_t size = kStackSize + guard;
    void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) {
      syscall_ = "mmap";
      return errno;
    }
    if (mprotect(map, guard, PROT_NONE) != 0) {
      int error = errno;
      munmap(map, size);
      syscall_ = "mprotect";
      return error;
    }
    base_ = static_cast<char*>(map);
    size_ = size;
    return 0;
  }
  const char* failed_syscall() const { return syscall_; }
  void* top() const { return base_ + size_; }  // page-aligned, so 16-byte aligned

 private:
  char* base_ = nullptr;
  size_t size_ = 0;
  const char* syscall_ = nullptr;
};

// One per thread that spawns: two threads never share a stack.
thread_local ChildStack thread_stack;

void name_step(ChildPathFailure* failure, const char* name, const char* step) {
  size_t i = 0;
  for (; i + 1 < sizeof failure->syscall && name[i] != '\0'; ++i) failure->syscall[i] = name[i];
  failure->syscall[i] = '\0';
  for (i = 0; i + 1 < sizeof failure->step && step[i] != '\0'; ++i) failure->step[i] = step[i];
  failure->step[i] = '\0';
}

// Blocks every signal (glibc's internal ones too: a raw call, since glibc's
// sigprocmask filters them) around clone, so no handler runs in the child
// before it has reset the dispositions; the child inherits this mask.
pid_t clone_blocked(ChildArgs* args, void* stack_top, int flags, int* clone_errno) {
  // A shared-memory child's syscall() calls write this thread's errno.
  const int saved_errno = errno;
  uint64_t all = ~uint64_t{0};
  uint64_t old = 0;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof all);
  pid_t child = clone(child_main, stack_top, flags, args);
  *clone_errno = errno;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, nullptr, sizeof old);
  errno = saved_errno;
  return child;
}

void reap_failed(pid_t child) {
  const int saved_errno = errno;
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  errno = saved_errno;
}

}  // namespace

bool needs_private_memory(const ExecControls& controls) {
  return controls.set_uid || controls.set_gid || controls.set_groups ||
         (controls.sandbox != nullptr && controls.sandbox->mount_view != nullptr &&
          controls.sandbox->mount_view->user_namespace);
}

int read_start_status(int fd, ChildPathFailure* failure) {
  StartStatus status = {};
  long n;
  do {
    n = read(fd, &status, sizeof status);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<long>(sizeof status)) return 0;  // exec'ed (EOF, EAGAIN) or nothing to say
  status.syscall[sizeof status.syscall - 1] = '\0';
  status.step[sizeof status.step - 1] = '\0';
  name_step(failure, status.syscall[0] != '\0' ? status.syscall : "execve",
            status.step[0] != '\0' ? status.step : "exec");
  failure->in_child = true;
  return status.error > 0 ? -status.error : -EIO;
}

int spawn_child_path(const SpawnRequest& request, const ExecControls& controls, pid_t* pid,
                     int* start_status_fd, ChildPathFailure* failure) {
  *start_status_fd = -1;
  name_step(failure, "clone", "spawn");
  failure->in_child = false;
  if (request.file == nullptr || request.argv == nullptr || request.envp == nullptr ||
      request.stdio == nullptr || request.stdio_count < 3 ||
      request.stdio_count > static_cast<size_t>(INT_MAX) ||
      (controls.group_count > 0 && controls.groups == nullptr) ||
      (controls.limit_count > 0 && controls.limits == nullptr)) {
    return -EINVAL;
  }
  std::vector<StdioStep> stdio_steps;
  if (int err = plan_stdio(request.stdio, request.stdio_count, &stdio_steps); err < 0) {
    name_step(failure, "dup2", "stdio");
    return err;
  }
  ChildStack& stack = thread_stack;
  if (int error = stack.ensure(); error != 0) {
    name_step(failure, stack.failed_syscall(), "spawn");
    return -error;
  }
  ChildArgs args = {&request,
                    &controls,
                    stdio_steps.data(),
                    stdio_steps.size(),
                    stdio_ceiling(stdio_steps),
                    getpid(),
                    -1,
                    0,
                    nullptr,
                    nullptr};
  int clone_errno = 0;

  if (!needs_private_memory(controls)) {
    pid_t child = clone_blocked(&args, stack.top(), CLONE_VM | CLONE_VFORK | SIGCHLD, &clone_errno);
    if (child < 0) return -clone_errno;
    if (args.error != 0) {
      reap_failed(child);
      name_step(failure, args.syscall, args.step);
      failure->in_child = true;
      return -args.error;
    }
    *pid = child;
    return 0;
  }

  // A child that changes its credentials never shares the host's memory: a
  // copy-on-write clone (as fork(2) does). With CLONE_VM the kernel would
  // mark the shared mm non-dumpable at the uid change, and that flag alone
  // would stand between the target uid and the host's memory; this way the
  // host's dumpable flag is never touched. Exec success or the failing step
  // comes back through a close-on-exec pipe: nothing at exec, a StartStatus
  // on failure, written before the child exits.
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    const int error = errno;
    name_step(failure, "pipe2", "spawn");
    return -error;
  }
  args.status_fd = status_pipe[1];
  pid_t child = clone_blocked(&args, stack.top(), SIGCHLD, &clone_errno);
  close(status_pipe[1]);
  if (child < 0) {
    close(status_pipe[0]);
    return -clone_errno;
  }
  // Nobody waits here for the exec: once its uid changed, the target user
  // may stop the child for as long as it likes. The pipe is read when the
  // child has been reaped (read_start_status).
  *start_status_fd = status_pipe[0];
  *pid = child;
  return 0;
}

}  // namespace exactspawn
