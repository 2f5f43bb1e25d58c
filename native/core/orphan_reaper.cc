// orphan_reaper.cc — see orphan_reaper.h.
#include "orphan_reaper.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "event_set.h"
#include "reap.h"

namespace exactspawn {

namespace {

// Never destroyed: its thread runs for the rest of the process.
EventSet* reaper = nullptr;
int reaper_error = 0;
std::once_flag reaper_once;
// Touched on the reaper's thread only: the back-off of each child that
// reported while it was not waitable yet (traced).
std::map<uint64_t, ReapBackoff>* backoffs = nullptr;

pid_t pid_of(uint64_t token) { return static_cast<pid_t>(token >> 32); }
int pidfd_of(uint64_t token) { return static_cast<int>(token & 0xffffffffu); }

// On the reaper's thread: reap every child that reported. False when the
// batch could not be taken (no memory): the set reports it again.
bool reap_ready(void*) {
  std::vector<uint64_t> ready;
  try {
    reaper->take(&ready);
  } catch (const std::bad_alloc&) {
    return false;  // left queued for the next report
  }
  for (uint64_t token : ready) {
    ChildExit exit;
    int retry_ms = 0;
    ReapBackoff fresh;
    auto found = backoffs->find(token);
    ReapBackoff* backoff = found != backoffs->end() ? &found->second : &fresh;
    int r = reap_ready_child(pid_of(token), &exit, backoff, &retry_ms);
    if (r == 0) {
      try {
        if (found == backoffs->end()) backoffs->emplace(token, fresh);
      } catch (const std::bad_alloc&) {
        // the next attempt starts the back-off over
      }
      if (reaper->retry_after(token, retry_ms) < 0) reaper->rearm(pidfd_of(token), token);
      continue;
    }
    if (found != backoffs->end()) backoffs->erase(found);
    reaper->remove(pidfd_of(token));
    close(pidfd_of(token));
  }
  return true;
}

// The thread runs this library's code for the rest of the process, but Node
// dlclose()s an addon when the worker that loaded it exits: pin it first.
void pin_library() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&reap_ready), &info) != 0 && info.dli_fname != nullptr) {
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
}

void start_reaper() {
  pin_library();
  EventSet* thread = new (std::nothrow) EventSet();
  backoffs = new (std::nothrow) std::map<uint64_t, ReapBackoff>();
  if (thread == nullptr || backoffs == nullptr) {
    reaper_error = ENOMEM;
    return;
  }
  reaper = thread;
  int err = reaper->start_thread(reap_ready, nullptr);
  if (err < 0) reaper_error = -err;
}

}  // namespace

int hand_to_orphan_reaper(pid_t pid, int pidfd) {
  std::call_once(reaper_once, start_reaper);
  if (reaper_error != 0) return -reaper_error;
  uint64_t token =
      (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(pidfd);
  return reaper->add(pidfd, token);
}

}  // namespace exactspawn
