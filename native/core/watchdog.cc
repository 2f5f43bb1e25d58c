// watchdog.cc — see watchdog.h.
#include "watchdog.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <new>

#include "child_exit.h"
#include "orphan_reaper.h"
#include "pipe.h"
#include "spawn_process.h"

namespace exactspawn {

namespace {

std::mutex watchdog_mutex;
bool configured = false;
std::string program_file;
std::vector<std::string> program_argv;
// The host's end of the watchdog's stdin (O_NONBLOCK: a registration never
// waits for the watchdog); -1 while none runs.
int write_fd = -1;
pid_t watchdog_pid = 0;
int watchdog_pidfd = -1;  // the current watchdog's pidfd (a duplicate), or -1
// How long a new watchdog may take to read the replay of the live groups.
constexpr int kReplayWaitMs = 2000;
std::vector<pid_t> groups;         // registered and not yet released
std::vector<std::string> cgroups;  // registered for the host's life
// The call that failed last (static string; nullptr: none did, e.g. an
// allocation). Written and read with the mutex held.
const char* failed_call = nullptr;
// Each launch is one generation. Its monitor thread owns a duplicate of that
// watchdog's pidfd and acts on the watchdog's exit only while its generation
// is still the current one.
uint32_t generation = 0;
std::atomic<int> holds{0};  // watchdog_hold_next_launches

// The test hold: blocks this thread for good when one was asked for.
void hold_if_asked() {
  int left = holds.load(std::memory_order_relaxed);
  while (left > 0) {
    if (holds.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) {
      for (;;) poll(nullptr, 0, -1);
    }
  }
}

// "+1234\n" / "-1234\n"; write(2) of one line, retried on EINTR.
int send_line(char op, pid_t pgid) {
  char line[24];
  char digits[16];
  int n = 0;
  unsigned long value = static_cast<unsigned long>(pgid);
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0 && n < 16);
  int length = 0;
  line[length++] = op;
  while (n > 0) line[length++] = digits[--n];
  line[length++] = '\n';
  for (;;) {
    ssize_t written = write(write_fd, line, static_cast<size_t>(length));
    if (written == length) return 0;
    if (written < 0 && errno == EINTR) continue;
    failed_call = "write";
    // A short write cannot happen below PIPE_BUF; EAGAIN: the pipe is full.
    return written < 0 ? -errno : -EIO;
  }
}

// send_line for a watchdog just started, which reads while the live groups
// are replayed to it: a full pipe is waited for, a bounded time.
int send_line_to_new(char op, pid_t pgid) {
  for (int waited = 0;; waited += 10) {
    int err = send_line(op, pgid);
    if (err != -EAGAIN || waited >= kReplayWaitMs) return err;
    pollfd entry{write_fd, POLLOUT, 0};
    poll(&entry, 1, 10);
  }
}

// "=<path>\n" in one write(2) (the caller keeps it below PIPE_BUF).
int send_cgroup(const std::string& path) {
  std::string line = "=" + path + "\n";
  for (;;) {
    ssize_t written = write(write_fd, line.data(), line.size());
    if (written == static_cast<ssize_t>(line.size())) return 0;
    if (written < 0 && errno == EINTR) continue;
    failed_call = "write";
    return written < 0 ? -errno : -EIO;
  }
}

// send_cgroup for a watchdog just started (see send_line_to_new).
int send_cgroup_to_new(const std::string& path) {
  for (int waited = 0;; waited += 10) {
    int err = send_cgroup(path);
    if (err != -EAGAIN || waited >= kReplayWaitMs) return err;
    pollfd entry{write_fd, POLLOUT, 0};
    poll(&entry, 1, 10);
  }
}

bool monitor_start(int pidfd, uint32_t watched);

// The bytes of the replay of every live registration ("+<pgid>\n" lines, then
// "=<path>\n" lines).
size_t replay_bytes() {
  size_t bytes = 0;
  for (pid_t group : groups) {
    bytes += 2;  // the op and the newline
    for (unsigned long value = static_cast<unsigned long>(group);; value /= 10) {
      ++bytes;
      if (value < 10) break;
    }
  }
  for (const std::string& path : cgroups) bytes += path.size() + 2;
  return bytes;
}

// Writes the replay into the new pipe before its reader exists, as far as it
// fits (the pipe is grown to the replay's size when the kernel allows it):
// so a watchdog that runs knows every live registration from its start, and
// a host SIGKILLed the moment after the spawn still takes its steps along.
// Sets *groups_sent and *cgroups_sent to what went in; 0 or -errno.
int prefill_locked(size_t* groups_sent, size_t* cgroups_sent) {
  *groups_sent = 0;
  *cgroups_sent = 0;
  const size_t bytes = replay_bytes();
  const int capacity = fcntl(write_fd, F_GETPIPE_SZ);
  if (capacity >= 0 && bytes > static_cast<size_t>(capacity) && bytes <= INT_MAX) {
    fcntl(write_fd, F_SETPIPE_SZ, static_cast<int>(bytes));  // refused: the rest waits
  }
  for (pid_t group : groups) {
    int err = send_line('+', group);
    if (err == -EAGAIN) return 0;
    if (err < 0) return err;
    ++*groups_sent;
  }
  for (const std::string& path : cgroups) {
    int err = send_cgroup(path);
    if (err == -EAGAIN) return 0;
    if (err < 0) return err;
    ++*cgroups_sent;
  }
  return 0;
}

// Starts a watchdog that knows every live registration. Caller holds the mutex.
int launch_locked() {
  int fds[2];
  int err = make_pipe(fds);
  if (err < 0) {
    failed_call = "pipe2";
    return err;
  }
  // Only the host's end: the watchdog's stdin stays a blocking read.
  if (fcntl(fds[1], F_SETFL, O_NONBLOCK) < 0) {
    err = -errno;
    close_fd(fds[0]);
    close_fd(fds[1]);
    failed_call = "fcntl";
    return err;
  }
  std::vector<char*> argv;
  try {
    argv.reserve(program_argv.size() + 1);
  } catch (const std::bad_alloc&) {
    close_fd(fds[0]);
    close_fd(fds[1]);
    failed_call = nullptr;
    return -ENOMEM;
  }
  for (std::string& arg : program_argv) argv.push_back(arg.data());
  argv.push_back(nullptr);
  write_fd = fds[1];
  size_t groups_sent = 0;
  size_t cgroups_sent = 0;
  err = prefill_locked(&groups_sent, &cgroups_sent);
  if (err < 0) {
    close_fd(fds[0]);
    close_fd(fds[1]);
    write_fd = -1;
    return err;
  }
  char* envp[] = {nullptr};
  int stdio[3] = {fds[0], -1, -1};
  SpawnRequest request;
  request.file = program_file.c_str();
  request.argv = argv.data();
  request.envp = envp;
  request.cwd = "/";  // never pins the host's cwd (a busy mount)
  request.stdio = stdio;
  request.stdio_count = 3;
  request.new_session = true;
  pid_t pid = 0;
  err = spawn_process(request, &pid);
  close_fd(fds[0]);
  if (err < 0) {
    close_fd(fds[1]);
    write_fd = -1;
    failed_call = "posix_spawn";
    return err;
  }
  hold_if_asked();
  // If the watchdog ever dies before the host, the reaper collects it. Without
  // a pidfd (pidfd_open failed) it would stay a zombie until the host exits.
  int pidfd = open_pidfd(pid);
  int watch = -1;
  int own = -1;
  if (pidfd >= 0) {
    watch = fcntl(pidfd, F_DUPFD_CLOEXEC, 0);
    own = fcntl(pidfd, F_DUPFD_CLOEXEC, 0);
    if (hand_to_orphan_reaper(pid, pidfd) < 0) {
      close_fd(pidfd);
      if (watch >= 0) close_fd(watch);
      watch = -1;  // no reaper (so no pinned library): no monitor thread either
    }
  }
  watchdog_pid = pid;
  watchdog_pidfd = own;
  ++generation;
  // A watchdog the step killed is replaced at once, not at the next spawn:
  // a host SIGKILLed meanwhile would leave its steps running (docs/spawn.md).
  // Without the thread a dead watchdog is still replaced at the next registration.
  if (watch >= 0 && !monitor_start(watch, generation)) close_fd(watch);
  // What did not fit in the pipe before the spawn: the watchdog reads now.
  for (size_t i = groups_sent; i < groups.size(); ++i) {
    err = send_line_to_new('+', groups[i]);
    if (err < 0) return err;
  }
  for (size_t i = cgroups_sent; i < cgroups.size(); ++i) {
    err = send_cgroup_to_new(cgroups[i]);
    if (err < 0) return err;
  }
  return 0;
}

void drop_locked() {
  if (write_fd >= 0) close_fd(write_fd);
  if (watchdog_pidfd >= 0) close_fd(watchdog_pidfd);
  write_fd = -1;
  watchdog_pidfd = -1;
  watchdog_pid = 0;
}

// Waits for one watchdog's pidfd to turn readable (it exited; the orphan
// reaper reaps it), then replaces it while groups are registered and no newer
// watchdog has been started. One short-lived thread per launch (launches are
// rare: one per host unless a watchdog dies), every signal blocked; the
// library is pinned already (the orphan reaper's thread exists before this
// one). No condition variable: std::condition_variable::wait would raise the
// libstdc++ floor (GLIBCXX_3.4.30, docs/platforms.md).
void* monitor_main(void* arg) {
  const auto packed = reinterpret_cast<uintptr_t>(arg);
  const int fd = static_cast<int>(packed & 0xffffffffu);
  const auto watched = static_cast<uint32_t>(static_cast<uint64_t>(packed) >> 32);
  pollfd entry{fd, POLLIN, 0};
  while (poll(&entry, 1, -1) < 0 && errno == EINTR) {
  }
  close_fd(fd);
  std::lock_guard<std::mutex> lock(watchdog_mutex);
  if (watched == generation && write_fd >= 0) {
    drop_locked();
    if ((!groups.empty() || !cgroups.empty()) && launch_locked() < 0) drop_locked();
  }
  return nullptr;
}

// Starts the monitor of the watchdog whose pidfd is `pidfd` (the thread owns
// it on success). Caller holds the mutex.
bool monitor_start(int pidfd, uint32_t watched) {
  static_assert(sizeof(uintptr_t) >= 8, "the fd and the generation share one pointer");
  const uint64_t packed = (static_cast<uint64_t>(watched) << 32) | static_cast<uint32_t>(pidfd);
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_t thread;
  const int err = pthread_create(&thread, &attr, monitor_main,
                                 reinterpret_cast<void*>(static_cast<uintptr_t>(packed)));
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return err == 0;
}

// Sends one line; a watchdog that died (EPIPE: Node ignores SIGPIPE) is
// replaced, and the replacement learns every registered group, so the line
// is not sent again. So is one that has left a whole pipe of lines unread
// (EAGAIN: a step of the same uid can SIGSTOP it): the JavaScript thread
// never waits for it. It is SIGKILLed first, through its pidfd (no pid
// reuse), so it never wakes to read EOF and kill the groups it knew; without
// a pidfd it cannot be ended safely and the registration fails (EAGAIN).
int relaunch_after_locked(int err);

int send_or_relaunch_locked(char op, pid_t pgid) {
  return relaunch_after_locked(write_fd >= 0 ? send_line(op, pgid) : -EPIPE);
}

// The outcome of one line sent: 0, or the watchdog replaced as above (the
// replacement learns every registration), or the failure.
int relaunch_after_locked(int err) {
  if (err == -EAGAIN) {
    if (watchdog_pidfd < 0) return err;
    int killed = signal_pidfd(watchdog_pidfd, SIGKILL);
    if (killed < 0 && killed != -ESRCH) {
      failed_call = "pidfd_send_signal";
      return killed;
    }
  } else if (err != -EPIPE) {
    return err;
  }
  drop_locked();
  err = launch_locked();
  if (err < 0) drop_locked();
  return err;
}

// The failure of a public call, named with the call that failed.
int failed(int err, StepFailure* failure) {
  if (failure != nullptr) *failure = {err, failed_call, "cleanup"};
  return err;
}

}  // namespace

int watchdog_start(const std::string& file, const std::vector<std::string>& argv,
                   StepFailure* failure) {
  std::lock_guard<std::mutex> lock(watchdog_mutex);
  failed_call = nullptr;
  if (!configured) {
    if (file.empty() || argv.empty()) return failed(-EINVAL, failure);
    program_file = file;
    program_argv = argv;
  }
  if (write_fd < 0) {
    int err = launch_locked();
    if (err < 0) {
      drop_locked();
      return failed(err, failure);
    }
  }
  configured = true;
  return watchdog_pid;
}

bool watchdog_configured() {
  std::lock_guard<std::mutex> lock(watchdog_mutex);
  return configured;
}

int watchdog_guard(pid_t pgid, StepFailure* failure) {
  std::lock_guard<std::mutex> lock(watchdog_mutex);
  failed_call = nullptr;
  if (!configured) return failed(-ENOTCONN, failure);
  try {
    groups.push_back(pgid);
  } catch (const std::bad_alloc&) {
    return failed(-ENOMEM, failure);
  }
  int err = send_or_relaunch_locked('+', pgid);
  if (err < 0) {
    groups.pop_back();
    return failed(err, failure);
  }
  return 0;
}

int watchdog_guard_cgroup(const std::string& path, StepFailure* failure) {
  std::lock_guard<std::mutex> lock(watchdog_mutex);
  failed_call = nullptr;
  if (!configured) return failed(-ENOTCONN, failure);
  if (path.size() + 2 > PIPE_BUF || path.find('\n') != std::string::npos) {
    return failed(-EINVAL, failure);
  }
  try {
    cgroups.push_back(path);
  } catch (const std::bad_alloc&) {
    return failed(-ENOMEM, failure);
  }
  int err = relaunch_after_locked(write_fd >= 0 ? send_cgroup(path) : -EPIPE);
  if (err < 0) {
    cgroups.pop_back();
    return failed(err, failure);
  }
  return 0;
}

void watchdog_release(pid_t pgid) {
  std::lock_guard<std::mutex> lock(watchdog_mutex);
  auto it = std::find(groups.begin(), groups.end(), pgid);
  if (it == groups.end()) return;
  groups.erase(it);
  // A failure leaves no watchdog; the next registration starts one.
  send_or_relaunch_locked('-', pgid);
}

bool watchdog_fire(pid_t pgid) {
  std::lock_guard<std::mutex> lock(watchdog_mutex);
  auto it = std::find(groups.begin(), groups.end(), pgid);
  if (it == groups.end()) return false;
  signal_group(pgid, SIGKILL);  // the leader is unreaped: the id is still this group's
  groups.erase(it);
  send_or_relaunch_locked('-', pgid);
  return true;
}

void watchdog_hold_next_launches(int count) { holds.store(count, std::memory_order_relaxed); }

bool child_has_exited(pid_t pid) {
  siginfo_t info{};
  int r;
  do {
    r = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (r < 0 && errno == EINTR);
  return r < 0 || info.si_pid == pid;
}

}  // namespace exactspawn
