// child_exit.cc — see child_exit.h.
#include "child_exit.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>

namespace exactspawn {

namespace {

int64_t micros(const struct timeval& tv) {
  return static_cast<int64_t>(tv.tv_sec) * 1000000 + static_cast<int64_t>(tv.tv_usec);
}

// The host's peak RSS (KiB) as last read. A peak only grows, so a value at
// or below the one last read is at or below the peak now: getrusage(2) is
// called only for a larger one, not once per reap.
std::atomic<long> known_host_peak{0};

long host_peak_rss_kib(long at_least) {
  long known = known_host_peak.load(std::memory_order_relaxed);
  if (at_least <= known) return known;
  struct rusage host {};
  if (getrusage(RUSAGE_SELF, &host) != 0) return LONG_MAX;  // unknown: report no peak
  long peak = host.ru_maxrss;
  while (known < peak &&
         !known_host_peak.compare_exchange_weak(known, peak, std::memory_order_relaxed)) {
  }
  return peak;
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
  set_exit_status(status, out);
  out->user_cpu_micros = micros(usage.ru_utime);
  out->system_cpu_micros = micros(usage.ru_stime);
  // The host's peak now is at least its peak when the child exec'ed, which
  // the kernel folded into the child's ru_maxrss: only a larger value is the
  // child's (or its descendants').
  out->max_rss_kib = usage.ru_maxrss > host_peak_rss_kib(usage.ru_maxrss)
                         ? static_cast<int64_t>(usage.ru_maxrss)
                         : -1;
  return 1;
}

void set_exit_status(int status, ChildExit* out) {
  out->exited = WIFEXITED(status);
  out->exit_code = out->exited ? WEXITSTATUS(status) : 0;
  out->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
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
