// child_path.cc — see child_path.h.
#include "child_path.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cgroup.h"
#include "child_steps.h"
#include "clone3.h"
#include "helper_file.h"
#include "helper_plan.h"
#include "memfd.h"
#include "mount_view.h"
#include "stdio_plan.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000  // Linux 5.2; older C library headers lack it
#endif

namespace exactspawn {

namespace {

// The child's stack. Its frames are a few hundred bytes; a stack overflow
// hits the guard page below and kills the child (reported as its exit).
constexpr size_t kStackSize = 64 * 1024;

// What the vfork child needs to exec the helper (all -1 when it runs the
// target steps itself). Its descriptors are close-on-exec in the host.
struct HelperLaunch {
  int exe_fd = -1;             // the helper (O_PATH file or sealed memfd)
  int plan_fd = -1;            // the plan (helper_plan.h), a sealed memfd
  int status_fd = -1;          // the start-status pipe's write end
  const char* path = nullptr;  // the helper's path, for a failed exec's report
  bool from_file = false;      // exe_fd is the helper's own file (not a memfd copy)
};

// For tests (set_helper_exec_refusal): the first `refused_execs` of the
// helper's exec attempts fail with `refused_errno` without being made. Plain
// ints read by the vfork child (async-signal-safe: no lock, no write).
std::atomic<int> refused_errno{0};
std::atomic<int> refused_execs{0};

// The parent's data the child reads. The child also writes `failure`, only
// when it is about to exit; the parent reads it after clone() returns, which
// CLONE_VFORK delays until the child has exec'ed (the target or the helper)
// or exited.
struct ChildArgs {
  const SpawnRequest* request;
  const ExecControls* controls;
  const StdioStep* stdio_steps;  // the stdio plan (stdio_plan.h), made by the parent
  size_t stdio_step_count;
  int stdio_ceiling;  // every fd number the plan touches is below it
  pid_t parent;
  HelperLaunch helper;
  bool in_cgroup;  // the kernel placed the child in request->cgroup_fd at clone
  StepFailure failure;
};

// Writes the decimal form of n (>= -1) into buf (at least 12 bytes).
EXACTSPAWN_CHILD_CODE void decimal(int n, char* buf) {
  if (n < 0) {
    buf[0] = '-';
    buf[1] = '1';
    buf[2] = '\0';
    return;
  }
  char digits[12];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n > 0);
  for (int i = 0; i < count; ++i) buf[i] = digits[count - 1 - i];
  buf[count] = '\0';
}

// One exec attempt of the helper (`attempt` counts them, for the test
// refusal): 0 never (an exec that works does not return), else the errno.
EXACTSPAWN_CHILD_CODE int try_exec(int attempt, int fd, const char* file, char* const* argv,
                                   char* const* envp) {
  if (attempt < refused_execs.load(std::memory_order_relaxed)) {
    return refused_errno.load(std::memory_order_relaxed);
  }
  if (fd >= 0) {
    syscall(SYS_execveat, fd, "", argv, envp, kAtEmptyPath);
  } else {
    syscall(SYS_execve, file, argv, envp);
  }
  return errno != 0 ? errno : EIO;
}

// Execs the helper: argv "exactspawn-helper PLAN_FD STATUS_FD", an empty
// environment (the target's comes in the plan, so the helper's libc never
// reads it). Returns only on failure, which it also writes to the status
// pipe: where vfork is emulated by a fork (qemu-user), the parent never sees
// `failure` (another copy of memory) and reads the pipe at the reap instead,
// so a helper that cannot be exec'd is still named, not a bare exit 127.
EXACTSPAWN_CHILD_CODE int exec_helper(const HelperLaunch& helper, const int* keep,
                                      StepFailure* failure) {
  // The plan and the status pipe cross this exec (the helper marks the pipe
  // close-on-exec again); the helper's own descriptor does not.
  for (int i = 1; i < 3; ++i) {
    if (keep[i] >= 0 && syscall(SYS_fcntl, keep[i], F_SETFD, 0) != 0) {
      const int error = errno != 0 ? errno : EIO;
      *failure = {-error, "fcntl", "helper"};
      return failure->err;
    }
  }
  char plan[12];
  char status[12];
  decimal(keep[1], plan);
  decimal(keep[2], status);
  char name[] = "exactspawn-helper";
  char* argv[] = {name, plan, status, nullptr};
  char* envp[] = {nullptr};
  const int error = try_exec(0, keep[0], nullptr, argv, envp);
  // Where execveat(AT_EMPTY_PATH) itself is what fails, the same file is
  // exec'd by a path instead. Debian's 5.10.223 kernel (bullseye) fails it
  // with ENOENT for every file (the kernel tier, scripts/kernels.mjs; 6.1 and
  // 6.12 run it); qemu-user 7.2 has no execveat (ENOSYS). Any other errno is
  // the file's (EACCES, ENOEXEC, ETXTBSY) or the host's (ENOMEM, EAGAIN), and
  // another path meets it too; EINVAL is not taken: every kernel with the
  // call (3.19) knows AT_EMPTY_PATH.
  if (error == ENOENT || error == ENOSYS) {
    // The descriptor's magic link opens the same file, a memfd copy too;
    // close-on-exec does not matter for an ELF file (only a script's
    // interpreter would reopen it). Where /proc is not mounted, the helper's
    // own path, if it runs from its file (a memfd copy has no other path).
    char proc_fd[32] = "/proc/self/fd/";
    decimal(keep[0], proc_fd + 14);
    if (try_exec(1, -1, proc_fd, argv, envp) != 0 && helper.from_file) {
      try_exec(2, -1, helper.path, argv, envp);
    }
  }
  // Every attempt failed: the execveat's errno says most (the fallbacks'
  // are ENOENT with no /proc, or the same as the first).
  *failure = {-error, "execveat", "helper", helper.path};
  report_start_status(keep[2], *failure);
  return failure->err;
}

EXACTSPAWN_CHILD_CODE int child_main(void* raw) {
  ChildArgs* args = static_cast<ChildArgs*>(raw);
  const SpawnRequest& r = *args->request;
  StepFailure* failure = &args->failure;
  // Descriptors the helper needs past the stdio set-up, each moved above the
  // plan's range: the helper, its plan, the status pipe (-1 without one).
  int keep[3] = {args->helper.exe_fd, args->helper.plan_fd, args->helper.status_fd};
  int err = reset_signals(failure);
  if (err == 0) err = enter_session(r, failure);
  // A contained step's cgroup (cgroup.h), where clone3 did not place the
  // child in it: entered right after the session and before any exec (the
  // helper's too), with the host's credentials.
  if (err == 0 && r.cgroup_fd >= 0 && !args->in_cgroup) {
    const char* call = "write";
    if ((err = enter_cgroup(r.cgroup_fd, &call)) != 0) *failure = {err, call, "contain"};
  }
  // A contained step's own user namespace (with its PID namespace): the
  // capability its init needs kept across the helper's exec, while the
  // clone's capabilities there last. The ids are mapped by the helper
  // (child_steps.h map_user_namespace), not here: this child shares the
  // host's memory, and a host that made itself non-dumpable
  // (core/dumpable.h) leaves it /proc/self files owned by root.
  if (err == 0 && args->controls->pid_namespace == PidNamespace::kPidAndUser) {
    err = keep_admin_capability(failure);
  }
  if (err == 0) {
    err =
        run_stdio(args->stdio_steps, args->stdio_step_count, args->stdio_ceiling, keep, 3, failure);
  }
  if (err == 0 && keep[0] >= 0) err = exec_helper(args->helper, keep, failure);
  // No helper: no sandbox and no credential change (needs_helper()).
  if (err == 0) err = run_target_steps(r, *args->controls, args->parent, failure);
  if (err == 0) err = exec_target(r, failure);
  syscall(SYS_exit, 127);
  return 127;
}

// The child's stack with a PROT_NONE guard page below it, mapped on a
// thread's first spawn and kept for its later ones (unmapped when the thread
// ends). Reuse is safe: CLONE_VFORK keeps the thread suspended until the
// child has exec'ed (a new address space) or exited, so at most one child
// runs on it, and only while its owner waits. Mapping a stack per spawn
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

// Set when clone() refused CLONE_PIDFD with EINVAL: an emulator that
// predates the flag (qemu-user 7.2 runs every other clone of ours) or a
// seccomp profile that filters on it. From then on the child starts without
// the flag and its exit watch opens the pidfd with pidfd_open.
std::atomic<bool> pidfd_flag_refused{false};

// Set when clone3 with CLONE_INTO_CGROUP is refused as such: ENOSYS (a
// kernel before 5.3, an emulator, a container's seccomp profile), E2BIG (a
// kernel before 5.7 that does not know the cgroup field), EINVAL for a call
// without CLONE_PIDFD. Contained children then enter their cgroup themselves
// (enter_cgroup). An EINVAL of a call with CLONE_PIDFD may refuse that flag
// alone: the call is made again without it first (clone3_blocked).
std::atomic<bool> clone3_refused{false};

void name_step(ChildPathFailure* failure, const char* name, const char* step) {
  size_t i = 0;
  for (; i + 1 < sizeof failure->syscall && name[i] != '\0'; ++i) failure->syscall[i] = name[i];
  failure->syscall[i] = '\0';
  for (i = 0; i + 1 < sizeof failure->step && step[i] != '\0'; ++i) failure->step[i] = step[i];
  failure->step[i] = '\0';
}

// Runs make_child() with every signal blocked (glibc's internal ones too: a
// raw call, since glibc's sigprocmask filters them), so no handler runs in
// the child before it has reset the dispositions; the child inherits this
// mask. This thread's errno is kept: the child's syscall() calls write it.
template <typename MakeChild>
long all_signals_blocked(MakeChild make_child) {
  const int saved_errno = errno;
  uint64_t all = ~uint64_t{0};
  uint64_t old = 0;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof all);
  const long child = make_child();
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, nullptr, sizeof old);
  errno = saved_errno;
  return child;
}

// The child, by clone with every signal blocked. With CLONE_PIDFD in flags
// the kernel stores the child's pidfd in *pidfd.
pid_t clone_blocked(ChildArgs* args, void* stack_top, int flags, int* pidfd, int* clone_errno) {
  return static_cast<pid_t>(all_signals_blocked([&] {
    const pid_t child = clone(child_main, stack_top, flags, args, pidfd);
    *clone_errno = errno;
    return static_cast<long>(child);
  }));
}

// clone_blocked() through clone3, the child created in the cgroup open as
// `cgroup_fd`. Returns -1 with *clone_errno set where clone3 cannot do it
// (clone3_refused is then set and the caller takes clone_blocked()). An
// EINVAL with CLONE_PIDFD asked is tried again without the flag: where that
// starts the child, the flag was what was refused (pidfd_flag_refused, as
// for clone(2)) and clone3 stays in use; where it fails too, clone3 is.
pid_t clone3_blocked(ChildArgs* args, void* stack_top, int flags, int cgroup_fd, int* pidfd,
                     int* clone_errno) {
  Clone3Args clone = {};
  clone.flags =
      (static_cast<uint64_t>(static_cast<unsigned>(flags)) & ~uint64_t{CSIGNAL}) | kCloneIntoCgroup;
  clone.pidfd = reinterpret_cast<uintptr_t>(pidfd);
  clone.exit_signal = static_cast<unsigned>(flags) & CSIGNAL;
  clone.stack = reinterpret_cast<uintptr_t>(stack_top) - kStackSize;
  clone.stack_size = kStackSize;
  clone.cgroup = static_cast<unsigned>(cgroup_fd);
  args->in_cgroup = true;
  long child = all_signals_blocked([&] { return clone3_run(&clone, child_main, args); });
  if (child == -EINVAL && (clone.flags & CLONE_PIDFD) != 0) {
    clone.flags &= ~uint64_t{CLONE_PIDFD};
    clone.pidfd = 0;
    child = all_signals_blocked([&] { return clone3_run(&clone, child_main, args); });
    if (child >= 0) pidfd_flag_refused.store(true, std::memory_order_relaxed);
  }
  if (child >= 0) return static_cast<pid_t>(child);
  args->in_cgroup = false;
  *clone_errno = static_cast<int>(-child);
  if (*clone_errno == ENOSYS || *clone_errno == E2BIG || *clone_errno == EINVAL) {
    clone3_refused.store(true, std::memory_order_relaxed);
  }
  return -1;
}

void reap_failed(pid_t child) {
  const int saved_errno = errno;
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  errno = saved_errno;
}

}  // namespace

int child_clone_flags(const SpawnRequest& request, const ExecControls& controls) {
  // The vfork child shares the parent's memory until its exec. CLONE_PIDFD
  // (Linux 5.2) hands back the child's pidfd in the same call, so the exit
  // watch needs no pidfd_open; a kernel that ignores the flag leaves the fd
  // at -1 and the watch opens one (the addon's floor is Linux 5.3), and one
  // that refused it once is not asked again (pidfd_flag_refused).
  int flags = CLONE_VM | CLONE_VFORK | SIGCHLD;
  if (request.pidfd != nullptr && !pidfd_flag_refused.load(std::memory_order_relaxed)) {
    flags |= CLONE_PIDFD;
  }
  // A contained step's PID namespace: the child is its PID 1 and execs the
  // helper as the namespace's init. Made with the user namespace in the same
  // call (a new PID namespace needs CAP_SYS_ADMIN in the owning one); the
  // kernel sets up the new user namespace's credentials on the child's own
  // copy, so the shared mm's dumpable flag is not touched.
  if (controls.pid_namespace != PidNamespace::kNone) flags |= CLONE_NEWPID;
  if (controls.pid_namespace == PidNamespace::kPidAndUser) flags |= CLONE_NEWUSER;
  return flags;
}

bool needs_helper(const ExecControls& controls) {
  return controls.set_uid || controls.set_gid || controls.set_groups ||
         controls.sandbox != nullptr || controls.pid_namespace != PidNamespace::kNone;
}

int read_start_status(int fd, ChildPathFailure* failure, ChildExit* exit, bool* leader_reported) {
  StartStatus status = {};
  long n;
  for (;;) {
    n = read(fd, &status, sizeof status);
    if (n < 0 && errno == EINTR) continue;
    // A leader's pidfd record nobody took (spawnSync): the next one is the report.
    if (n == static_cast<long>(sizeof kLeaderRecord) &&
        std::memcmp(&status, kLeaderRecord, sizeof kLeaderRecord) == 0) {
      continue;
    }
    break;
  }
  // Exec'ed (EOF, EAGAIN) or nothing to say.
  if (n <= static_cast<long>(offsetof(StartStatus, path))) return 0;
  // A PID namespace's init: the leader ran and ended (a failed start of the
  // leader would have come first).
  if (status.error == 0 && status.leader_ended == 1) {
    if (exit != nullptr) set_exit_status(status.wait_status, exit);
    if (leader_reported != nullptr) *leader_reported = true;
    return 0;
  }
  status.syscall[sizeof status.syscall - 1] = '\0';
  status.step[sizeof status.step - 1] = '\0';
  status.path[sizeof status.path - 1] = '\0';
  failure->path = status.path;
  name_step(failure, status.syscall[0] != '\0' ? status.syscall : "execve",
            status.step[0] != '\0' ? status.step : "exec");
  failure->in_child = true;
  return status.error > 0 ? -status.error : -EIO;
}

namespace {

// The pointers and counts start() relies on; false: EINVAL.
bool request_complete(const SpawnRequest& request, const ExecControls& controls) {
  return request.file != nullptr && request.argv != nullptr && request.envp != nullptr &&
         request.stdio != nullptr && request.stdio_count >= 3 &&
         request.stdio_count <= static_cast<size_t>(INT_MAX) &&
         (controls.group_count == 0 || controls.groups != nullptr) &&
         (controls.limit_count == 0 || controls.limits != nullptr);
}

// A helper child's host side: its plan in a sealed memfd and a close-on-exec
// status channel (nothing at the target's exec, a StartStatus on a failed
// step, written before the helper exits). The child's ends are closed once
// it has started; the read end is the caller's.
struct HelperFiles {
  int plan_fd = -1;
  int status[2] = {-1, -1};
  std::string path;  // the helper's, for a failed exec's report
};

// Opens the helper and writes its plan: 0, or -errno with `failure` naming
// the call (nothing left open).
int prepare_helper(const SpawnRequest& request, const ExecControls& controls, const PlanMode* mode,
                   pid_t parent, HelperFiles* files, HelperLaunch* launch,
                   ChildPathFailure* failure) {
  StepFailure why;
  bool from_file = false;
  const int exe = helper_fd(&why, &files->path, &from_file);
  if (exe < 0) {
    // No call failed for a helper of another machine (ENOEXEC): none named.
    name_step(failure, why.syscall != nullptr ? why.syscall : "", "helper");
    return why.err;
  }
  std::vector<char> plan;
  if (int err =
          encode_plan(request, controls, parent, mode != nullptr ? *mode : PlanMode::kRun, &plan);
      err != 0) {
    name_step(failure, "write", "helper");
    return err;
  }
  files->plan_fd = sealed_memfd("exactspawn-plan", plan.data(), plan.size(), &why);
  if (files->plan_fd < 0) {
    name_step(failure, why.syscall, "helper");
    return files->plan_fd;
  }
  // A PID namespace's init sends its leader's pidfd back (child_steps.h
  // kLeaderRecord), which needs a socket; message boundaries keep each
  // record whole as in a pipe.
  const bool leader_channel = mode == nullptr && controls.pid_namespace != PidNamespace::kNone;
  const int made =
      leader_channel
          ? socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, files->status)
          : pipe2(files->status, O_CLOEXEC | O_NONBLOCK);
  if (made != 0) {
    const int error = errno;
    close(files->plan_fd);
    name_step(failure, leader_channel ? "socketpair" : "pipe2", "spawn");
    return -error;
  }
  *launch = {exe, files->plan_fd, files->status[1], files->path.c_str(), from_file};
  return 0;
}

// Clones the child: through clone3 into its cgroup while that works, else by
// clone. Returns its pid, or -1 with *clone_errno set.
pid_t clone_child(ChildArgs* args, void* stack_top, int flags, int cgroup_fd, int* pidfd,
                  int* clone_errno) {
  pid_t child = -1;
  if (cgroup_fd >= 0 && !clone3_refused.load(std::memory_order_relaxed)) {
    child = clone3_blocked(args, stack_top, flags, cgroup_fd, pidfd, clone_errno);
    // Any other refusal (EPERM, EACCES on the cgroup) is the child's own
    // entry's to report: it meets the same check, at a named step.
  }
  if (child < 0) child = clone_blocked(args, stack_top, flags, pidfd, clone_errno);
  if (child < 0 && (flags & CLONE_PIDFD) != 0 &&
      (*clone_errno == EMFILE || *clone_errno == ENFILE || *clone_errno == EINVAL)) {
    // No fd left for the pidfd: start the child all the same; the watch's
    // own pidfd_open then names the shortage at its step. EINVAL: the flag
    // itself may have been refused (pidfd_flag_refused, kept only when the
    // call without it succeeds); a request the kernel refuses for another
    // reason fails again here, with its own errno.
    const bool invalid = *clone_errno == EINVAL;
    child = clone_blocked(args, stack_top, flags & ~CLONE_PIDFD, pidfd, clone_errno);
    if (invalid && child >= 0) pidfd_flag_refused.store(true, std::memory_order_relaxed);
  }
  return child;
}

// A child that failed before its exec (the target's or the helper's): reaped,
// its failure named as its own.
int child_failed(pid_t child, int pidfd, const StepFailure& child_failure,
                 ChildPathFailure* failure) {
  if (pidfd >= 0) close(pidfd);
  reap_failed(child);
  name_step(failure, child_failure.syscall, child_failure.step);
  failure->in_child = true;
  if (child_failure.path != nullptr) failure->path = child_failure.path;
  return child_failure.err;
}

// Clones the child of `args` and hands its pid, pidfd and start-status read
// end to the caller; the child's ends of `helper` are closed either way.
int launch(ChildArgs* args, HelperFiles* helper, void* stack_top, pid_t* pid, int* start_status_fd,
           ChildPathFailure* failure) {
  const SpawnRequest& request = *args->request;
  int clone_errno = 0;
  int pidfd = -1;
  const pid_t child = clone_child(args, stack_top, child_clone_flags(request, *args->controls),
                                  request.cgroup_fd, &pidfd, &clone_errno);
  if (helper->plan_fd >= 0) close(helper->plan_fd);
  if (helper->status[1] >= 0) close(helper->status[1]);
  if (child < 0 || args->failure.err != 0) {
    if (helper->status[0] >= 0) close(helper->status[0]);
    if (child < 0) return -clone_errno;
    return child_failed(child, pidfd, args->failure, failure);
  }
  // The helper has started (the vfork returned at its exec). Nobody waits
  // here for the target's exec: once its uid changed, the target user may
  // stop the helper for as long as it likes. The pipe is read when the
  // child has been reaped (read_start_status).
  *start_status_fd = helper->status[0];
  *pid = child;
  if (request.pidfd != nullptr) {
    *request.pidfd = pidfd;
  } else if (pidfd >= 0) {
    close(pidfd);
  }
  return 0;
}

// Starts the child of `request` (through the helper when `mode` is set or the
// controls need it). See spawn_child_path().
int start(const SpawnRequest& request, const ExecControls& controls, const PlanMode* mode,
          pid_t* pid, int* start_status_fd, ChildPathFailure* failure) {
  *start_status_fd = -1;
  name_step(failure, "clone", "spawn");
  failure->in_child = false;
  if (!request_complete(request, controls)) return -EINVAL;
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
                    {},
                    false,
                    {}};
  HelperFiles helper;
  if (mode != nullptr || needs_helper(controls)) {
    const int err =
        prepare_helper(request, controls, mode, args.parent, &helper, &args.helper, failure);
    if (err != 0) return err;
  }
  return launch(&args, &helper, stack.top(), pid, start_status_fd, failure);
}

}  // namespace

void set_helper_exec_refusal(int error, int count) {
  refused_errno.store(error, std::memory_order_relaxed);
  refused_execs.store(count, std::memory_order_relaxed);
}

int spawn_child_path(const SpawnRequest& request, const ExecControls& controls, pid_t* pid,
                     int* start_status_fd, ChildPathFailure* failure) {
  return start(request, controls, nullptr, pid, start_status_fd, failure);
}

int run_helper_probe(int mode, StepFailure* failure, PidNamespace pid_namespace) {
  // The failed call's name outlives this frame (StepFailure keeps a pointer).
  thread_local char failed_call[sizeof(ChildPathFailure::syscall)];
  const char* empty[] = {nullptr};
  const int stdio[3] = {-1, -1, -1};
  SpawnRequest request;
  request.file = "";
  request.argv = const_cast<char* const*>(empty);
  request.envp = const_cast<char* const*>(empty);
  request.stdio = stdio;
  request.stdio_count = 3;
  const PlanMode plan_mode = static_cast<PlanMode>(mode);
  ExecControls controls;
  controls.pid_namespace = pid_namespace;
  pid_t child = 0;
  int status_fd = -1;
  ChildPathFailure named;
  int err = start(request, controls, &plan_mode, &child, &status_fd, &named);
  if (err < 0) {
    // The helper's own failure (missing, another machine's build) is the
    // helper's, not the probed kernel feature's: keep the call and the step.
    const bool helper = std::strcmp(named.step, "helper") == 0;
    std::snprintf(failed_call, sizeof failed_call, "%s", named.syscall);
    *failure = helper && failed_call[0] != '\0' ? StepFailure{err, failed_call, "helper"}
                                                : StepFailure{err, "clone", "contain"};
    return err;
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (status_fd >= 0) {
    // A helper that could not be exec'ed where vfork is a fork (qemu-user)
    // says so here only.
    err = read_start_status(status_fd, &named);
    close(status_fd);
    if (err < 0 && std::strcmp(named.step, "helper") == 0) {
      std::snprintf(failed_call, sizeof failed_call, "%s", named.syscall);
      *failure = {err, failed_call, "helper"};
      return err;
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace exactspawn
