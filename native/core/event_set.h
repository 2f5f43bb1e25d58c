// event_set.h — a set of fds waited for together, whose readiness is handed
// to their owner as tokens, plus timers that hand a token back after a delay
// (the reap back-off, core/reap.h). The exit watch keeps one per Node-API
// environment (see child_watch.h); the orphan reaper keeps one for the
// process.
//
// Everything lives in one epoll(7) instance: the fds, registered with
// EPOLLIN | EPOLLONESHOT (each registration reports at most once until the
// owner re-arms it, so a pidfd, readable for ever once the child exits, or a
// pipe the owner has not drained yet never spins anything), a timerfd(2)
// armed for the earliest timer, and an eventfd(2) that wakes a waiting thread
// to stop. The epoll fd itself turns readable whenever something is ready, so
// whoever waits for the set can do it in one of two ways:
//   - its own thread (start_thread): blocks in collect(-1) with every signal
//     blocked and calls `notify` when the queue turns non-empty; the owner
//     then collects the batch with take() on its own thread. A notify that
//     could not reach the owner (it returns false) is made again a little
//     later, so a failed hand-over never leaves the owner deaf;
//   - the host's event loop: it polls fd() and, when that is readable, calls
//     collect(0) and take() on the loop's thread (watch_events.cc).
//
// Tokens are the owner's ids (never 0 or 1, which the eventfd and the timerfd
// use). A token may arrive after its fd was removed (the event was collected
// just before): owners look tokens up and ignore the ones they no longer know.
//
// Plain C++; every call returns 0 or a negative errno. Threads: add(),
// rearm(), remove(), retry_after() and take() may be called from any thread
// at any time. collect() has one caller at a time (the set's own thread
// once start_thread() has run, else the owner's loop), and open(),
// start_thread() and stop_thread() are the owner's, called from one thread.
#pragma once

#include <pthread.h>

#include <cstdint>
#include <mutex>
#include <vector>

namespace exactspawn {

class EventSet {
 public:
  // Returns false when the owner could not be told (then it is told again
  // kRetryNotifyMs later, while tokens are still queued).
  using Notify = bool (*)(void* arg);
  static constexpr int kRetryNotifyMs = 10;
  // The first token owners may use.
  static constexpr uint64_t kFirstToken = 2;

  EventSet() = default;
  ~EventSet();
  EventSet(const EventSet&) = delete;
  EventSet& operator=(const EventSet&) = delete;

  // Creates the epoll fd, the timerfd and the eventfd; on failure
  // failed_call() names the call that failed. Idempotent.
  int open();
  bool opened() const { return epoll_fd_ >= 0 && timer_fd_ >= 0 && wake_fd_ >= 0; }
  const char* failed_call() const { return failed_call_; }
  // Readable whenever collect() would find something.
  int fd() const { return epoll_fd_; }

  // Reports `token` once when fd is readable (or hung up).
  int add(int fd, uint64_t token);
  // Reports `token` once more when fd is (still or again) readable.
  int rearm(int fd, uint64_t token);
  // The same for a file whose news is EPOLLPRI, not readability: a cgroup's
  // cgroup.events (core/cgroup.h), which is always readable and raises
  // EPOLLPRI when a value in it changes.
  int add_priority(int fd, uint64_t token);
  int rearm_priority(int fd, uint64_t token);
  // Stops reporting fd. Call before closing it (a closed fd leaves epoll
  // only once every duplicate of it is closed).
  void remove(int fd);
  // Reports `token` after `delay_ms` milliseconds (0: at once); -ENOMEM
  // when the timer could not be recorded.
  int retry_after(uint64_t token, int delay_ms);

  // Waits up to timeout_ms (-1: for ever, 0: not at all) and queues what is
  // ready. True when the queue turned non-empty since the last take() and
  // nobody was told yet (the caller is now the one who tells).
  bool collect(int timeout_ms);
  // Moves every ready token into *out (appended, in arrival order).
  void take(std::vector<uint64_t>* out);

  // Starts a thread that collects for ever and calls notify(arg) on it when
  // the queue turns non-empty; opens the set first if needed.
  int start_thread(Notify notify, void* arg);
  bool thread_started() const { return thread_started_; }
  // Stops and joins the thread; no notify runs after it returns.
  void stop_thread();

 private:
  struct Timer {
    int64_t due_ms;
    uint64_t token;
  };
  static void* main(void* self);
  void run();
  void wake();
  void arm_timer_locked(int64_t now);
  void notify_failed();
  void drain(int fd);

  static constexpr int kEventsPerWait = 64;

  int epoll_fd_ = -1;
  int timer_fd_ = -1;
  int wake_fd_ = -1;
  const char* failed_call_ = "";
  bool thread_started_ = false;
  pthread_t thread_{};
  Notify notify_ = nullptr;
  void* arg_ = nullptr;

  std::mutex mutex_;  // guards everything below
  bool stopping_ = false;
  bool notified_ = false;  // a notify is outstanding: take() has not run since
  bool renotify_ = false;  // a notify failed: the timer fires to make it again
  int64_t armed_ms_ = 0;   // when the timerfd fires; 0: disarmed
  std::vector<uint64_t> ready_;
  std::vector<Timer> timers_;
  // Ready tokens that could not be queued (no memory), queued first next time.
  uint64_t carry_[kEventsPerWait];
  int carried_ = 0;
};

}  // namespace exactspawn
