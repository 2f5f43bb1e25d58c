// run_sync.cc — see run_sync.h.
#include "run_sync.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <new>

#include "cgroup.h"
#include "child_exit.h"
#include "pid_namespace.h"
#include "pipe.h"
#include "reap.h"

namespace exactspawn {

namespace {

constexpr int64_t kNever = INT64_MAX;

int64_t now_ms() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Saturating a + b for deadlines (a timeout of hours must not wrap).
int64_t after(int64_t base, int64_t delta) {
  return delta >= kNever - base ? kNever : base + delta;
}

void close_owned(int* fd) {
  if (*fd >= 0) close_fd(*fd);
  *fd = -1;
}

int set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return -errno;
  return 0;
}

// The state of one run; every fd it holds is closed by the destructor.
class SyncLoop {
 public:
  SyncLoop(const SyncRun& run, SyncOutcome* outcome, StepFailure* failure)
      : run_(run), outcome_(outcome), failure_(failure) {
    pidfd_ = run.pidfd;  // owned from here on (closed by the destructor)
    leader_pidfd_ = run.leader_pidfd;
    stdin_fd_ = run.stdin_fd;
    output_fds_[0] = run.output_fds[0];
    output_fds_[1] = run.output_fds[1];
  }
  ~SyncLoop() {
    close_owned(&stdin_fd_);
    close_owned(&output_fds_[0]);
    close_owned(&output_fds_[1]);
    close_owned(&pidfd_);
    close_owned(&leader_pidfd_);
  }
  SyncLoop(const SyncLoop&) = delete;
  SyncLoop& operator=(const SyncLoop&) = delete;

  int run() {
    int err = prepare();
    if (err < 0) return err;
    timeout_at_ = run_.deadline.timeout_ms < 0 ? kNever : after(now_ms(), run_.deadline.timeout_ms);
    while (!leader_done_ || output_fds_[0] >= 0 || output_fds_[1] >= 0) {
      struct pollfd fds[5];
      int count = 0;
      int pidfd_index = -1;
      int leader_index = -1;
      int stdin_index = -1;
      int output_index[2] = {-1, -1};
      // A pidfd that reported while its child was not waitable yet (traced)
      // stays out of the poll until the back-off has passed (core/reap.h).
      bool reap_due = !leader_done_ && reap_retry_at_ != kNever && now_ms() >= reap_retry_at_;
      if (!leader_done_ && reap_retry_at_ == kNever) {
        pidfd_index = count;
        fds[count++] = {pidfd_, POLLIN, 0};
      }
      if (!leader_done_ && leader_pidfd_ >= 0) {
        leader_index = count;
        fds[count++] = {leader_pidfd_, POLLIN, 0};
      }
      if (stdin_fd_ >= 0) {
        stdin_index = count;
        fds[count++] = {stdin_fd_, POLLOUT, 0};
      }
      for (int i = 0; i < 2; ++i) {
        if (output_fds_[i] < 0) continue;
        output_index[i] = count;
        fds[count++] = {output_fds_[i], POLLIN, 0};
      }
      int64_t wake = leader_done_ ? next_deadline()
                                  : std::min({next_deadline(), reap_retry_at_, init_kill_at_});
      if (reap_due) wake = 0;
      int64_t now = now_ms();
      int wait =
          wake == kNever
              ? -1
              : static_cast<int>(std::min<int64_t>(std::max<int64_t>(wake - now, 0), INT_MAX));
      int ready = poll(fds, static_cast<nfds_t>(count), wait);
      if (ready < 0) {
        if (errno == EINTR) continue;
        return abandon({-errno, "poll", "wait"});
      }
      for (int i = 0; i < 2; ++i) {
        if (output_index[i] >= 0 && fds[output_index[i]].revents != 0) {
          err = drain(i);
          if (err < 0) return abandon({err, nullptr, "capture"});
        }
      }
      if (stdin_index >= 0 && fds[stdin_index].revents != 0) feed(fds[stdin_index].revents);
      if (leader_index >= 0 && (fds[leader_index].revents & POLLIN) != 0) leader_ended();
      if (reap_due || (pidfd_index >= 0 && (fds[pidfd_index].revents & POLLIN) != 0)) {
        err = reap();
        if (err < 0) return abandon({err, "wait4", "wait"});
      }
      now = now_ms();
      if (now >= timeout_at_) {
        timeout_at_ = kNever;
        begin_ending(SyncEndingCause::kTimeout, now);
      }
      if (!leader_done_ && now >= init_kill_at_) {
        signal_pidfd(pidfd_, SIGKILL);
        init_kill_at_ = kNever;
      }
      if (!leader_done_ && now >= final_signal_at_) {
        signal_child(run_.deadline.final_signal);
        // A contained tree dies whole at the escalation (as TreeTarget does
        // for spawn, core/kill_target.h).
        if (run_.cgroup_path != nullptr) kill_cgroup(run_.cgroup_path);
        final_signal_at_ = kNever;
      }
      if (leader_done_ && now >= stop_reading_at_) break;
    }
    return 0;
  }

 private:
  int prepare() {
    if (pidfd_ < 0) {
      int fd = open_pidfd(run_.pid);
      if (fd < 0) return abandon({fd, "pidfd_open", "wait"});
      pidfd_ = fd;
    }
    if (stdin_fd_ >= 0 && run_.input_length == 0) close_owned(&stdin_fd_);
    if (stdin_fd_ >= 0) {
      int err = set_nonblocking(stdin_fd_);
      if (err < 0) return abandon({err, "fcntl", "input"});
    }
    for (int fd_out : output_fds_) {
      if (fd_out < 0) continue;
      int err = set_nonblocking(fd_out);
      if (err < 0) return abandon({err, "fcntl", "capture"});
    }
    return 0;
  }

  // Something failed in the parent: the child must neither run on unseen nor
  // stay a zombie. Returns the failure's errno.
  int abandon(const StepFailure& failure) {
    *failure_ = failure;
    if (!leader_done_) {
      kill(run_.pid, SIGKILL);
      reap_child_blocking(run_.pid);
      leader_done_ = true;
    }
    return failure.err;
  }

  int64_t next_deadline() const {
    int64_t wake = timeout_at_;
    if (!leader_done_) wake = std::min(wake, final_signal_at_);
    if (leader_done_) wake = std::min(wake, stop_reading_at_);
    return wake;
  }

  void signal_child(int sig) {
    // Only called while the leader is unreaped, so the group id is still its own.
    if (sig == 0) return;
    if (run_.deadline.to_group) {
      signal_group(run_.pid, sig);
    } else {
      signal_pidfd(pidfd_, sig);
    }
  }

  // An ending (deadline-plan.ts, phases 1-3): recorded always, acted on once.
  void begin_ending(SyncEndingCause cause, int64_t now) {
    if (outcome_->ending_count < 2) {
      outcome_->endings[outcome_->ending_count++] = {cause, !leader_done_};
    }
    if (ending_begun_) return;
    ending_begun_ = true;
    stop_reading_at_ = after(now, run_.deadline.grace_ms);
    if (leader_done_) return;
    signal_child(run_.deadline.end_signal);
    struct timespec mono {};
    clock_gettime(CLOCK_MONOTONIC, &mono);
    outcome_->killed_at_ms = static_cast<double>(mono.tv_sec) * 1000.0 + mono.tv_nsec / 1e6;
    final_signal_at_ = stop_reading_at_;
  }

  // 0, or -ENOMEM when the output cannot grow (the caller then ends the
  // run: no exception leaves run_sync with the child still running).
  int drain(int index) {
    static thread_local char buffer[kReadChunk];
    std::vector<char>& out = outcome_->output[index];
    // A bounded number of reads per wake-up keeps the other fds served.
    for (int round = 0; round < kReadsPerEvent && output_fds_[index] >= 0; ++round) {
      long n = read_fd(output_fds_[index], buffer, sizeof buffer);
      if (n == -EAGAIN) return 0;
      if (n <= 0) {  // end of file, or a read error: the stream is over
        close_owned(&output_fds_[index]);
        return 0;
      }
      size_t room = run_.limit - std::min(run_.limit, out.size());
      size_t keep = std::min(room, static_cast<size_t>(n));
      try {
        out.insert(out.end(), buffer, buffer + keep);
      } catch (const std::bad_alloc&) {
        return -ENOMEM;
      }
      if (keep < static_cast<size_t>(n)) {
        // One byte over the limit: keep the limit, close the pipe (the writer
        // gets EPIPE) and end the run.
        close_owned(&output_fds_[index]);
        if (!overflowed_) {
          overflowed_ = true;
          begin_ending(SyncEndingCause::kOverflow, now_ms());
        }
        return 0;
      }
    }
    return 0;
  }

  void feed(short revents) {
    if ((revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
      close_owned(&stdin_fd_);  // the child closed its stdin: the rest is not wanted
      return;
    }
    while (written_ < run_.input_length) {
      ssize_t n = write(stdin_fd_, run_.input + written_, run_.input_length - written_);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) return;
        break;  // EPIPE and the like: the child does not read any more
      }
      written_ += static_cast<size_t>(n);
    }
    close_owned(&stdin_fd_);
  }

  int reap() {
    // The leader is a zombie: once an ending has begun, the plan's signal
    // goes to the rest of its group while its id is still pinned; then reap.
    if (ending_begun_ && run_.deadline.group_signal_at_exit != 0) {
      signal_group(run_.pid, run_.deadline.group_signal_at_exit);
    }
    int retry_ms = 0;
    int r = reap_ready_child(run_.pid, &outcome_->exit, &backoff_, &retry_ms);
    if (r < 0) return r;
    if (r == 0) {  // not waitable yet (traced): try again after the back-off, never at once
      reap_retry_at_ = after(now_ms(), retry_ms);
      return 0;
    }
    leader_done_ = true;
    close_owned(&pidfd_);
    close_owned(&stdin_fd_);
    if (run_.cgroup_path != nullptr) kill_cgroup(run_.cgroup_path);
    return 0;
  }

  // The PID-namespace leader's pidfd reported: its status taken, the init
  // SIGKILLed (its namespace with it), whatever a tracer does to the init.
  // Where /proc cannot tell yet, the init is left to end the step.
  void leader_ended() {
    int status = 0;
    const int r = leader_exit_status(leader_pidfd_, &status);
    if (r == 0) {
      outcome_->leader_exit_known = true;
      outcome_->leader_wait_status = status;
    }
    // The init is given its grace to end the namespace itself (its reaping
    // counts the tree's CPU); run() SIGKILLs it when the grace is over.
    if (r == 0 || r == -ESRCH) init_kill_at_ = after(now_ms(), kInitGraceMs);
    close_owned(&leader_pidfd_);
  }

  const SyncRun& run_;
  SyncOutcome* outcome_;
  StepFailure* failure_;
  int stdin_fd_ = -1;
  int output_fds_[2] = {-1, -1};
  int pidfd_ = -1;
  int leader_pidfd_ = -1;
  ReapBackoff backoff_;
  int64_t reap_retry_at_ = kNever;  // set while the pidfd is left out of the poll
  int64_t init_kill_at_ = kNever;   // a PID namespace's init, once its grace is over
  size_t written_ = 0;
  bool leader_done_ = false;
  bool ending_begun_ = false;
  bool overflowed_ = false;
  int64_t timeout_at_ = kNever;
  int64_t final_signal_at_ = kNever;
  int64_t stop_reading_at_ = kNever;
};

}  // namespace

int run_sync(const SyncRun& run, SyncOutcome* outcome, StepFailure* failure) {
  SyncLoop loop(run, outcome, failure);
  return loop.run();
}

}  // namespace exactspawn
