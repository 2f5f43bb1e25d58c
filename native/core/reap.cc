// reap.cc — see reap.h.
#include "reap.h"

#include <atomic>

namespace exactspawn {

namespace {

std::atomic<uint64_t> retries{0};

}  // namespace

int ReapBackoff::next_delay_ms() {
  delay_ms_ = delay_ms_ == 0 ? kFirstMs : delay_ms_ * 2;
  if (delay_ms_ > kLongestMs) delay_ms_ = kLongestMs;
  return delay_ms_;
}

int not_waitable_yet(ReapBackoff* backoff) {
  retries.fetch_add(1, std::memory_order_relaxed);
  return backoff->next_delay_ms();
}

int reap_ready_child(pid_t pid, ChildExit* out, ReapBackoff* backoff, int* retry_ms) {
  int r = reap_child(pid, out);
  if (r == 0) *retry_ms = not_waitable_yet(backoff);
  return r;
}

uint64_t reap_retries() { return retries.load(std::memory_order_relaxed); }

}  // namespace exactspawn
