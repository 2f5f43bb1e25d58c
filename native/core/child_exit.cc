// child_exit.cc — see child_exit.h.
#include "child_exit.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace exactspawn {

namespace {

int64_t micros(const struct timeval& tv) {
  return static_cast<int64_t>(tv.tv_sec) * 1000000 + static_cast<int64_t>(tv.tv_usec);
}

}  // namespace

int open_pidfd(pid_t pid) {
  long fd = syscall(SYS_pidfd_open, pid, 0);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

int signal_pidfd(int pidfd, int sig) {
  long r = syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0);
  return r < 0 ? -errno : 0;
}

int signal_group(pid_t pgid, int sig) {
  if (pgid <= 1) return -EINVAL;
  return kill(-pgid, sig) < 0 ? -errno : 0;
}

int reap_child(pid_t pid, ChildExit* out) {
  int status = 0;
  struct rusage usage {};
  pid_t r;
  do {
    r = wait4(pid, &status, WNOHANG, &usage);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return -errno;
  if (r == 0) return 0;
  out->exited = WIFEXITED(status);
  out->exit_code = out->exited ? WEXITSTATUS(status) : 0;
  out->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  out->user_cpu_micros = micros(usage.ru_utime);
  out->system_cpu_micros = micros(usage.ru_stime);
  // The host's peak now is at least its peak when the child exec'ed, which
  // the kernel folded into the child's ru_maxrss: only a larger value is the
  // child's (or its descendants').
  struct rusage host {};
  out->max_rss_kib = getrusage(RUSAGE_SELF, &host) == 0 && usage.ru_maxrss > host.ru_maxrss
                         ? static_cast<int64_t>(usage.ru_maxrss)
                         : -1;
  return 1;
}

int reap_child_blocking(pid_t pid) {
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : 0;
}

}  // namespace exactspawn
