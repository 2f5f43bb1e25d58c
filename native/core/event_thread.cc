// event_thread.cc — see event_thread.h.
#include "event_thread.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <new>

namespace exactspawn {

namespace {

constexpr uint64_t kWakeToken = 0;
constexpr int kEventsPerWait = 64;
// Ready tokens that could not be queued (no memory) are tried again this soon.
constexpr int kRetryQueueMs = 10;

int64_t now_ms() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

EventThread::~EventThread() {
  stop();
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

int EventThread::start(Notify notify, void* arg) {
  if (started_) return 0;
  notify_ = notify;
  arg_ = arg;
  if (epoll_fd_ < 0) epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  failed_call_ = "epoll_create1";
  if (epoll_fd_ < 0) return -errno;
  if (wake_fd_ < 0) {
    wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    failed_call_ = "eventfd";
    if (wake_fd_ < 0) return -errno;
    failed_call_ = "epoll_ctl";
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = kWakeToken;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event) < 0) {
      int err = -errno;
      close(wake_fd_);
      wake_fd_ = -1;
      return err;
    }
  }
  // The thread must never take a process-directed signal meant for the host.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  int err = pthread_create(&thread_, nullptr, &EventThread::main, this);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  failed_call_ = "pthread_create";
  if (err != 0) return -err;
  failed_call_ = "";
  started_ = true;
  return 0;
}

int EventThread::add(int fd, uint64_t token) {
  epoll_event event{};
  event.events = EPOLLIN | EPOLLONESHOT;
  event.data.u64 = token;
  return epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) < 0 ? -errno : 0;
}

int EventThread::rearm(int fd, uint64_t token) {
  epoll_event event{};
  event.events = EPOLLIN | EPOLLONESHOT;
  event.data.u64 = token;
  return epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event) < 0 ? -errno : 0;
}

void EventThread::remove(int fd) { epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr); }

int EventThread::retry_after(uint64_t token, int delay_ms) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      timers_.push_back(Timer{now_ms() + delay_ms, token});
    } catch (const std::bad_alloc&) {
      return -ENOMEM;
    }
  }
  wake();
  return 0;
}

void EventThread::take(std::vector<uint64_t>* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  notified_ = false;
  if (out->empty()) {
    out->swap(ready_);
  } else {
    out->insert(out->end(), ready_.begin(), ready_.end());
    ready_.clear();
  }
}

void EventThread::stop() {
  if (!started_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake();
  pthread_join(thread_, nullptr);
  started_ = false;
}

void EventThread::wake() {
  uint64_t one = 1;
  // EAGAIN: the counter is already non-zero, the thread will wake anyway.
  while (write(wake_fd_, &one, sizeof one) < 0 && errno == EINTR) {
  }
}

void* EventThread::main(void* self) {
  static_cast<EventThread*>(self)->run();
  return nullptr;
}

// Under mutex_: the wait until the earliest timer, -1 without one.
int EventThread::next_timeout_ms(int64_t now) {
  int64_t earliest = INT64_MAX;
  for (const Timer& timer : timers_) earliest = timer.due_ms < earliest ? timer.due_ms : earliest;
  if (earliest == INT64_MAX) return -1;
  int64_t wait = earliest - now;
  if (wait < 0) return 0;
  return wait > INT_MAX ? INT_MAX : static_cast<int>(wait);
}

void EventThread::run() {
  epoll_event events[kEventsPerWait];
  uint64_t carry[kEventsPerWait];  // ready tokens not queued yet (no memory)
  int carried = 0;
  int timeout;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    timeout = next_timeout_ms(now_ms());
  }
  for (;;) {
    int room = kEventsPerWait - carried;
    int n = 0;
    if (room > 0) {
      n = epoll_wait(epoll_fd_, events, room, carried > 0 ? kRetryQueueMs : timeout);
    } else {
      struct timespec pause {
        0, kRetryQueueMs * 1000000L
      };
      nanosleep(&pause, nullptr);
    }
    if (n < 0) {
      if (errno != EINTR) return;
      n = 0;
    }
    for (int i = 0; i < n; ++i) {
      if (events[i].data.u64 == kWakeToken) {
        uint64_t count;
        while (read(wake_fd_, &count, sizeof count) < 0 && errno == EINTR) {
        }
      } else {
        carry[carried++] = events[i].data.u64;
      }
    }
    bool notify = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      int64_t now = now_ms();
      int queued = 0;
      try {
        for (size_t i = 0; i < timers_.size();) {
          if (timers_[i].due_ms <= now) {
            ready_.push_back(timers_[i].token);
            timers_[i] = timers_.back();
            timers_.pop_back();
          } else {
            ++i;
          }
        }
        for (; queued < carried; ++queued) ready_.push_back(carry[queued]);
      } catch (const std::bad_alloc&) {
        // What is left stays in carry (or in timers_) for the next round.
      }
      for (int i = queued; i < carried; ++i) carry[i - queued] = carry[i];
      carried -= queued;
      if (!ready_.empty() && !notified_) notify = notified_ = true;
      timeout = next_timeout_ms(now);
    }
    if (notify) notify_(arg_);
  }
}

}  // namespace exactspawn
