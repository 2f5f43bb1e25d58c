// event_thread.h — one thread that waits for fds to turn readable and hands
// their tokens to whoever owns them; the exit watch runs one per Node-API
// environment (see child_watch.h), so nothing depends on the host's libuv.
//
// The thread blocks in epoll_wait(2) (all signals blocked in it) on fds
// registered with EPOLLIN | EPOLLONESHOT: each registration reports at most
// once until the owner re-arms it, so a pidfd (readable for ever once the
// child exits) or a pipe the owner has not drained yet never spins the
// thread. An eventfd(2) wakes it for a new timer or to stop. Timers hand a
// token back after a delay (the reap back-off, core/reap.h). Ready tokens
// are queued in order; `notify` runs on the thread when the queue turns
// non-empty, and the owner collects the whole batch with take().
//
// Tokens are the owner's ids (never 0, which the eventfd uses). A token may
// arrive after its fd was removed (the event was collected just before):
// owners look tokens up and ignore the ones they no longer know.
//
// Plain C++; every call returns 0 or a negative errno. All methods but
// stop() may be called from any thread.
#pragma once

#include <pthread.h>

#include <cstdint>
#include <mutex>
#include <vector>

namespace exactspawn {

class EventThread {
 public:
  using Notify = void (*)(void* arg);

  EventThread() = default;
  ~EventThread();
  EventThread(const EventThread&) = delete;
  EventThread& operator=(const EventThread&) = delete;

  // Creates the epoll fd and the eventfd and starts the thread; on failure
  // failed_call() names the call that failed.
  int start(Notify notify, void* arg);
  bool started() const { return started_; }
  const char* failed_call() const { return failed_call_; }

  // Reports `token` once when fd is readable (or hung up).
  int add(int fd, uint64_t token);
  // Reports `token` once more when fd is (still or again) readable.
  int rearm(int fd, uint64_t token);
  // Stops reporting fd. Call before closing it (a closed fd leaves epoll
  // only once every duplicate of it is closed).
  void remove(int fd);
  // Reports `token` after `delay_ms` milliseconds (0: at once); -ENOMEM
  // when the timer could not be recorded.
  int retry_after(uint64_t token, int delay_ms);

  // Moves every ready token into *out (appended, in arrival order).
  void take(std::vector<uint64_t>* out);

  // Stops and joins the thread; no notify runs after it returns.
  void stop();

 private:
  struct Timer {
    int64_t due_ms;
    uint64_t token;
  };
  static void* main(void* self);
  void run();
  void wake();
  int next_timeout_ms(int64_t now);

  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  bool started_ = false;
  const char* failed_call_ = "";
  pthread_t thread_{};
  Notify notify_ = nullptr;
  void* arg_ = nullptr;

  std::mutex mutex_;  // guards everything below
  bool stopping_ = false;
  bool notified_ = false;  // a notify is outstanding: take() has not run since
  std::vector<uint64_t> ready_;
  std::vector<Timer> timers_;
};

}  // namespace exactspawn
