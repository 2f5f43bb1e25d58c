// orphan_reaper.h — reaps children whose watcher is gone (a worker thread or
// the host environment was torn down while they ran), so they never stay
// zombies of a process that lives on.
//
// One process-wide EventSet (event_set.h), started on first use,
// blocks in epoll_wait(2) on the handed-over pidfds (all signals blocked in
// it) and wait4(2)s each pid on its own thread when its pidfd turns
// readable, then closes the pidfd; a child not waitable yet (traced) is
// asked again after the back-off of reap.h. Never waits for "any child". The library is pinned
// (RTLD_NODELETE) once the thread exists, since Node unloads an addon with the worker that loaded
// it. See pidfd_open(2), epoll(7), wait4(2), dlopen(3).
#pragma once

#include <sys/types.h>

namespace exactspawn {

// Takes ownership of pidfd. Returns 0, or -errno when the hand-over failed
// (the caller still owns pidfd then).
int hand_to_orphan_reaper(pid_t pid, int pidfd);

}  // namespace exactspawn
