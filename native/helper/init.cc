// init.cc — see init.h. The helper's own process (not the host's memory):
// libc calls are fine here, but it stays small: no allocation after the plan.
#include "init.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "../core/child_steps.h"

namespace exactspawn {

namespace {

// Signals the init never forwards: the ones it cannot get or must not pass
// on (SIGCHLD is its own), and the synchronous faults.
bool kept(int sig) {
  return sig == SIGKILL || sig == SIGSTOP || sig == SIGCHLD || sig == SIGSEGV || sig == SIGBUS ||
         sig == SIGFPE || sig == SIGILL || sig == SIGTRAP || sig == SIGSYS;
}

[[noreturn]] void fail(int status_fd, const StepFailure& failure) {
  if (status_fd >= 0) report_start_status(status_fd, failure);
  _exit(127);
}

// The host's death kills the init (PID 1 of a namespace takes SIGKILL from
// an ancestor namespace), and with it every process in the namespace. The
// signal is armed after the host may already have gone: getppid() says 0
// here (the host is outside the namespace), so the status pipe tells
// instead: its read end, held by the host until it reaps the init, is closed
// when the host is gone (POLLERR on a pipe's write end, POLLHUP on a socket).
void arm_host_death(int status_fd) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
    fail(status_fd, {-errno, "prctl", "contain"});
  }
  if (status_fd < 0) return;
  struct pollfd host = {status_fd, POLLOUT, 0};
  if (poll(&host, 1, 0) == 1 && (host.revents & (POLLERR | POLLHUP)) != 0) _exit(127);
}

// The leader: a process group of its own (the host's group signals reach
// the init only, which forwards them once), then the target steps and the
// target. Its parent is the init (pid 1), whose death ends the namespace.
[[noreturn]] void run_leader(DecodedPlan* plan, int status_fd) {
  StepFailure failure;
  // First, before anything of the step runs: the host gets the leader's own
  // pidfd, so it sees the leader end even if this init is held stopped.
  if (status_fd >= 0) report_leader_pidfd(status_fd);
  if (setpgid(0, 0) != 0) fail(status_fd, {-errno, "setpgid", "contain"});
  // The init's CAP_SYS_ADMIN (a user namespace's, for the mount view) stays
  // for the steps below but does not reach the target: without an ambient
  // set, the target's exec as a uid other than 0 drops every capability.
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    fail(status_fd, {-errno, "prctl", "contain"});
  }
  if (run_target_steps(plan->request, plan->controls, 1, &failure) == 0) {
    exec_target(plan->request, &failure);
  }
  fail(status_fd, failure);
}

// The wait(2) status that `info` (a waitid(2) answer) describes.
int wait_status_of(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return (info.si_status & 0xff) << 8;
  if (info.si_code == CLD_DUMPED) return (info.si_status & 0x7f) | 0x80;
  return info.si_status & 0x7f;  // CLD_KILLED
}

// Reaps every child that has ended; records the leader's status. The
// leader's end is reported on the status channel before the leader is
// reaped (each ended child is seen with WNOWAIT first): a host that finds
// the leader gone (it watches the leader's pidfd) knows the report is
// written, and may kill this init at once.
void reap_ended(pid_t leader, int status_fd, bool* leader_ended, int* leader_status) {
  for (;;) {
    siginfo_t info = {};
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      return;  // ECHILD
    }
    if (info.si_pid == 0) return;  // nobody else has ended
    if (info.si_pid == leader && !*leader_ended) {
      *leader_ended = true;
      *leader_status = wait_status_of(info);
      if (status_fd >= 0) report_leader_end(status_fd, *leader_status);
    }
    while (waitpid(info.si_pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

// Passes `sig` on to the leader's group (to the leader alone if it left it).
void forward(pid_t leader, int sig) {
  if (kill(-leader, sig) != 0 && errno == ESRCH) kill(leader, sig);
}

// The namespace emptied: everything but the init killed, then reaped.
void end_namespace() {
  kill(-1, SIGKILL);
  for (;;) {
    pid_t pid = waitpid(-1, nullptr, 0);
    if (pid < 0 && errno != EINTR) return;  // ECHILD: nobody left
  }
}

}  // namespace

[[noreturn]] void run_as_init(DecodedPlan* plan, int status_fd) {
  // Only PID 1 of a namespace of the step's own may end with kill(-1): on the
  // host's namespace it would signal every process this user may.
  if (getpid() != 1) fail(status_fd, {-EINVAL, "getpid", "contain"});
  arm_host_death(status_fd);
  // Not dumpable: a step's process of the init's own uid without
  // CAP_SYS_PTRACE over it (every step of a host without privileges) can
  // neither ptrace the init (stop it, so the namespace outlives its leader)
  // nor read its memory. The leader shares this mm until its exec, which
  // makes the target dumpable again; a root step is not stopped by this.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) fail(status_fd, {-errno, "prctl", "contain"});
  // The mount view's namespaces: already in a user namespace of the step's
  // own, so no nested one (its capabilities would not reach this PID
  // namespace's proc); a fresh /proc shows this namespace.
  if (plan->controls.sandbox != nullptr && plan->controls.sandbox->mount_view != nullptr) {
    plan->view.fresh_proc = true;
    if (plan->controls.pid_namespace == PidNamespace::kPidAndUser) {
      plan->view.user_namespace = false;
    }
  }
  // vfork: the leader's steps are async-signal-safe raw calls (child_steps.h)
  // and it only execs or exits; the init waits meanwhile, which saves the
  // copy of its page tables (about 0.1 ms a step, bench/contain.bench.mjs).
  // A leader whose uid changes marks this shared mm non-dumpable, so the
  // target user cannot reach the init's memory through it.
  const pid_t leader = vfork();
  if (leader < 0) fail(status_fd, {-errno, "vfork", "contain"});
  if (leader == 0) run_leader(plan, status_fd);

  // Every signal is still blocked (the host's vfork child inherited a full
  // mask; a PID 1 gets only signals it blocks or handles): the ones
  // forwarded and SIGCHLD wait in the queue for sigwaitinfo.
  sigset_t waited;
  sigemptyset(&waited);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaddset(&waited, sig);  // glibc skips its own
  }
  sigdelset(&waited, SIGSEGV);
  sigdelset(&waited, SIGBUS);
  sigdelset(&waited, SIGFPE);
  sigdelset(&waited, SIGILL);
  sigdelset(&waited, SIGTRAP);
  sigdelset(&waited, SIGSYS);
  bool leader_ended = false;
  int leader_status = 0;
  while (!leader_ended) {
    siginfo_t info;
    const int sig = sigwaitinfo(&waited, &info);
    if (sig < 0) continue;  // EINTR
    if (sig == SIGCHLD) {
      reap_ended(leader, status_fd, &leader_ended, &leader_status);
    } else if (!kept(sig)) {
      forward(leader, sig);
    }
  }
  end_namespace();
  // The same status as the init's own, for a reader that never got the report.
  if (WIFSIGNALED(leader_status)) _exit(128 + WTERMSIG(leader_status));
  _exit(WIFEXITED(leader_status) ? WEXITSTATUS(leader_status) : 127);
}

}  // namespace exactspawn
