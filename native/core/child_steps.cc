// child_steps.cc — see child_steps.h.
#include "child_steps.h"

#include <fcntl.h>
#include <linux/keyctl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "capabilities.h"
#include "mount_view.h"
#include "sandbox.h"

#ifndef SYS_close_range
#define SYS_close_range 436  // the same number on every architecture since Linux 5.9
#endif

namespace exactspawn {

namespace {

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

// Fills *failure from errno (EIO when a call failed without one) and returns
// the negative errno.
EXACTSPAWN_CHILD_CODE int fail(StepFailure* failure, const char* syscall, const char* step) {
  const int error = errno != 0 ? errno : EIO;
  *failure = {-error, syscall, step};
  return -error;
}

EXACTSPAWN_CHILD_CODE int fail_with(StepFailure* failure, int err, const char* syscall,
                                    const char* step, const char* path = nullptr) {
  *failure = {err < 0 ? err : -EIO, syscall, step, path};
  return failure->err;
}

// Copies name into to (size bytes, NUL-terminated); returns its length.
EXACTSPAWN_CHILD_CODE size_t copy_name(char* to, size_t size, const char* name) {
  size_t i = 0;
  if (name == nullptr) return 0;
  for (; i + 1 < size && name[i] != '\0'; ++i) to[i] = name[i];
  return i;
}

// Closes every fd >= from except those in keep[] (at most a handful).
EXACTSPAWN_CHILD_CODE int close_from(int from, const int* keep, size_t keep_count,
                                     StepFailure* failure) {
  int next = from;
  for (;;) {
    // The lowest kept fd at or above `next`.
    int stop = -1;
    for (size_t i = 0; i < keep_count; ++i) {
      if (keep[i] >= next && (stop < 0 || keep[i] < stop)) stop = keep[i];
    }
    if (stop < 0) break;
    if (stop > next && syscall(SYS_close_range, next, stop - 1, 0) != 0) {
      return fail(failure, "close_range", "stdio");
    }
    next = stop + 1;
  }
  if (syscall(SYS_close_range, next, ~0U, 0) != 0) return fail(failure, "close_range", "stdio");
  return 0;
}

EXACTSPAWN_CHILD_CODE int set_limits(const ExecControls& c, StepFailure* failure) {
  for (size_t i = 0; i < c.limit_count; ++i) {
    KernelRlimit limit = {c.limits[i].soft, c.limits[i].hard};
    if (syscall(SYS_prlimit64, 0, c.limits[i].resource, &limit, nullptr) != 0) {
      return fail(failure, "setrlimit", "rlimits");
    }
  }
  if (c.set_nice && syscall(SYS_setpriority, PRIO_PROCESS, 0, c.nice) != 0) {
    return fail(failure, "setpriority", "nice");
  }
  return 0;
}

EXACTSPAWN_CHILD_CODE int enter_mount_view(const ExecControls& c, StepFailure* failure) {
  if (c.sandbox == nullptr || c.sandbox->mount_view == nullptr) return 0;
  const char* name = "unshare";
  const char* path = nullptr;
  if (int err = apply_mount_view(*c.sandbox->mount_view, &name, &path); err != 0) {
    return fail_with(failure, err, name, "sandbox", path);
  }
  return 0;
}

EXACTSPAWN_CHILD_CODE int empty_bounding_set(const ExecControls& c, StepFailure* failure) {
  if (c.sandbox == nullptr || !c.sandbox->drop_capabilities) return 0;
  if (drop_bounding_set() != 0) return fail(failure, "prctl", "sandbox");
  return 0;
}

// The raw calls change only this task and take no lock (glibc's setuid and
// friends signal every thread of the process, see child_path.h).
EXACTSPAWN_CHILD_CODE int set_credentials(const ExecControls& c, StepFailure* failure) {
  if (c.set_groups && syscall(SYS_setgroups, c.group_count, c.groups) != 0) {
    return fail(failure, "setgroups", "groups");
  }
  if (c.set_gid && syscall(SYS_setresgid, c.gid, c.gid, c.gid) != 0) {
    return fail(failure, "setgid", "gid");
  }
  if (c.set_uid && syscall(SYS_setresuid, c.uid, c.uid, c.uid) != 0) {
    return fail(failure, "setuid", "uid");
  }
  return 0;
}

// A new anonymous session keyring, created as the new user (so it is theirs,
// as pam_keyinit does): the host's session keyring, and every key in it,
// stays out of the child's reach (keyrings(7), session-keyring(7)). Before
// the sandbox's filter, which refuses keyctl. A kernel without keys (ENOSYS)
// or a seccomp policy of the host's refusing keyctl (EPERM) gives no keyring
// access to hand over either way.
EXACTSPAWN_CHILD_CODE int join_keyring(const ExecControls& c, StepFailure* failure) {
  if (!c.set_uid && !c.set_gid && !c.set_groups) return 0;
  if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, nullptr) < 0 && errno != ENOSYS &&
      errno != EPERM) {
    return fail(failure, "keyctl", "credentials");
  }
  return 0;
}

EXACTSPAWN_CHILD_CODE int confine(const ExecControls& c, StepFailure* failure) {
  if (c.sandbox == nullptr) return 0;
  const char* name = "prctl";
  const char* path = nullptr;
  if (int err = apply_sandbox(*c.sandbox, &name, &path); err != 0) {
    return fail_with(failure, err, name, "sandbox", path);
  }
  return 0;
}

EXACTSPAWN_CHILD_CODE int drop_all_capabilities(const ExecControls& c, StepFailure* failure) {
  if (c.sandbox == nullptr || !c.sandbox->drop_capabilities) return 0;
  const char* name = "capset";
  if (int err = drop_capabilities(&name); err != 0) return fail_with(failure, err, name, "sandbox");
  return 0;
}

EXACTSPAWN_CHILD_CODE int arm_parent_death(const ExecControls& c, pid_t parent,
                                           StepFailure* failure) {
  if (c.parent_death_signal == 0) return 0;
  if (syscall(SYS_prctl, PR_SET_PDEATHSIG, c.parent_death_signal, 0, 0, 0) != 0) {
    return fail(failure, "prctl", "parentDeathSignal");
  }
  // The parent may have died before the signal was armed.
  if (syscall(SYS_getppid) != parent) {
    syscall(SYS_kill, syscall(SYS_getpid), c.parent_death_signal);
  }
  return 0;
}

EXACTSPAWN_CHILD_CODE int finish(const SpawnRequest& r, const ExecControls& c,
                                 StepFailure* failure) {
  if (c.no_new_privs && syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return fail(failure, "prctl", "noNewPrivileges");
  }
  if (c.umask >= 0) syscall(SYS_umask, c.umask);
  if (r.cwd != nullptr && syscall(SYS_chdir, r.cwd) != 0) return fail(failure, "chdir", "cwd");
  uint64_t empty = 0;
  if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty, nullptr, sizeof empty) != 0) {
    return fail(failure, "rt_sigprocmask", "signals");
  }
  return 0;
}

}  // namespace

// Also runs in the vfork child (exec_helper's failed execveat): child code.
EXACTSPAWN_CHILD_CODE void report_start_status(int fd, const StepFailure& failure) {
  StartStatus status = {};
  status.error = failure.err < 0 ? -failure.err : EIO;
  copy_name(status.syscall, sizeof status.syscall, failure.syscall);
  copy_name(status.step, sizeof status.step, failure.step);
  const size_t length = copy_name(status.path, sizeof status.path, failure.path);
  syscall(SYS_write, fd, &status, offsetof(StartStatus, path) + length + 1);
}

void report_leader_end(int fd, int wait_status) {
  StartStatus status = {};
  status.leader_ended = 1;
  status.wait_status = wait_status;
  syscall(SYS_write, fd, &status, offsetof(StartStatus, path) + 1);
}

EXACTSPAWN_CHILD_CODE void report_leader_pidfd(int fd) {
  const long self = syscall(SYS_pidfd_open, syscall(SYS_getpid), 0);
  struct iovec part = {const_cast<char*>(kLeaderRecord), sizeof kLeaderRecord};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  struct msghdr message = {};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  if (self >= 0) {
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    struct cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    const int pidfd = static_cast<int>(self);
    __builtin_memcpy(CMSG_DATA(header), &pidfd, sizeof pidfd);
  }
  syscall(SYS_sendmsg, fd, &message, MSG_NOSIGNAL);
  if (self >= 0) syscall(SYS_close, self);
}

EXACTSPAWN_CHILD_CODE int reset_signals(StepFailure* failure) {
  // Every handler the parent installed would run here on the parent's data.
  KernelSigaction default_action = {SIG_DFL, 0, nullptr, 0};
  for (int sig = 1; sig < _NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    if (syscall(SYS_rt_sigaction, sig, &default_action, nullptr, sizeof(uint64_t)) != 0) {
      return fail(failure, "rt_sigaction", "signals");
    }
  }
  return 0;
}

EXACTSPAWN_CHILD_CODE int enter_session(const SpawnRequest& r, StepFailure* failure) {
  if (r.new_session) {
    if (syscall(SYS_setsid) < 0) return fail(failure, "setsid", "setsid");
  } else if (r.new_process_group) {
    if (syscall(SYS_setpgid, 0, 0) != 0) return fail(failure, "setpgid", "processGroup");
  }
  return 0;
}

EXACTSPAWN_CHILD_CODE int write_proc_file(const char* path, const char* text,
                                          StepFailure* failure) {
  size_t length = 0;
  while (text[length] != '\0') ++length;
  long fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return fail_with(failure, -errno, "openat", "contain", path);
  long n = syscall(SYS_write, fd, text, length);
  const int error = errno;
  syscall(SYS_close, fd);
  if (n != static_cast<long>(length)) {
    return fail_with(failure, n < 0 ? -error : -EIO, "write", "contain", path);
  }
  return 0;
}

EXACTSPAWN_CHILD_CODE int map_user_namespace(const char* uid_map, const char* gid_map,
                                             StepFailure* failure) {
  int err = write_proc_file("/proc/self/setgroups", "deny", failure);
  if (err == 0) err = write_proc_file("/proc/self/uid_map", uid_map, failure);
  if (err == 0) err = write_proc_file("/proc/self/gid_map", gid_map, failure);
  return err;
}

EXACTSPAWN_CHILD_CODE int keep_admin_capability(StepFailure* failure) {
  // The inheritable set as the permitted one (every capability, in the new
  // namespace), so CAP_SYS_ADMIN can be raised in the ambient set.
  CapHeader header = {kCapabilityVersion3, 0};
  CapData data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return fail(failure, "capget", "contain");
  for (auto& word : data) word.inheritable = word.permitted;
  if (syscall(SYS_capset, &header, data) != 0) return fail(failure, "capset", "contain");
  if (syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, kCapSysAdmin, 0, 0) != 0) {
    return fail(failure, "prctl", "contain");
  }
  return 0;
}

EXACTSPAWN_CHILD_CODE int run_stdio(const StdioStep* steps, size_t count, int ceiling, int* keep,
                                    size_t keep_count, StepFailure* failure) {
  // The kept descriptors outlive the stdio set-up (they close at exec): each
  // moves above every fd the plan touches first, so no dup lands on it.
  for (size_t i = 0; i < keep_count; ++i) {
    if (keep[i] < 0 || keep[i] >= ceiling) continue;
    long moved = syscall(SYS_fcntl, keep[i], F_DUPFD_CLOEXEC, ceiling);
    if (moved < 0) return fail(failure, "fcntl", "stdio");
    keep[i] = static_cast<int>(moved);
  }
  for (size_t k = 0; k < count; ++k) {
    const StdioStep& step = steps[k];
    switch (step.op) {
      case StdioOp::kDup:
        if (syscall(SYS_dup3, step.from, step.to, 0) < 0) return fail(failure, "dup2", "stdio");
        break;
      case StdioOp::kKeep:
        if (syscall(SYS_fcntl, step.to, F_SETFD, 0) != 0) return fail(failure, "fcntl", "stdio");
        break;
      case StdioOp::kOpenNull: {
        // Opened without O_CLOEXEC: it stays where it lands when that is the slot.
        long fd = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR);
        if (fd < 0) return fail(failure, "open", "stdio");
        if (fd != step.to) {
          if (syscall(SYS_dup3, fd, step.to, 0) < 0) return fail(failure, "dup2", "stdio");
          syscall(SYS_close, fd);
        }
        break;
      }
      case StdioOp::kCloseFrom:
        if (int err = close_from(step.to, keep, keep_count, failure); err != 0) return err;
        break;
    }
  }
  return 0;
}

// The target steps' order, written here only; each line's why beside it.
EXACTSPAWN_CHILD_CODE int run_target_steps(const SpawnRequest& request,
                                           const ExecControls& controls, pid_t parent,
                                           StepFailure* failure) {
  // Needs CAP_SYS_ADMIN, so first.
  int err = enter_mount_view(controls, failure);
  // Raising a limit or the priority needs a capability the uid change drops.
  if (err == 0) err = set_limits(controls, failure);
  // Emptied while CAP_SETPCAP is still held.
  if (err == 0) err = empty_bounding_set(controls, failure);
  // setgroups, setresgid, setresuid: groups first.
  if (err == 0) err = set_credentials(controls, failure);
  // Joined as the new user (so it is theirs), before the filter refuses keyctl.
  if (err == 0) err = join_keyring(controls, failure);
  // no_new_privs, the Landlock ruleset built as the new user, the seccomp filter.
  if (err == 0) err = confine(controls, failure);
  // Effective, permitted, inheritable and ambient emptied.
  if (err == 0) err = drop_all_capabilities(controls, failure);
  // After the uid change, which clears it.
  if (err == 0) err = arm_parent_death(controls, parent, failure);
  // no_new_privs, umask, cwd (entered as the new user), an empty signal mask.
  if (err == 0) err = finish(request, controls, failure);
  return err;
}

EXACTSPAWN_CHILD_CODE int exec_target(const SpawnRequest& r, StepFailure* failure) {
  syscall(SYS_execve, r.file, r.argv, r.envp);
  return fail(failure, "execve", "exec");
}

}  // namespace exactspawn
