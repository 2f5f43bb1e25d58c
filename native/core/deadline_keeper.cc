// deadline_keeper.cc — see deadline_keeper.h.
#include "deadline_keeper.h"

#include <pthread.h>
#include <signal.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <new>
#include <vector>

namespace exactspawn {

namespace {

// The process's one keeper: due times (CLOCK_MONOTONIC ms) → runs.
class Keeper {
 public:
  int start(const char** failed_call);
  int schedule(const std::shared_ptr<RunEnding>& run, int64_t due_ms);
  void unschedule(const RunEnding* run, int64_t due_ms);
  uint64_t pending();

 private:
  static void* main(void* self);
  void loop();
  void arm_locked();

  std::mutex mutex_;  // guards everything below
  bool started_ = false;
  int timer_fd_ = -1;
  int64_t armed_ms_ = -1;
  std::multimap<int64_t, std::shared_ptr<RunEnding>> due_;
};

Keeper& keeper() {
  static Keeper* instance = new Keeper();  // never destroyed: its thread outlives static teardown
  return *instance;
}

// A due time `delta_ms` from now, rounded up to the next whole millisecond
// (so no deadline comes early) and saturated (a timeout of years must not wrap).
int64_t due_after(int64_t delta_ms) {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t now = static_cast<int64_t>(ts.tv_sec) * 1000 + (ts.tv_nsec + 999999) / 1000000;
  return delta_ms >= INT64_MAX - now ? INT64_MAX : now + delta_ms;
}

int Keeper::start(const char** failed_call) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (started_) return 0;
  if (timer_fd_ < 0) {
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (fd < 0) {
      *failed_call = "timerfd_create";
      return -errno;
    }
    timer_fd_ = fd;
  }
  // Every signal blocked in the thread (it inherits the creator's mask while created).
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  int err = pthread_create(&thread, &attr, &Keeper::main, this);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (err != 0) {
    *failed_call = "pthread_create";
    return -err;
  }
  started_ = true;
  return 0;
}

void Keeper::arm_locked() {
  int64_t next = due_.empty() ? -1 : due_.begin()->first;
  if (next == armed_ms_) return;
  struct itimerspec spec {};
  if (next >= 0) {
    // 0 would disarm: a due time of 0 ms is in the past anyway.
    spec.it_value.tv_sec = next / 1000;
    spec.it_value.tv_nsec = (next % 1000) * 1000000 + (next == 0 ? 1 : 0);
  }
  timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
  armed_ms_ = next;
}

int Keeper::schedule(const std::shared_ptr<RunEnding>& run, int64_t due_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    due_.emplace(due_ms, run);
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  }
  arm_locked();
  return 0;
}

void Keeper::unschedule(const RunEnding* run, int64_t due_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto range = due_.equal_range(due_ms);
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second.get() == run) {
      due_.erase(it);
      break;
    }
  }
  arm_locked();
}

uint64_t Keeper::pending() {
  std::lock_guard<std::mutex> lock(mutex_);
  return due_.size();
}

void* Keeper::main(void* self) {
  static_cast<Keeper*>(self)->loop();
  return nullptr;
}

void Keeper::loop() {
  std::vector<std::shared_ptr<RunEnding>> fired;
  for (;;) {
    uint64_t expirations;
    // Blocks until the armed time; EINTR cannot happen (every signal is
    // blocked) and EAGAIN never (blocking fd). A re-arm wakes nobody: the
    // read simply returns at the new time.
    if (read(timer_fd_, &expirations, sizeof expirations) < 0 && errno != EINTR) continue;
    int64_t now = monotonic_ms();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (!due_.empty() && due_.begin()->first <= now) {
        try {
          fired.push_back(std::move(due_.begin()->second));
        } catch (const std::bad_alloc&) {
          break;  // the rest stay due and fire on the next pass
        }
        due_.erase(due_.begin());
      }
      armed_ms_ = -2;  // the timer has fired: arm again whatever comes next
      arm_locked();
    }
    // Outside the schedule's lock: a run takes its own lock and may schedule again.
    for (auto& run : fired) run->on_due(now);
    fired.clear();
  }
}

}  // namespace

int64_t monotonic_ms() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

double monotonic_ms_exact() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1000.0 + static_cast<double>(ts.tv_nsec) / 1e6;
}

uint64_t deadline_keeper_pending() { return keeper().pending(); }

int RunEnding::arm(const char** failed_call) {
  if (plan_.timeout_ms < 0) return 0;
  int err = keeper().start(failed_call);
  if (err < 0) return err;
  std::lock_guard<std::mutex> lock(mutex_);
  timeout_due_ = due_after(plan_.timeout_ms);
  err = keeper().schedule(shared_from_this(), timeout_due_);
  if (err < 0) {
    *failed_call = nullptr;
    timeout_due_ = -1;
  }
  return err;
}

EndingRecord RunEnding::begin_locked(bool by_deadline) {
  if (cancelled_ || record_.begun) return record_;
  record_.begun = true;
  record_.by_deadline = by_deadline;
  record_.leader_running = target_->begin(plan_.end_signal, plan_.group_signal_at_exit);
  if (!record_.leader_running) return record_;
  record_.at_ms = monotonic_ms_exact();
  look_for_exit_locked();
  if (plan_.final_signal == 0) return record_;
  final_due_ = due_after(plan_.grace_ms);
  // The keeper runs already when a timeout was armed; a run without one
  // starts it here. Should either fail, the escalation cannot wait: now.
  const char* ignored = nullptr;
  if (keeper().start(&ignored) < 0 || keeper().schedule(shared_from_this(), final_due_) < 0) {
    final_due_ = -1;
    final_sent_ = true;
    target_->escalate(plan_.final_signal);
  }
  return record_;
}

EndingRecord RunEnding::begin(bool by_deadline) {
  std::lock_guard<std::mutex> lock(mutex_);
  return begin_locked(by_deadline);
}

EndingRecord RunEnding::record() {
  std::lock_guard<std::mutex> lock(mutex_);
  return record_;
}

// The longest wait between two looks: the exit time is late by at most this.
constexpr int kExitLookMaxMs = 8;

// Schedules the next look for the signalled child's exit; a look that
// cannot be scheduled leaves the exit to the reap's own time.
void RunEnding::look_for_exit_locked() {
  if (exit_look_due_ >= 0 || record_.exited_at_ms > 0) return;
  exit_look_ms_ = exit_look_ms_ == 0 ? 1 : std::min(exit_look_ms_ * 2, kExitLookMaxMs);
  const char* ignored = nullptr;
  exit_look_due_ = due_after(exit_look_ms_);
  if (keeper().start(&ignored) < 0 || keeper().schedule(shared_from_this(), exit_look_due_) < 0) {
    exit_look_due_ = -1;
  }
}

void RunEnding::on_due(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (cancelled_) return;
  if (exit_look_due_ >= 0 && now_ms >= exit_look_due_) {
    exit_look_due_ = -1;
    if (target_->has_exited()) {
      record_.exited_at_ms = monotonic_ms_exact();
    } else {
      look_for_exit_locked();
    }
  }
  if (timeout_due_ >= 0 && now_ms >= timeout_due_) {
    timeout_due_ = -1;
    begin_locked(true);
  }
  if (final_due_ >= 0 && now_ms >= final_due_ && !final_sent_) {
    final_due_ = -1;
    final_sent_ = true;
    target_->escalate(plan_.final_signal);
  }
}

void RunEnding::cancel() {
  int64_t timeout_due;
  int64_t final_due;
  int64_t exit_look_due;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = true;
    timeout_due = timeout_due_;
    final_due = final_due_;
    exit_look_due = exit_look_due_;
    timeout_due_ = -1;
    final_due_ = -1;
    exit_look_due_ = -1;
  }
  if (timeout_due >= 0) keeper().unschedule(this, timeout_due);
  if (final_due >= 0) keeper().unschedule(this, final_due);
  if (exit_look_due >= 0) keeper().unschedule(this, exit_look_due);
}

}  // namespace exactspawn
