// orphan_reaper.cc — see orphan_reaper.h.
#include "orphan_reaper.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <mutex>

namespace exactspawn {

namespace {

int reaper_epoll = -1;
int reaper_error = 0;
std::once_flag reaper_once;

void* reaper_main(void*) {
  epoll_event events[16];
  for (;;) {
    int n = epoll_wait(reaper_epoll, events, 16, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return nullptr;
    }
    for (int i = 0; i < n; ++i) {
      uint64_t data = events[i].data.u64;
      pid_t pid = static_cast<pid_t>(data >> 32);
      int pidfd = static_cast<int>(data & 0xffffffffu);
      int status = 0;
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == 0) continue;  // not yet a zombie: level-triggered, asked again
      epoll_ctl(reaper_epoll, EPOLL_CTL_DEL, pidfd, nullptr);
      close(pidfd);
    }
  }
}

// The thread runs this library's code for the rest of the process, but Node
// dlclose()s an addon when the worker that loaded it exits: pin it first.
void pin_library() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&reaper_main), &info) != 0 && info.dli_fname != nullptr) {
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
}

void start_reaper() {
  pin_library();
  reaper_epoll = epoll_create1(EPOLL_CLOEXEC);
  if (reaper_epoll < 0) {
    reaper_error = errno;
    return;
  }
  // The thread must never take a process-directed signal meant for Node.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_t thread;
  int err = pthread_create(&thread, &attr, reaper_main, nullptr);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (err != 0) {
    reaper_error = err;
    close(reaper_epoll);
    reaper_epoll = -1;
  }
}

}  // namespace

int hand_to_orphan_reaper(pid_t pid, int pidfd) {
  std::call_once(reaper_once, start_reaper);
  if (reaper_epoll < 0) return -reaper_error;
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 =
      (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(pidfd);
  return epoll_ctl(reaper_epoll, EPOLL_CTL_ADD, pidfd, &event) < 0 ? -errno : 0;
}

}  // namespace exactspawn
