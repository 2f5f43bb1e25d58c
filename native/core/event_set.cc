// event_set.cc — see event_set.h.
#include "event_set.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <new>

namespace exactspawn {

namespace {

constexpr uint64_t kWakeToken = 0;
constexpr uint64_t kTimerToken = 1;
static_assert(EventSet::kFirstToken == 2, "the eventfd and the timerfd use tokens 0 and 1");
// Ready tokens that could not be queued (no memory), or a notify that could
// not reach the owner, are tried again this soon.
constexpr int kRetryQueueMs = EventSet::kRetryNotifyMs;

int64_t now_ms() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int watch_fd(int epoll_fd, int op, int fd, uint32_t events, uint64_t token) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = token;
  return epoll_ctl(epoll_fd, op, fd, &event) < 0 ? -errno : 0;
}

// Watches a just-created fd (-1 when its creation failed, errno set) under
// `token`; then *slot owns it. On failure *failed names the call that failed.
int adopt_fd(int epoll_fd, int fd, const char* made_by, uint64_t token, int* slot,
             const char** failed) {
  if (fd < 0) {
    *failed = made_by;
    return -errno;
  }
  int err = watch_fd(epoll_fd, EPOLL_CTL_ADD, fd, EPOLLIN, token);
  if (err < 0) {
    *failed = "epoll_ctl";
    close(fd);
    return err;
  }
  *slot = fd;
  return 0;
}

}  // namespace

EventSet::~EventSet() {
  stop_thread();
  for (int fd : {epoll_fd_, timer_fd_, wake_fd_}) {
    if (fd >= 0) close(fd);
  }
}

int EventSet::open() {
  if (opened()) return 0;
  if (epoll_fd_ < 0) {
    failed_call_ = "epoll_create1";
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) return -errno;
  }
  if (timer_fd_ < 0) {
    int err = adopt_fd(epoll_fd_, timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK),
                       "timerfd_create", kTimerToken, &timer_fd_, &failed_call_);
    if (err < 0) return err;
  }
  if (wake_fd_ < 0) {
    int err = adopt_fd(epoll_fd_, eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), "eventfd", kWakeToken,
                       &wake_fd_, &failed_call_);
    if (err < 0) return err;
  }
  failed_call_ = "";
  return 0;
}

int EventSet::add(int fd, uint64_t token) {
  return watch_fd(epoll_fd_, EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLONESHOT, token);
}

int EventSet::rearm(int fd, uint64_t token) {
  return watch_fd(epoll_fd_, EPOLL_CTL_MOD, fd, EPOLLIN | EPOLLONESHOT, token);
}

int EventSet::add_priority(int fd, uint64_t token) {
  return watch_fd(epoll_fd_, EPOLL_CTL_ADD, fd, EPOLLPRI | EPOLLONESHOT, token);
}

int EventSet::rearm_priority(int fd, uint64_t token) {
  return watch_fd(epoll_fd_, EPOLL_CTL_MOD, fd, EPOLLPRI | EPOLLONESHOT, token);
}

void EventSet::remove(int fd) { epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr); }

int EventSet::retry_after(uint64_t token, int delay_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t now = now_ms();
  try {
    timers_.push_back(Timer{now + delay_ms, token});
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  }
  arm_timer_locked(now);
  return 0;
}

// Under mutex_: the timerfd fires at the earliest timer (or soon, while
// tokens wait in carry_ for memory), and is disarmed when nothing is due.
void EventSet::arm_timer_locked(int64_t now) {
  int64_t due = carried_ > 0 || renotify_ ? now + kRetryQueueMs : INT64_MAX;
  for (const Timer& timer : timers_) due = timer.due_ms < due ? timer.due_ms : due;
  if (due == INT64_MAX) due = 0;
  if (due == armed_ms_) return;
  struct itimerspec spec {};  // all zero: disarmed
  if (due != 0) {
    // An absolute time already past fires at once.
    spec.it_value.tv_sec = due / 1000;
    spec.it_value.tv_nsec = static_cast<long>(due % 1000) * 1000000L;
  }
  if (timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr) == 0) armed_ms_ = due;
}

void EventSet::drain(int fd) {
  uint64_t count;
  while (read(fd, &count, sizeof count) < 0 && errno == EINTR) {
  }
}

bool EventSet::collect(int timeout_ms) {
  epoll_event events[kEventsPerWait];
  int room = kEventsPerWait - carried_;
  int n = 0;
  if (room > 0) {
    n = epoll_wait(epoll_fd_, events, room, timeout_ms);
    if (n < 0) n = 0;  // EINTR; anything else shows again on the next call
  } else if (timeout_ms != 0) {
    // No room to take events in (no memory to queue the carried ones): wait a little.
    struct timespec pause {
      0, kRetryQueueMs * 1000000L
    };
    nanosleep(&pause, nullptr);
  }
  bool timer_fired = false;
  for (int i = 0; i < n; ++i) {
    uint64_t token = events[i].data.u64;
    if (token == kWakeToken) {
      drain(wake_fd_);
    } else if (token == kTimerToken) {
      drain(timer_fd_);
      timer_fired = true;
    } else {
      carry_[carried_++] = token;
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t now = now_ms();
  if (timer_fired) {
    armed_ms_ = 0;      // fired: arm_timer_locked sets the next one
    renotify_ = false;  // a failed notify is made again below (ready_ is not empty)
  }
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
    for (; queued < carried_; ++queued) ready_.push_back(carry_[queued]);
  } catch (const std::bad_alloc&) {
    // What is left stays in carry_ (or in timers_) for the next round.
  }
  for (int i = queued; i < carried_; ++i) carry_[i - queued] = carry_[i];
  carried_ -= queued;
  arm_timer_locked(now);
  if (ready_.empty() || notified_) return false;
  notified_ = true;
  return true;
}

void EventSet::take(std::vector<uint64_t>* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  notified_ = false;
  if (out->empty()) {
    out->swap(ready_);
  } else {
    out->insert(out->end(), ready_.begin(), ready_.end());
    ready_.clear();
  }
}

int EventSet::start_thread(Notify notify, void* arg) {
  if (thread_started_) return 0;
  int err = open();
  if (err < 0) return err;
  notify_ = notify;
  arg_ = arg;
  // The thread must never take a process-directed signal meant for the host.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  err = pthread_create(&thread_, nullptr, &EventSet::main, this);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (err != 0) {
    failed_call_ = "pthread_create";
    return -err;
  }
  thread_started_ = true;
  return 0;
}

void EventSet::stop_thread() {
  if (!thread_started_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake();
  pthread_join(thread_, nullptr);
  thread_started_ = false;
}

// Under no lock: the owner was not told; the timer tells it again soon.
void EventSet::notify_failed() {
  std::lock_guard<std::mutex> lock(mutex_);
  notified_ = false;
  renotify_ = true;
  arm_timer_locked(now_ms());
}

void EventSet::wake() {
  uint64_t one = 1;
  // EAGAIN: the counter is already non-zero, the thread will wake anyway.
  while (write(wake_fd_, &one, sizeof one) < 0 && errno == EINTR) {
  }
}

void* EventSet::main(void* self) {
  static_cast<EventSet*>(self)->run();
  return nullptr;
}

void EventSet::run() {
  for (;;) {
    bool notify = collect(-1);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
    }
    if (notify && !notify_(arg_)) notify_failed();
  }
}

}  // namespace exactspawn
