// tree_watch.cc — the end of a contained step (core/cgroup.h) on the exit
// watch: once the leader is reaped, a cgroup that still holds a process is
// killed whole (cgroup.kill), its cgroup.events is registered with the environment's event set
// (EPOLLPRI, the same epoll as the pidfds: watch_events.cc) and read at each
// report until "populated 0"; then the tree's usage is read (cpu.stat,
// memory.peak, memory.events), the cgroup removed and the exit queued
// (QueueCallbacks: collect, then call back; nothing here calls JavaScript).
// No polling, no thread: the kernel reports the change. (At a deadline the
// keeper kills the same cgroup from its own thread: TreeTarget,
// core/kill_target.h.)
#include "watch_state.h"

namespace exactspawn {

namespace {

// The tree is gone (or can no longer be watched): read, remove, deliver.
void FinishTree(Watch* w) {
  UnwatchFd(w->state, w->cgroup.events_fd, &w->cgroup_token);
  read_cgroup_usage(w->cgroup.path, &w->usage);
  w->has_usage = true;
  if (w->tree != nullptr) w->tree->removed();
  // A cgroup that cannot be removed now (a process that entered a cgroup of
  // its own below it, still dying) is removed with the host's sub-tree by
  // the watchdog when the host ends.
  remove_cgroup(w->cgroup.path);
  close_step_cgroup(&w->cgroup);
  w->cgroup.path.clear();
  w->tree_pending = false;
  UpdateHold(w);
  QueueCallbacks(w);
}

}  // namespace

void EndTree(Watch* w) {
  w->tree_pending = true;
  UpdateHold(w);
  // The common end: the leader was the tree's last process. Nothing to kill
  // or to wait for (a read of cgroup.events, not a kill and two epoll calls).
  if (cgroup_populated(w->cgroup.events_fd) == 0) {
    FinishTree(w);
    return;
  }
  kill_cgroup(w->cgroup.path);
  // Registered before the first read: a change after that read raises EPOLLPRI.
  if (WatchTreeFd(w, w->cgroup.events_fd, &w->cgroup_token) != 0) {
    // No registration (no memory): wait here, for a moment at most, for
    // processes SIGKILLed a moment ago.
    wait_cgroup_empty(w->cgroup.events_fd, 1000);
    FinishTree(w);
    return;
  }
  OnTreeReady(w);
}

void OnTreeReady(Watch* w) {
  if (!w->tree_pending || w->cgroup.events_fd < 0) return;
  int populated = cgroup_populated(w->cgroup.events_fd);  // consumes the EPOLLPRI
  if (populated > 0) {
    RearmTreeFd(w->state, w->cgroup.events_fd, w->cgroup_token);
    return;
  }
  FinishTree(w);
}

void TearDownTree(Watch* w) {
  if (w->cgroup.path.empty()) return;
  UnwatchFd(w->state, w->cgroup.events_fd, &w->cgroup_token);
  w->tree_pending = false;
  if (w->tree != nullptr) w->tree->removed();
  end_step_cgroup(&w->cgroup, 1000, nullptr);
  close_step_cgroup(&w->cgroup);
  w->cgroup.path.clear();
}

}  // namespace exactspawn
